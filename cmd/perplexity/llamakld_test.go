package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLlamaRecordKnown checks one record of llama-perplexity's format
// worked out by hand: logits 2, 1, 0 span 2 nats (above the 16-nat
// floor), so scale = 2/65535, min_lp = 0 - 2 - log(1 + e^-1 + e^-2), and
// the codes are 65535, round(65535/2) = 32768 (ties to even) and 0.
func TestLlamaRecordKnown(t *testing.T) {
	var r kldRecord
	llamaLogProbs(&r, []float32{2, 1, 0})
	buf := make([]byte, 2*llamaRecordLen(3))
	var out bytes.Buffer
	if err := writeLlamaRecord(&out, buf, &r); err != nil {
		t.Fatal(err)
	}
	lse := math.Log(1 + math.Exp(-1) + math.Exp(-2))
	want := make([]byte, 16)
	binary.LittleEndian.PutUint32(want[0:], math.Float32bits(float32(2)/65535))
	binary.LittleEndian.PutUint32(want[4:], math.Float32bits(float32(-2)-float32(lse)))
	binary.LittleEndian.PutUint16(want[8:], 65535)
	binary.LittleEndian.PutUint16(want[10:], 32768)
	// want[12:14] is token 2's code 0, want[14:16] the padding.
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("record % x, want % x", out.Bytes(), want)
	}
	var back kldRecord
	if err := readLlamaRecord(bytes.NewReader(want), buf, 3, 1, &back); err != nil {
		t.Fatal(err)
	}
	if back.Argmax != 0 || math.Abs(float64(back.TargetLP)-(1-2-lse)) > 1e-4 {
		t.Errorf("argmax %d, target lp %v; want 0 and %v", back.Argmax, back.TargetLP, 1-2-lse)
	}
}

// TestLlamaLogProbs checks records of random logits through the file
// encoding: log-probabilities within half a step of the exact ones for
// tokens in the 16-nat range (at min_lp below it), the target's and the
// top token, and a KL divergence of a distribution with itself no
// larger than llama-perplexity's quantization noise.
func TestLlamaLogProbs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name   string
		logits []float32
	}{
		{"narrow", randomLogits(rng, 512, 4)},
		{"wide", randomLogits(rng, 511, 200)}, // odd: a padding code
		{"flat", make([]float32, 16)},
	} {
		l := tc.logits
		lse, am := logSumExp(l)
		var r kldRecord
		llamaLogProbs(&r, l)
		buf := make([]byte, 2*llamaRecordLen(len(l)))
		var out bytes.Buffer
		if err := writeLlamaRecord(&out, buf, &r); err != nil {
			t.Fatal(err)
		}
		target := len(l) / 3
		var back kldRecord
		if err := readLlamaRecord(&out, buf, len(l), target, &back); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		maxLP := float64(l[am]) - lse
		step := float64(back.Scale)
		for i, v := range l {
			lp := float64(v) - lse
			got, _ := back.LogProb(i)
			if lp < maxLP-16 {
				if got != float64(back.Lo) {
					t.Errorf("%s: token %d below the range reads %v, want min_lp %v", tc.name, i, got, back.Lo)
				}
				continue
			}
			if math.Abs(got-lp) > step/2+1e-5 {
				t.Errorf("%s: token %d: %v, want %v within %v", tc.name, i, got, lp, step/2)
			}
		}
		if tc.name != "flat" && int(back.Argmax) != am {
			t.Errorf("%s: top token %d, want %d", tc.name, back.Argmax, am)
		}
		if k := klDivergence(&back, l, lse); math.Abs(k) > 1e-3 {
			t.Errorf("%s: KL of a distribution with itself %v", tc.name, k)
		}
	}
}

// TestLlamaHeaderErrors checks that llama-perplexity headers with bad
// fields or a size that does not match are refused, naming the field.
func TestLlamaHeaderErrors(t *testing.T) {
	good := kldHeader{NVocab: 5, NCtx: 8, NChunks: 2, First: 4, Llama: true}
	enc := func(nctx, nvocab, nchunk int32) []byte {
		var b bytes.Buffer
		writeLlamaHeader(&b, kldHeader{NCtx: int(nctx), NVocab: int(nvocab), NChunks: int(nchunk)})
		return b.Bytes()
	}
	size, err := good.fileSize()
	if err != nil {
		t.Fatal(err)
	}
	// 20-byte header, 16 tokens, 2 chunks of 3 records of 2*(6+4) bytes.
	if size != 20+4*16+2*3*20 {
		t.Fatalf("file size %d", size)
	}
	h, err := parseLlamaHeader(enc(8, 5, 2), size)
	if err != nil || h != good {
		t.Fatalf("good header: %+v, %v", h, err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		size int64
		msg  string
	}{
		{"short", []byte(llamaMagic + "\x08\x00"), 10, "shorter than"},
		{"n_ctx", enc(2, 5, 2), size, "n_ctx 2"},
		{"negative n_ctx", enc(-8, 5, 2), size, "n_ctx -8"},
		{"n_vocab", enc(8, 1, 2), size, "n_vocab 1"},
		{"n_chunk", enc(8, 5, 0), size, "n_chunk is 0"},
		{"truncated", enc(8, 5, 2), size - 1, "truncated or corrupt"},
		{"huge", enc(1<<24, 1<<24, 1<<30), 100, "overflow"},
	} {
		if _, err := parseLlamaHeader(tc.b, tc.size); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.msg)
		}
	}
}

