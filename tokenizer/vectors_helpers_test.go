package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	shared "github.com/kernbench/kernbench/internal/shareddata"
)

// testdataDir finds shared/testdata by walking up from the working
// directory (it sits beside the repository), or skips the test.
func testdataDir(t testing.TB) string {
	t.Helper()
	return shared.Dir(t)
}

// testdataFile returns the path of a file in shared/testdata, or skips
// (fails under KERNBENCH_STRICT=1).
func testdataFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(testdataDir(t), name)
	if _, err := os.Stat(p); err != nil {
		require.Skip(t, "%s not available: %v", name, err)
	}
	return p
}

// vocabVector is one test string and the ids llama.cpp produces for it.
type vocabVector struct {
	text string
	want []int32
}

// vectorSep separates the strings of a .inp file (llama.cpp's
// tests/test-tokenizer-0): each string is followed by it, so the file ends
// with it and a string may be empty or hold newlines of its own.
const vectorSep = "\n__ggml_vocab_test__\n"

// parseVectors reads llama.cpp's tokenizer test format: .inp holds strings
// each followed by vectorSep; .out holds one line per string with its ids
// separated by spaces (with a leading space, and no BOS).
func parseVectors(inp, out string) ([]vocabVector, error) {
	var texts []string
	for pos := 0; pos < len(inp); {
		i := strings.Index(inp[pos:], vectorSep)
		if i < 0 {
			texts = append(texts, inp[pos:])
			break
		}
		texts = append(texts, inp[pos:pos+i])
		pos += i + len(vectorSep)
	}
	lines := strings.Split(out, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if len(texts) != len(lines) {
		return nil, fmt.Errorf("%d input strings but %d output lines", len(texts), len(lines))
	}
	vs := make([]vocabVector, len(texts))
	for i, line := range lines {
		vs[i].text = texts[i]
		vs[i].want = []int32{}
		for _, f := range strings.Fields(line) {
			id, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("output line %d: %v", i+1, err)
			}
			vs[i].want = append(vs[i].want, int32(id))
		}
	}
	return vs, nil
}

// loadVectors reads shared/testdata/<vocab>.inp and .out, or skips.
func loadVectors(t *testing.T, vocab string) []vocabVector {
	t.Helper()
	inp, err := os.ReadFile(testdataFile(t, vocab+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(testdataFile(t, vocab+".out"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := parseVectors(string(inp), string(out))
	if err != nil {
		t.Fatalf("%s: %v", vocab, err)
	}
	return vs
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]Tokenizer{}
)

// loadTokenizer loads shared/testdata/<name> once per test binary, or
// skips.
func loadTokenizer(t testing.TB, name string) Tokenizer {
	t.Helper()
	path := testdataFile(t, name)
	tokMu.Lock()
	defer tokMu.Unlock()
	if tok, ok := tokCache[path]; ok {
		return tok
	}
	tok, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	tokCache[path] = tok
	return tok
}

// readTestdata reads a file of shared/testdata, or skips.
func readTestdata(t testing.TB, name string) (string, error) {
	b, err := os.ReadFile(testdataFile(t, name))
	return string(b), err
}
