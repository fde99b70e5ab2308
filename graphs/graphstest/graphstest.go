// Package graphstest holds what the tests of graphs, its dumps and the
// model's graphs share: a backend that stands for a device (it computes
// only some ops and only on memory it allocated), and readers of the dump
// formats (Graphviz, Chrome traces) that check them as a viewer would.
// Only tests import it.
package graphstest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
)

// A Fake is a backend over inner that supports only the ops it was given
// (every op inner has when none) and refuses to compute a node that
// touches memory it did not allocate (leaves excepted, with leavesOK), as
// a device backend would. Computed counts the nodes it computed by op.
type Fake struct {
	name     string
	inner    ops.Backend
	only     map[ops.Op]bool // nil: every op inner has
	leavesOK bool
	mine     map[ops.Buffer]bool
	Computed map[ops.Op]int
}

// NewFake returns a Fake named name over inner.
func NewFake(name string, inner ops.Backend, leavesOK bool, only ...ops.Op) *Fake {
	f := &Fake{name: name, inner: inner, leavesOK: leavesOK, mine: map[ops.Buffer]bool{}, Computed: map[ops.Op]int{}}
	if len(only) > 0 {
		f.only = map[ops.Op]bool{}
		for _, o := range only {
			f.only[o] = true
		}
	}
	return f
}

// Name returns the fake's name.
func (f *Fake) Name() string { return f.name }

// Supports refuses a computed node whose op the fake was not given.
func (f *Fake) Supports(t *ops.Tensor) error {
	if t.Op != ops.OpNone && !t.Op.IsView() && f.only != nil && !f.only[t.Op] {
		return fmt.Errorf("%s has no %v kernel", f.name, t.Op)
	}
	return f.inner.Supports(t)
}

// Alloc allocates from inner and remembers the buffer as the fake's.
func (f *Fake) Alloc(size int64) (ops.Buffer, error) {
	b, err := f.inner.Alloc(size)
	if err == nil {
		f.mine[b] = true
	}
	return b, err
}

// Compute computes t on inner if t and its operands are in the fake's
// memory (or are leaves, with leavesOK).
func (f *Fake) Compute(t *ops.Tensor) error {
	for i, x := range append([]*ops.Tensor{t}, t.Src...) {
		if x == nil {
			continue
		}
		o := x
		for o.ViewOf != nil {
			o = o.ViewOf
		}
		if buf, _ := x.Storage(); !f.mine[buf] && !(f.leavesOK && o.Op == ops.OpNone) {
			return fmt.Errorf("%s: operand %d (%s) of %s is not in its memory", f.name, i-1, x.Label(), t.Label())
		}
	}
	f.Computed[t.Op]++
	return f.inner.Compute(t)
}

// Close does nothing: inner belongs to the caller.
func (f *Fake) Close() error { return nil }

var (
	// dotNode matches a node statement of a dump: its index and class.
	dotNode = regexp.MustCompile(`^\tn(\d+) \[class="(\w+)".*\];$`)
	dotEdge = regexp.MustCompile(`^\tn(\d+) -> n(\d+)`)
)

// ParseDot returns the classes of the nodes a Graphviz dump declares, by
// graph index, and its edges as "from->to" indices; a node declared twice
// or a text that is not one digraph fails tb.
func ParseDot(tb testing.TB, text string) (map[int]string, []string) {
	tb.Helper()
	classes := map[int]string{}
	var edges []string
	for _, line := range strings.Split(text, "\n") {
		if m := dotNode.FindStringSubmatch(line); m != nil {
			i, _ := strconv.Atoi(m[1])
			if _, dup := classes[i]; dup {
				tb.Errorf("node %d declared twice", i)
			}
			classes[i] = m[2]
		} else if m := dotEdge.FindStringSubmatch(line); m != nil {
			edges = append(edges, m[1]+"->"+m[2])
		}
	}
	if !strings.HasPrefix(text, "digraph ") || !strings.HasSuffix(text, "}\n") {
		tb.Errorf("not a digraph:\n%.200s", text)
	}
	return classes, edges
}

// DecodeChrome checks a Chrome trace the way a viewer reads it (a
// traceEvents array of events with name, ph, pid, tid; complete events
// with ts, dur in µs and args; metadata events) and returns its complete
// events.
func DecodeChrome(tb testing.TB, raw []byte) []map[string]any {
	tb.Helper()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatalf("the trace is not JSON: %v", err)
	}
	var complete []map[string]any
	for _, e := range doc.TraceEvents {
		for _, k := range []string{"name", "ph", "pid", "tid"} {
			if _, ok := e[k]; !ok {
				tb.Fatalf("event without %s: %v", k, e)
			}
		}
		if e["ph"] != "X" {
			if e["ph"] != "M" {
				tb.Errorf("event of phase %v", e["ph"])
			}
			continue
		}
		ts, ok1 := e["ts"].(float64)
		d, ok2 := e["dur"].(float64)
		if _, ok := e["args"].(map[string]any); !ok || !ok1 || !ok2 || ts < 0 || d < 0 {
			tb.Fatalf("bad complete event %v", e)
		}
		complete = append(complete, e)
	}
	return complete
}
