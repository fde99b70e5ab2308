package timing

import (
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// Profile returns the trace as a pprof profile: one sample per distinct
// stack (Stack) and backend, whose values are the summed node time in
// nanoseconds (the default sample type), FLOPs and bytes, labelled with
// the backend. `go tool pprof -top` lists the ops, and `-http` draws the
// flame graph of where a forward pass spends its time.
//
// Frame names write "->" as "→" ("CPY(f32→f16)", "COPY(cpu→cuda)"):
// pprof takes a '>' for the end of a C++ template and cuts the name
// there.
func (t Trace) Profile() (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "time", Unit: "nanoseconds"},
			{Type: "flops", Unit: "count"},
			{Type: "bytes", Unit: "bytes"},
		},
		DefaultSampleType: "time",
		PeriodType:        &profile.ValueType{Type: "time", Unit: "nanoseconds"},
		Period:            1,
	}
	if s, ok := t.start(); ok {
		p.TimeNanos = s.UnixNano()
		p.DurationNanos = t.end().Sub(s).Nanoseconds()
	}
	// One mapping that already has function names, so pprof neither looks
	// for a binary nor tries to symbolize.
	m := &profile.Mapping{ID: 1, File: "kernbench", HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	locs := map[string]*profile.Location{}
	loc := func(frame string) *profile.Location {
		if l := locs[frame]; l != nil {
			return l
		}
		name := strings.ReplaceAll(frame, "->", "→")
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		locs[frame] = l
		return l
	}
	samples := map[string]*profile.Sample{}
	for r := range t.records() {
		stack := Stack(r)
		backend := r.BackendName()
		key := strings.Join(stack, ";") + "\x00" + backend
		s := samples[key]
		if s == nil {
			s = &profile.Sample{Value: make([]int64, 3), Label: map[string][]string{"backend": {backend}}}
			for i := len(stack) - 1; i >= 0; i-- { // leaf first
				s.Location = append(s.Location, loc(stack[i]))
			}
			samples[key] = s
			p.Sample = append(p.Sample, s)
		}
		s.Value[0] += r.Duration().Nanoseconds()
		s.Value[1] += r.Cost.Flops
		s.Value[2] += r.Cost.Bytes
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("timing: building the profile: %w", err)
	}
	return p, nil
}

// WriteProfile writes the trace as a gzipped pprof profile (see Profile).
func (t Trace) WriteProfile(w io.Writer) error {
	p, err := t.Profile()
	if err != nil {
		return err
	}
	if err := p.Write(w); err != nil {
		return fmt.Errorf("timing: writing the profile: %w", err)
	}
	return nil
}
