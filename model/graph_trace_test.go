package model_test

// The tests of graphs/dot and graphs/timing on a real model's graph: they
// live here, above graphs, so that graphs and its tests do not import model.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kernbench/kernbench/graphs/dot"
	"github.com/kernbench/kernbench/graphs/graphstest"
	"github.com/kernbench/kernbench/graphs/timing"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// TestLayerFilter cuts stories260K's 5-layer graph to one layer: the dump
// keeps exactly that layer's nodes, draws the nodes feeding it as
// boundary, and every edge ends at a kept node.
func TestLayerFilter(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	r := prompt(t, "stories260K.gguf", "Once upon a time", b, nil)
	g := r.Context.LastGraph()
	var all bytes.Buffer
	if err := dot.Write(&all, g, dot.Options{Records: r.Records}); err != nil {
		t.Fatal(err)
	}
	allClasses, _ := graphstest.ParseDot(t, all.String())
	if len(allClasses) != g.Len() {
		t.Fatalf("unfiltered dump has %d nodes, the graph %d", len(allClasses), g.Len())
	}
	for _, spec := range []string{"2", "1-3"} {
		lr, err := dot.ParseLayers(spec)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := dot.Write(&buf, g, dot.Options{Filter: dot.Filter{Layers: &lr}, Records: r.Records}); err != nil {
			t.Fatal(err)
		}
		classes, edges := graphstest.ParseDot(t, buf.String())
		kept, computed := 0, 0
		for i, n := range g.Nodes() {
			layer, _ := g.Scope(n)
			class, shown := classes[i]
			inRange := layer >= lr.From && layer <= lr.To
			switch {
			case inRange && (!shown || class == "boundary"):
				t.Errorf("-layers %s: %s (layer %d) not kept", spec, n.Label(), layer)
			case !inRange && shown && class != "boundary":
				t.Errorf("-layers %s: %s (layer %d) kept as %s", spec, n.Label(), layer, class)
			case inRange:
				kept++
				if class == "node" {
					computed++
				}
			}
		}
		boundary := len(classes) - kept
		t.Logf("-layers %s: %d of %d nodes kept (%d computed), %d boundary, %d edges", spec, kept, g.Len(), computed, boundary, len(edges))
		layers := lr.To - lr.From + 1
		if computed*5 > len(g.Computed())*layers+5 || computed == 0 || boundary == 0 {
			t.Errorf("-layers %s keeps %d of %d computed nodes, %d boundary", spec, computed, len(g.Computed()), boundary)
		}
		for _, e := range edges {
			from, to, _ := strings.Cut(e, "->")
			fi, _ := strconv.Atoi(from)
			ti, _ := strconv.Atoi(to)
			if classes[ti] == "boundary" || classes[ti] == "" || classes[fi] == "" {
				t.Errorf("-layers %s: edge %s does not end at a kept node", spec, e)
			}
		}
		// Layer 2 reads layer 1's output, which is drawn as boundary.
		if spec == "2" && !strings.Contains(buf.String(), `label="l_out-1`) {
			t.Errorf("-layer 2: the input from layer 1 is not drawn")
		}
	}
}

func TestMatchAndTimes(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	r := prompt(t, "stories260K.gguf", "Once upon a time", b, func(p *model.ContextParams) { p.FlashAttn = false })
	g := r.Context.LastGraph()
	var buf bytes.Buffer
	f := dot.Filter{Match: regexp.MustCompile(`^MUL_MAT\(`)}
	if err := dot.Write(&buf, g, dot.Options{Filter: f, Records: r.Records, Title: `stories "260K"`}); err != nil {
		t.Fatal(err)
	}
	classes, _ := graphstest.ParseDot(t, buf.String())
	n := 0
	for i, c := range classes {
		if c == "node" {
			n++
			if g.Nodes()[i].Op != ops.OpMulMat {
				t.Errorf("kept %s", g.Nodes()[i].Label())
			}
		}
	}
	if want := 9*5 + 1; n != want {
		t.Errorf("-match MUL_MAT kept %d nodes, want %d", n, want)
	}
	text := buf.String()
	if !strings.Contains(text, `label="stories \"260K\""`) {
		t.Error("title not quoted")
	}
	// Timed nodes show backend, time and share, and are shaded.
	timed := regexp.MustCompile(`\\ncpu \d+\.\d{3} ms \(\d+\.\d%\)"`)
	if got := len(timed.FindAllString(text, -1)); got != n {
		t.Errorf("%d of %d nodes show their time", got, n)
	}
	if !strings.Contains(text, `fillcolor="0.000 1.000 1.000"`) {
		t.Error("the slowest node is not fully shaded")
	}
}

// TestRenderModel dumps a layer of a model and renders it when dot is
// installed.
func TestRenderModel(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	r := prompt(t, "stories260K.gguf", "Once upon a time", b, nil)
	var buf bytes.Buffer
	f := dot.Filter{Layers: &dot.LayerRange{From: 4, To: 4}}
	if err := dot.Write(&buf, r.Context.LastGraph(), dot.Options{Filter: f, Records: r.Records}); err != nil {
		t.Fatal(err)
	}
	if classes, _ := graphstest.ParseDot(t, buf.String()); len(classes) == 0 {
		t.Fatal("the dump of layer 4 has no nodes")
	}
	if !dot.Available() {
		t.Skip("the dot program is not installed: rendering not checked")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "g.dot"), filepath.Join(dir, "g.svg")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dot.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Contains(got, []byte("<svg")) {
		t.Errorf("rendered layer 4: %v, %.32q", err, got)
	}
}

// TestModelTrace traces stories260K's prompt: the Chrome trace has a
// slice per node, and the profile's stacks name every layer and the ops.
func TestModelTrace(t *testing.T) {
	b := cputest.New(t, 2)
	defer b.Close()
	r := prompt(t, "stories260K.gguf", "Once upon a time", b, nil)
	tr := timing.Trace{Records: r.Records}
	var buf bytes.Buffer
	if err := tr.WriteChrome(&buf); err != nil {
		t.Fatal(err)
	}
	evs := graphstest.DecodeChrome(t, buf.Bytes())
	if len(evs) != len(r.Records) {
		t.Errorf("%d slices for %d records", len(evs), len(r.Records))
	}
	buf.Reset()
	if err := tr.WriteProfile(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	for _, f := range p.Function {
		funcs[f.Name] = true
	}
	for _, want := range []string{"forward", "layer.0", "layer.4", "attn", "ffn", "input", "output", "RMS_NORM(f32)", "FLASH_ATTN_EXT(f32)", "GET_ROWS", "CPY(f32→f16)"} {
		if !funcs[want] && !anyPrefix(funcs, want) {
			t.Errorf("profile has no function %s: %v", want, funcs)
		}
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if root := s.Location[len(s.Location)-1].Line[0].Function.Name; root != "forward" {
			t.Errorf("a stack starts at %s", root)
		}
	}
	var want int64
	for _, rec := range r.Records {
		want += rec.Duration().Nanoseconds()
	}
	if total != want {
		t.Errorf("samples sum to %d ns, records to %d", total, want)
	}
}

func anyPrefix(set map[string]bool, prefix string) bool {
	for k := range set {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
