package timing

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
)

// A ChromeEvent is one event of the Trace Event Format that Chrome's
// about:tracing and Perfetto read. Complete events (Ph "X") have a start
// Ts and a duration Dur in microseconds; metadata events (Ph "M") name
// processes and threads.
type ChromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// A ChromeTrace is the JSON object form of a trace file.
type ChromeTrace struct {
	TraceEvents     []ChromeEvent `json:"traceEvents"`
	DisplayTimeUnit string        `json:"displayTimeUnit"`
}

// Chrome returns the trace in the Trace Event Format: process 1, thread 0
// the spans, then one thread per backend (in order of first use) holding a
// slice per record. A node's slice is named after the node, its category
// is its op label, and its args give op, type, shape, layer, block, FLOPs,
// bytes, GFLOP/s and GB/s; copies are slices of category "copy" on the
// receiving backend's thread. Times are microseconds from the trace's
// first event.
func (t Trace) Chrome() ChromeTrace {
	out := ChromeTrace{DisplayTimeUnit: "ms"}
	t.events(func(ev ChromeEvent) bool {
		out.TraceEvents = append(out.TraceEvents, ev)
		return true
	})
	return out
}

// events yields the events of Chrome, in order, until yield returns
// false.
func (t Trace) events(yield func(ChromeEvent) bool) {
	origin, _ := t.start()
	us := func(x time.Time) float64 { return float64(x.Sub(origin).Nanoseconds()) / 1e3 }
	meta := func(name string, tid int, value string) bool {
		return yield(ChromeEvent{Name: name, Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": value}})
	}
	if !meta("process_name", 0, "kernbench") {
		return
	}
	if len(t.Spans) > 0 && !meta("thread_name", 0, "run") {
		return
	}
	for _, sp := range t.Spans {
		args := map[string]any{}
		for k, v := range sp.Args {
			args[k] = v
		}
		if !yield(ChromeEvent{Name: sp.Name, Cat: "run", Ph: "X", Ts: us(sp.Start), Dur: dur(sp.End.Sub(sp.Start)), Pid: 1, Tid: 0, Args: args}) {
			return
		}
	}
	tids := map[string]int{}
	for r := range t.records() {
		name := r.BackendName()
		tid, ok := tids[name]
		if !ok {
			tid = len(tids) + 1
			tids[name] = tid
			if !meta("thread_name", tid, name) {
				return
			}
		}
		if !yield(recordEvent(r, tid, us(r.Start))) {
			return
		}
	}
}

// dur returns d in microseconds.
func dur(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func recordEvent(r graphs.Record, tid int, ts float64) ChromeEvent {
	d := r.Duration()
	args := map[string]any{
		"op":     r.Label(),
		"type":   r.Node.Type.String(),
		"shape":  fmt.Sprint(r.Node.Ne),
		"layer":  r.Layer,
		"flops":  r.Cost.Flops,
		"bytes":  r.Cost.Bytes,
		"GFLOPs": round3(rate(r.Cost.Flops, d) / 1e9),
		"GBps":   round3(rate(r.Cost.Bytes, d) / 1e9),
	}
	if r.Block != "" {
		args["block"] = r.Block
	}
	ev := ChromeEvent{Name: r.Node.Label(), Cat: r.Label(), Ph: "X", Ts: ts, Dur: dur(d), Pid: 1, Tid: tid, Args: args}
	if r.Kind == graphs.KindCopy {
		ev.Cat = "copy"
		ev.Name = r.Label() + " " + r.Node.Label()
		if r.For != nil {
			args["for"] = r.For.Label()
		}
	} else if len(r.Node.Src) > 0 && r.Node.Op != ops.OpNone {
		var src []string
		for _, s := range r.Node.Src {
			if s != nil {
				src = append(src, s.Label())
			}
		}
		args["src"] = src
	}
	return ev
}

// round3 rounds x to 3 decimals, keeping the JSON short.
func round3(x float64) float64 { return math.Round(x*1e3) / 1e3 }

// WriteChrome writes the trace as Chrome trace JSON (see Chrome), the
// same bytes as encoding Chrome's value, an event at a time: the memory
// it takes does not grow with the trace.
func (t Trace) WriteChrome(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`{"traceEvents":[`)
	n := 0
	var err error
	t.events(func(ev ChromeEvent) bool {
		var b []byte
		if b, err = json.Marshal(ev); err != nil {
			return false
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		_, err = bw.Write(b)
		return err == nil
	})
	if err == nil {
		_, err = bw.WriteString(`],"displayTimeUnit":"ms"}` + "\n")
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("timing: writing the Chrome trace: %w", err)
	}
	return nil
}
