// Package dot writes compute graphs as Graphviz dot text, and renders dot
// files to SVG, PNG or PDF with the dot program when it is installed.
//
// Each node shows its name, op, element type, shape and, when the graph
// has run, the backend that computed it; given the records of a run, it
// also shows its time and share of the total, and is shaded by that share.
// Leaves are coloured apart from computed nodes (weights blue, other
// leaves such as inputs and caches yellow), and views are drawn dashed. A
// Filter keeps a readable part of a whole model: a layer, a range of
// layers, or the nodes whose name or op matches a regular expression.
// Nodes outside the filter that kept nodes read are drawn grey and
// dashed, so that every edge has both ends.
//
// Every node statement carries a class attribute (leaf, view, node or
// boundary), which Graphviz copies into SVG output.
package dot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
)

// A LayerRange is the layers From to To, both included.
type LayerRange struct {
	From, To int
}

// maxLayer bounds the layer numbers ParseLayers accepts.
const maxLayer = 1 << 20

// ParseLayers parses "N" (one layer) or "A-B" (layers A to B, A <= B).
func ParseLayers(s string) (LayerRange, error) {
	num := func(x string) (int, error) {
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 || n > maxLayer {
			return 0, fmt.Errorf("dot: layer %q is not a number in [0, %d]", x, maxLayer)
		}
		return n, nil
	}
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	from, err := num(a)
	if err != nil {
		return LayerRange{}, err
	}
	to := from
	if isRange {
		if to, err = num(b); err != nil {
			return LayerRange{}, err
		}
		if to < from {
			return LayerRange{}, fmt.Errorf("dot: layer range %q runs backwards", s)
		}
	}
	return LayerRange{from, to}, nil
}

// A Filter selects the nodes of a dump. The zero Filter keeps every node.
type Filter struct {
	// Layers, when set, keeps only nodes whose layer (Graph.Scope) is in
	// the range.
	Layers *LayerRange
	// Match, when set, keeps only nodes whose name or op label
	// (graphs.OpLabel, such as "MUL_MAT(q4_0)") it matches.
	Match *regexp.Regexp
}

// Keep reports whether the filter keeps t, a node of g.
func (f Filter) Keep(g *graphs.Graph, t *ops.Tensor) bool {
	if f.Layers != nil {
		l, _ := g.Scope(t)
		if l < f.Layers.From || l > f.Layers.To {
			return false
		}
	}
	if f.Match != nil && !f.Match.MatchString(t.Name) && !f.Match.MatchString(graphs.OpLabel(t)) {
		return false
	}
	return true
}

// Select returns the nodes of g the filter keeps, in graph order, and the
// boundary: nodes it does not keep that a kept node depends on (through
// its sources, the storage it views, or After), also in graph order.
func Select(g *graphs.Graph, f Filter) (kept, boundary []*ops.Tensor) {
	in := map[*ops.Tensor]bool{}
	for _, t := range g.Nodes() {
		if f.Keep(g, t) {
			in[t] = true
			kept = append(kept, t)
		}
	}
	edge := map[*ops.Tensor]bool{}
	for _, t := range kept {
		for _, d := range g.Deps(t) {
			if !in[d] {
				edge[d] = true
			}
		}
	}
	for _, t := range g.Nodes() {
		if edge[t] {
			boundary = append(boundary, t)
		}
	}
	return kept, boundary
}

// Options configure Write.
type Options struct {
	Filter Filter
	// Records of a run of the graph, when given, annotate each computed
	// node with its backend, its time (summed over the records) and its
	// share of the total time of the compute records, and shade it by
	// that share (the slowest node shown is shaded fully). Records of
	// nodes not in the graph are ignored.
	Records []graphs.Record
	// Title, when set, labels the drawing.
	Title string
}

