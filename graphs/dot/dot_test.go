package dot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/dot"
	"github.com/kernbench/kernbench/graphs/graphstest"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

func TestParseLayers(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    dot.LayerRange
		wantErr string
	}{
		{"3", dot.LayerRange{3, 3}, ""},
		{"0-4", dot.LayerRange{0, 4}, ""},
		{" 2-2 ", dot.LayerRange{2, 2}, ""},
		{"", dot.LayerRange{}, "not a number"},
		{"x", dot.LayerRange{}, "not a number"},
		{"4-2", dot.LayerRange{}, "backwards"},
		{"1-", dot.LayerRange{}, "not a number"},
		{"-1", dot.LayerRange{}, "not a number"},
		{"1-2-3", dot.LayerRange{}, "not a number"},
		{"99999999999999999999", dot.LayerRange{}, "not a number"},
	} {
		got, err := dot.ParseLayers(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseLayers(%q) error %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("ParseLayers(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestWriteSmallGraph(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	x, _ := ops.NewTensor(`in "x"`, quant.F32, 4, 2)
	w, _ := ops.NewTensor("blk.0.w.weight", quant.F32, 4)
	for _, l := range []*ops.Tensor{x, w} {
		if err := ops.AllocTensor(b, l, 0); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := ops.Mul(x, w)
	m.SetName("mul")
	v, _ := ops.Reshape(m, 8)
	s, _ := ops.Silu(v)
	s.SetName(`back\slash`)
	g, err := graphs.New(s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dot.Write(&buf, g, dot.Options{}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	classes, edges := graphstest.ParseDot(t, text)
	want := map[int]string{0: "leaf", 1: "leaf", 2: "node", 3: "view", 4: "node"}
	for i, c := range want {
		if classes[i] != c {
			t.Errorf("node %d is %q, want %q", i, classes[i], c)
		}
	}
	if strings.Join(edges, " ") != "0->2 1->2 2->3 3->4" {
		t.Errorf("edges %v", edges)
	}
	for _, s := range []string{`label="in \"x\"\nf32 [4 2]"`, `label="back\\slash\nSILU(f32)\nf32 [8]"`, `fillcolor="#dae8fc"`, `fillcolor="#fff2cc"`} {
		if !strings.Contains(text, s) {
			t.Errorf("dump lacks %s:\n%s", s, text)
		}
	}
	// After the graph ran, nodes name their backend.
	if err := g.Compute(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := dot.Write(&buf, g, dot.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `\ncpu"`) {
		t.Errorf("no backend after the run:\n%s", buf.String())
	}
	renderCheck(t, buf.Bytes())
}

// renderCheck renders a dump to SVG and PNG when dot is installed.
func renderCheck(t *testing.T, text []byte) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "g.dot")
	if err := os.WriteFile(in, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dot.Render(context.Background(), in, filepath.Join(dir, "g.txt")); err == nil || !strings.Contains(err.Error(), ".svg") {
		t.Errorf("render to .txt: %v", err)
	}
	if !dot.Available() {
		err := dot.Render(context.Background(), in, filepath.Join(dir, "g.svg"))
		if !errors.Is(err, dot.ErrNoDot) {
			t.Errorf("render without dot: %v", err)
		}
		t.Skip("the dot program is not installed: rendering not checked")
	}
	for _, ext := range []string{"svg", "png"} {
		out := filepath.Join(dir, "g."+ext)
		if err := dot.Render(context.Background(), in, out); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if ext == "svg" && !bytes.Contains(got, []byte("<svg")) || ext == "png" && !bytes.HasPrefix(got, []byte("\x89PNG")) {
			t.Errorf("%s output starts %q", ext, got[:min(len(got), 16)])
		}
	}
	if err := os.WriteFile(in, []byte("digraph {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dot.Render(context.Background(), in, filepath.Join(dir, "bad.svg")); err == nil {
		t.Error("rendering a broken file succeeded")
	}
}

func FuzzParseLayers(f *testing.F) {
	for _, s := range []string{"0", "3", "1-4", "4-1", "", "-", "1-", "-1", " 2 ", "1--2", "0x10", "+3", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lr, err := dot.ParseLayers(s)
		if err != nil {
			return
		}
		if lr.From < 0 || lr.To < lr.From || lr.To > 1<<20 {
			t.Fatalf("ParseLayers(%q) = %v", s, lr)
		}
		again, err := dot.ParseLayers(strconv.Itoa(lr.From) + "-" + strconv.Itoa(lr.To))
		if err != nil || again != lr {
			t.Fatalf("round trip of %v: %v, %v", lr, again, err)
		}
	})
}
