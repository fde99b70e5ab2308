// Package timing turns the execution records of graph runs
// (graphs.Record) into what a kernel engineer reads to decide what to
// tune: a Chrome/Perfetto trace (one track per backend, one slice per
// node), a pprof profile whose samples are node times under stacks such
// as forward;layer.12;attn;MUL_MAT(q4_0), and summary tables of time by
// op and by layer with each row's GFLOP/s, GB/s and share.
package timing

import (
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/kernbench/kernbench/graphs"
)

// A Span is a named interval of a run, such as the prompt or one generated
// token. Spans are drawn on a track of their own above the nodes.
type Span struct {
	Name       string
	Start, End time.Time
	// Args are shown with the span in a trace viewer.
	Args map[string]any
}

// A Trace is the records of one or more runs, with spans that group them.
type Trace struct {
	Records []graphs.Record
	// Stream, when set, yields the records instead of Records, each time
	// they are read: for traces too long to hold as records (which keep
	// their graphs alive), such as cmd/trace's of thousands of tokens,
	// which keeps compact timings and rebuilds a record from them as it
	// is read.
	Stream iter.Seq[graphs.Record]
	Spans  []Span
}

// records returns the trace's records: Stream, or else Records.
func (t Trace) records() iter.Seq[graphs.Record] {
	if t.Stream != nil {
		return t.Stream
	}
	return slices.Values(t.Records)
}

// Root is the outermost frame of every stack.
const Root = "forward"

// Stack returns the frames of r from the root: Root, "layer.N" when the
// node is in layer N, its block when it has one, then its label
// (Record.Label), as in forward;layer.12;attn;MUL_MAT(q4_0) or
// forward;output;MUL_MAT(q8_0).
func Stack(r graphs.Record) []string {
	s := []string{Root}
	if r.Layer >= 0 {
		s = append(s, "layer."+strconv.Itoa(r.Layer))
	}
	if r.Block != "" {
		s = append(s, r.Block)
	}
	return append(s, r.Label())
}

// rate returns n per second over d, or 0 for an empty interval.
func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// start returns the earliest start of the trace's records and spans, and
// whether there is one.
func (t Trace) start() (time.Time, bool) {
	var s time.Time
	ok := false
	for r := range t.records() {
		if !ok || r.Start.Before(s) {
			s, ok = r.Start, true
		}
	}
	for _, sp := range t.Spans {
		if !ok || sp.Start.Before(s) {
			s, ok = sp.Start, true
		}
	}
	return s, ok
}

// end returns the latest end of the trace's records and spans.
func (t Trace) end() time.Time {
	var e time.Time
	for r := range t.records() {
		if r.End.After(e) {
			e = r.End
		}
	}
	for _, sp := range t.Spans {
		if sp.End.After(e) {
			e = sp.End
		}
	}
	return e
}