// Write writes g as a dot digraph. Node identifiers are "n" and the node's
// index in g.Nodes().
func Write(w io.Writer, g *graphs.Graph, o Options) error {
	kept, boundary := Select(g, o.Filter)
	times := map[*ops.Tensor]time.Duration{}
	backend := map[*ops.Tensor]string{}
	var total, most time.Duration
	for _, r := range o.Records {
		if r.Kind != graphs.KindCompute || g.Index(r.Node) < 0 {
			continue
		}
		d := r.Duration()
		times[r.Node] += d
		backend[r.Node] = r.BackendName()
		total += d
	}
	for _, t := range kept {
		most = max(most, times[t])
	}
	if p := g.Plan(); p != nil {
		for _, t := range kept {
			if _, ok := backend[t]; !ok {
				if b := p.Backend(t); b != nil {
					backend[t] = b.Name()
				}
			}
		}
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph kernbench {")
	fmt.Fprintln(bw, "\trankdir=TB;")
	fmt.Fprintln(bw, `	node [fontname="Helvetica", fontsize=10];`)
	fmt.Fprintln(bw, `	edge [color="#555555", arrowsize=0.6];`)
	if o.Title != "" {
		fmt.Fprintf(bw, "\tlabel=%s;\n\tlabelloc=t;\n", quote(o.Title))
	}
	id := func(t *ops.Tensor) string { return "n" + strconv.Itoa(g.Index(t)) }
	for _, t := range kept {
		lines := []string{t.Label()}
		var attrs []string
		switch {
		case t.Op == ops.OpNone:
			lines = append(lines, t.Type.String()+" "+shape(t))
			fill := "#fff2cc"
			if strings.HasSuffix(t.Name, ".weight") {
				fill = "#dae8fc"
			}
			attrs = append(attrs, `class="leaf"`, `shape=box`, `style=filled`, `fillcolor="`+fill+`"`)
		case t.Op.IsView():
			lines = append(lines, t.Op.String()+" "+t.Type.String()+" "+shape(t))
			attrs = append(attrs, `class="view"`, `shape=box`, `style="rounded,dashed"`, `fontcolor="#555555"`)
		default:
			lines = append(lines, graphs.OpLabel(t), t.Type.String()+" "+shape(t))
			fill := "#ffffff"
			if d, ok := times[t]; ok {
				share := 0.0
				if total > 0 {
					share = float64(d) / float64(total)
				}
				lines = append(lines, fmt.Sprintf("%s %s (%.1f%%)", backend[t], ms(d), 100*share))
				if most > 0 {
					fill = fmt.Sprintf("0.000 %.3f 1.000", float64(d)/float64(most))
				}
			} else if b := backend[t]; b != "" {
				lines = append(lines, b)
			}
			attrs = append(attrs, `class="node"`, `shape=box`, `style="rounded,filled"`, `fillcolor="`+fill+`"`)
		}
		attrs = append(attrs, "label="+quote(strings.Join(lines, "\n")))
		fmt.Fprintf(bw, "\t%s [%s];\n", id(t), strings.Join(attrs, ", "))
	}
	for _, t := range boundary {
		fmt.Fprintf(bw, "\t%s [class=\"boundary\", shape=box, style=dashed, color=\"#999999\", fontcolor=\"#999999\", label=%s];\n",
			id(t), quote(t.Label()+"\n"+shape(t)))
	}
	for _, t := range kept {
		for i, s := range t.Src {
			if s == nil {
				continue
			}
			style := ""
			if t.Op.IsView() {
				style = " [style=dashed]"
			} else if len(t.Src) > 1 {
				style = fmt.Sprintf(" [headlabel=\"%d\", labelfontsize=8, labelfontcolor=\"#888888\"]", i)
			}
			fmt.Fprintf(bw, "\t%s -> %s%s;\n", id(s), id(t), style)
		}
		if t.ViewOf != nil && !t.Op.IsView() && !contains(t.Src, t.ViewOf) {
			fmt.Fprintf(bw, "\t%s -> %s [style=dashed];\n", id(t.ViewOf), id(t))
		}
		for _, d := range g.AfterOf(t) {
			fmt.Fprintf(bw, "\t%s -> %s [style=dotted, color=\"#999999\", label=\"after\", fontsize=8];\n", id(d), id(t))
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func contains(ts []*ops.Tensor, t *ops.Tensor) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// shape returns "[a b]" with trailing unit dimensions dropped.
func shape(t *ops.Tensor) string {
	n := ops.MaxDims
	for n > 1 && t.Ne[n-1] == 1 {
		n--
	}
	parts := make([]string, n)
	for i := range n {
		parts[i] = strconv.FormatInt(t.Ne[i], 10)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// ms formats d in milliseconds with three significant decimals.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) + " ms"
}

// quote returns s as a dot quoted string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ErrNoDot is returned by Render when the dot program is not installed.
var ErrNoDot = errors.New("dot: the Graphviz dot program is not installed (apt-get install graphviz, brew install graphviz)")

// Available reports whether the dot program is on the PATH.
func Available() bool {
	_, err := exec.LookPath("dot")
	return err == nil
}

// Render runs the dot program to draw the dot file in as out, in the
// format out's extension names: .svg, .png or .pdf.
func Render(ctx context.Context, in, out string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	switch format {
	case "svg", "png", "pdf":
	default:
		return fmt.Errorf("dot: cannot render %s: the extension must be .svg, .png or .pdf", out)
	}
	prog, err := exec.LookPath("dot")
	if err != nil {
		return ErrNoDot
	}
	cmd := exec.CommandContext(ctx, prog, "-T"+format, "-o", out, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("dot: rendering %s: %s", out, msg)
	}
	return nil
}
