package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
)

const module = "github.com/kernbench/kernbench"

// A layer is a row of the layer table: the packages it holds, by import
// path within the module ("x" is that package, "x/..." every package
// below x; the most specific pattern wins), and the layers they may
// import from.
type layer struct {
	name    string
	pkgs    []string
	imports []int
}

// table is docs/architecture.md's layer table, bottom up. A package
// imports only from its own layer and the ones its row lists.
var table = []layer{
	{"leaves", []string{"quant", "simt", "sample", "model/kvcache", "internal/shareddata", "internal/require", "internal/layers", "internal/cudatools", "simt/roofline", "internal/machineid", "internal/procgroup", "internal/shard", "internal/dynlib"}, nil},
	{"vocabulary", []string{"ops"}, []int{0}},
	{"backends and oracle", []string{"ops/...", "reference"}, []int{0, 1}},
	{"graphs, files and ops' definitions", []string{"graphs", "graphs/...", "gguf", "tokenizer", "harness"}, []int{0, 1, 2}},
	{"models and tools", []string{"model", "quantize", "imatrix", "bench", "bench/...", "internal/testmodel"}, []int{0, 1, 2, 3}},
	{"the commands' shared code", []string{"internal/cli"}, []int{0, 1, 2, 3, 4}},
	{"commands", []string{"cmd/..."}, []int{0, 1, 2, 3, 4, 5}},
}

// layerOf returns the index of the layer that holds pkg (a path within
// the module), or -1.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range table {
		for _, p := range l.pkgs {
			n := -1
			if p == pkg {
				n = 2 * len(p) // an exact name beats a pattern of any length
			} else if base, ok := strings.CutSuffix(p, "/..."); ok && strings.HasPrefix(pkg, base+"/") {
				n = len(base)
			}
			if n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

// allowed reports whether a package of layer from may import one of
// layer to.
func allowed(from, to int) bool {
	return from == to || slices.Contains(table[from].imports, to)
}

// violations returns the imports that break the table, the packages in no
// layer, for a module's import graph (package -> its imports, paths
// within the module).
func violations(graph map[string][]string) []string {
	var bad []string
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		from := layerOf(pkg)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add it to the table in internal/layers and docs/architecture.md", pkg))
			continue
		}
		for _, imp := range graph[pkg] {
			if to := layerOf(imp); to >= 0 && !allowed(from, to) {
				bad = append(bad, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s)", pkg, from, table[from].name, imp, to, table[to].name))
			}
		}
	}
	return bad
}

// root returns the module's folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod two folders up: %v", err)
	}
	return dir
}

// goList returns the module's packages and their imports within the
// module, from go list -deps -json ./... for the target env names
// (GOOS=..., GOARCH=...), so files built only elsewhere count too.
func goList(t *testing.T, env ...string) map[string][]string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		require.Skip(t, "no go tool to list the packages: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-json=ImportPath,Imports,Module", "./...")
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", env, err, stderr.Bytes())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		rel, ok := within(p.ImportPath)
		if !ok || p.Module == nil || p.Module.Path != module {
			continue
		}
		var imps []string
		for _, imp := range p.Imports {
			if r, ok := within(imp); ok {
				imps = append(imps, r)
			}
		}
		graph[rel] = imps
	}
	if len(graph) < 10 {
		t.Fatalf("go list found %d of the module's packages", len(graph))
	}
	return graph
}

// within returns an import path relative to the module.
func within(importPath string) (string, bool) {
	return strings.CutPrefix(importPath, module+"/")
}

// TestLayers fails on any import from a lower layer to a higher one, and
// on a package in no layer, for the linux and the darwin builds.
func TestLayers(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}} {
		for _, v := range violations(goList(t, env...)) {
			t.Errorf("%v: %s", env, v)
		}
	}
}

// TestViolationsFound plants violations in a small graph: an upward
// import and a package in no layer are reported, a downward one is not.
func TestViolationsFound(t *testing.T) {
	graph := map[string][]string{
		"graphs":         {"ops", "model"},
		"model":          {"graphs", "ops/cpu"},
		"ops/cpu":        {"ops", "ops/registry", "quant"},
		"cmd/run":        {"model", "internal/cli"},
		"somewhere/else": {"quant"},
	}
	got := violations(graph)
	want := []string{
		"graphs (layer 3, graphs, files and ops' definitions) imports model (layer 4, models and tools)",
		"somewhere/else is in no layer: add it to the table in internal/layers and docs/architecture.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for pkg, want := range map[string]int{"ops": 1, "ops/cpu/internal/dot": 2, "model/kvcache": 0, "model": 4, "graphs/dot": 3, "cmd/cmdtest": 6, "modelx": -1} {
		if got := layerOf(pkg); got != want {
			t.Errorf("layerOf(%s) = %d, want %d", pkg, got, want)
		}
	}
}

// doc returns docs/architecture.md's "Package map" section.
func doc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(string(b), "\n## Package map\n")
	if !ok {
		t.Fatal("docs/architecture.md has no \"## Package map\" section")
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

// tableRows returns the cells of the rows of the markdown table whose
// header row starts with header.
func tableRows(t *testing.T, text, header string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "| ---"):
		case in && strings.HasPrefix(line, "|"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("the package map has no table headed %q", header)
	}
	return rows
}

// names returns the `quoted` names of a cell.
func names(cell string) []string {
	var out []string
	for i, part := range strings.Split(cell, "`") {
		if i%2 == 1 {
			out = append(out, part)
		}
	}
	return out
}

// TestDocLayerTable checks the document's layer table is this test's.
func TestDocLayerTable(t *testing.T) {
	rows := tableRows(t, doc(t), "| layer | packages | imports from |")
	if len(rows) != len(table) {
		t.Fatalf("the document's layer table has %d rows, the test's %d", len(rows), len(table))
	}
	for i, row := range rows {
		l := table[len(table)-1-i] // the document lists the top first
		want := []string{fmt.Sprintf("%d %s", len(table)-1-i, l.name), "`" + strings.Join(l.pkgs, "`, `") + "`", importsCell(l.imports)}
		if !slices.Equal(row, want) {
			t.Errorf("the document's row\n%q\nwant\n%q", row, want)
		}
	}
}

// importsCell is how the document writes a layer's allowed imports.
func importsCell(imports []int) string {
	if len(imports) == 0 {
		return "its own layer only"
	}
	var s []string
	for _, i := range imports {
		s = append(s, strconv.Itoa(i))
	}
	return "its own and " + strings.Join(s, ", ")
}

// TestDocPackageTable checks the document's package table against go
// list: every package is named (a name may be a pattern such as cmd/*),
// and every name is a package.
func TestDocPackageTable(t *testing.T) {
	graph := goList(t)
	var named []string
	for _, row := range tableRows(t, doc(t), "| package | start reading at |") {
		named = append(named, names(row[0])...)
	}
	found := map[string]bool{}
	for _, n := range named {
		matched := false
		for pkg := range graph {
			if ok, err := path.Match(n, pkg); err != nil {
				t.Fatalf("bad name %q: %v", n, err)
			} else if ok {
				found[pkg], matched = true, true
			}
		}
		if !matched {
			t.Errorf("the package table names %s, which is no package", n)
		}
	}
	for pkg := range graph {
		if !found[pkg] {
			t.Errorf("%s is missing from the package table", pkg)
		}
	}
}