// TestLlamaRecordErrors checks that corrupt records are refused.
func TestLlamaRecordErrors(t *testing.T) {
	var r kldRecord
	llamaLogProbs(&r, []float32{3, 1, -2, 0})
	buf := make([]byte, 2*llamaRecordLen(4))
	var good bytes.Buffer
	writeLlamaRecord(&good, buf, &r)
	for _, tc := range []struct {
		name string
		off  int
		b    []byte
		msg  string
	}{
		{"NaN scale", 0, []byte{0, 0, 0xc0, 0x7f}, "bad scale"},
		{"negative scale", 3, []byte{0x80}, "bad scale"},
		{"positive min", 7, []byte{0x00}, "bad scale"},
		{"huge scale", 0, []byte{0, 0, 0x80, 0x3f}, "above 0"},
	} {
		b := append([]byte(nil), good.Bytes()...)
		copy(b[tc.off:], tc.b)
		var back kldRecord
		if err := readLlamaRecord(bytes.NewReader(b), buf, 4, 0, &back); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.msg)
		}
	}
	var back kldRecord
	if err := readLlamaRecord(bytes.NewReader(good.Bytes()[:10]), buf, 4, 0, &back); err == nil {
		t.Error("a short record reads")
	}
}

// TestKLDLlamaFormat writes a base file in llama-perplexity's format and
// reads it back: its size and header are llama-perplexity's, its tokens
// are the text's (no BOS put in at the chunks' starts), and the model
// compared with itself gets a KL divergence of quantization noise only,
// the same top token everywhere and its own PPL within the 16-bit codes'
// resolution. Corrupt copies are refused with the reason.
func TestKLDLlamaFormat(t *testing.T) {
	mp := testdata(t, "stories260K.gguf")
	text, _ := wikiText(t, 1200)
	dir := t.TempDir()
	base := filepath.Join(dir, "base.logits")
	code, out, errs := runCmd("-m", mp, "-f", text, "-c", "64", "--chunks", "4", "-t", "2", "-kld-base", base, "-kld-format", "llama")
	if code != 0 {
		t.Fatalf("-kld-base: exit %d: %s", code, errs)
	}
	_, basePPL, _ := parsePPL(t, out)
	raw, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// Header, 4*64 tokens, 4*31 records of 2*(512+4) bytes.
	if want := 20 + 4*4*64 + 4*31*2*(512+4); len(raw) != want {
		t.Fatalf("file is %d bytes, want %d", len(raw), want)
	}
	le := binary.LittleEndian
	if string(raw[:8]) != "_logits_" || le.Uint32(raw[8:]) != 64 || le.Uint32(raw[12:]) != 512 || le.Uint32(raw[16:]) != 4 {
		t.Fatalf("header % x", raw[:20])
	}
	// Chunk 0 starts with BOS (the tokenizer's), chunk 1 with a text token.
	if t0, t1 := le.Uint32(raw[20:]), le.Uint32(raw[20+4*64:]); t0 != 1 || t1 == 1 {
		t.Errorf("chunk starts %d, %d: want BOS (1) and the text's token", t0, t1)
	}

	code, out, errs = runCmd("-m", mp, "-kld", base, "-f", text, "-t", "2")
	if code != 0 {
		t.Fatalf("-kld: exit %d: %s", code, errs)
	}
	// llama-perplexity's own codes leave about 5e-5 nats per position.
	if k := field(t, meanKLDRe, out); math.Abs(k) > 3e-4 {
		t.Errorf("mean KLD of a model with itself %v, want about 0", k)
	}
	if p := field(t, sameTopRe, out); p != 100 {
		t.Errorf("same top p %v%%, want 100%%", p)
	}
	// The target's log-probability is read from its code: within half a
	// step (16/65535/2 nats) of the exact one.
	if b := field(t, pplBaseRe, out); relDiff(b, basePPL) > 2e-4 {
		t.Errorf("PPL(base) %v, the base run's %v", b, basePPL)
	}

	write, mutate := fileWriter(t, dir), mutator(raw)
	for _, tc := range []struct {
		name, file, msg string
	}{
		{"truncated", write("trunc.logits", raw[:len(raw)-1]), "truncated or corrupt"},
		{"n_vocab", write("vocab.logits", mutate(12, 0, 1)), "(n_ctx 64, n_vocab 256, n_chunk 4) implies"},
		{"token", write("tok.logits", mutate(24, 0xff, 0xff, 0, 0)), "outside the vocabulary"},
		{"record", write("rec.logits", mutate(20+4*4*64, 0, 0, 0xc0, 0x7f)), "chunk 1, position 32: record has a bad scale"},
	} {
		code, _, errs := runCmd("-m", mp, "-kld", tc.file, "-t", "1")
		if code != 1 || !strings.Contains(errs, tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want %q", tc.name, code, errs, tc.msg)
		}
	}
	if code, _, errs := runCmd("-m", mp, "-kld", base, "-kld-format", "llama"); code != 2 || !strings.Contains(errs, "only -kld-base writes") {
		t.Errorf("-kld-format with -kld: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd("-m", mp, "-f", text, "-kld-base", base+"2", "-kld-format", "gguf"); code != 2 || !strings.Contains(errs, "want kernbench or llama") {
		t.Errorf("-kld-format gguf: exit %d, stderr %q", code, errs)
	}
}

// TestLlamaPerplexityInterop runs llama-perplexity itself (the program
// $KERNBENCH_LLAMA_PERPLEXITY names; skipped without it) on stories260K:
// -kld reads the base file llama-perplexity --kl-divergence-base writes,
// and llama-perplexity --kl-divergence reads the one -kld-base
// -kld-format llama writes. The two implementations' logits differ only
// by float rounding, so the KL divergence either way is noise (about
// 5e-6 nats), and the two files' headers and tokens are the same bytes.
func TestLlamaPerplexityInterop(t *testing.T) {
	prog := os.Getenv("KERNBENCH_LLAMA_PERPLEXITY")
	if prog == "" {
		t.Skip("KERNBENCH_LLAMA_PERPLEXITY (the path of llama.cpp's llama-perplexity) is not set")
	}
	mp := testdata(t, "stories260K.gguf")
	text, _ := wikiText(t, 1200)
	dir := t.TempDir()
	theirs, ours := filepath.Join(dir, "llama.logits"), filepath.Join(dir, "ours.logits")
	llama := func(args ...string) string {
		t.Helper()
		args = append([]string{"-m", mp, "-c", "64", "-b", "64", "-t", "1"}, args...)
		out, err := exec.Command(prog, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("llama-perplexity %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	llama("-f", text, "--chunks", "4", "--kl-divergence-base", theirs)
	if code, _, errs := runCmd("-m", mp, "-f", text, "-c", "64", "--chunks", "4", "-t", "2", "-kld-base", ours, "-kld-format", "llama"); code != 0 {
		t.Fatalf("-kld-base: exit %d: %s", code, errs)
	}
	a, err := os.ReadFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if n := 20 + 4*4*64; len(a) != len(b) || !bytes.Equal(a[:n], b[:n]) {
		t.Errorf("the files differ in size (%d, %d) or in their header and tokens", len(a), len(b))
	}

	code, out, errs := runCmd("-m", mp, "-kld", theirs, "-f", text, "-t", "2")
	if code != 0 {
		t.Fatalf("-kld of llama-perplexity's file: exit %d: %s", code, errs)
	}
	if k := field(t, meanKLDRe, out); math.Abs(k) > 1e-4 {
		t.Errorf("-kld of llama-perplexity's file: mean KLD %v", k)
	}
	if p := field(t, sameTopRe, out); p < 95 {
		t.Errorf("-kld of llama-perplexity's file: same top %v%%", p)
	}
	// llama-perplexity's log is written by a thread of its own, and its
	// last lines are often lost when the program exits (about half the
	// runs here end after the third chunk's line, with status 0): a run
	// without the summary is run again, up to ten times.
	for try := range 10 {
		out = llama("--kl-divergence-base", ours, "--kl-divergence")
		if meanKLDRe.MatchString(out) && sameTopRe.MatchString(out) {
			break
		}
		t.Logf("llama-perplexity run %d printed no summary", try+1)
	}
	if k := field(t, meanKLDRe, out); math.Abs(k) > 1e-4 {
		t.Errorf("llama-perplexity --kl-divergence of our file: mean KLD %v", k)
	}
	if p := field(t, sameTopRe, out); p < 95 {
		t.Errorf("llama-perplexity --kl-divergence of our file: same top %v%%", p)
	}
}
