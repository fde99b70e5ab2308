package llamabench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
)

// fakeSide reports fixed times per test, and fails where told.
type fakeSide struct {
	name  string
	ns    int64 // the time of a pp16 repetition; tg8 takes 4 times as long
	fail  map[int]bool
	calls *[]string
	n     int
}

func (f *fakeSide) Name() string { return f.name }

func (f *fakeSide) Bench(ctx context.Context, model string, p Params) ([]Result, error) {
	*f.calls = append(*f.calls, f.name+":"+model)
	f.n++
	if f.fail[f.n] {
		return nil, errors.New("it crashed")
	}
	var out []Result
	for _, n := range p.Prompt {
		out = append(out, fakeResult(model, n, 0, p.Reps, f.ns))
	}
	for _, n := range p.Gen {
		out = append(out, fakeResult(model, 0, n, p.Reps, 4*f.ns))
	}
	return out, nil
}

func fakeResult(model string, pp, tg, reps int, ns int64) Result {
	r := Result{ModelFilename: model, ModelType: "llama " + model, ModelSize: 1000, NPrompt: pp, NGen: tg, NThreads: 2}
	for i := range reps {
		t := ns + int64(i) // distinct samples
		r.SamplesNS = append(r.SamplesNS, t)
		r.SamplesTS = append(r.SamplesTS, 1e9*float64(pp+tg)/float64(t))
	}
	return r
}

// TestPairAlternates checks the order of the runs: per model, the sides
// alternate which goes first from round to round, continuing across
// models.
func TestPairAlternates(t *testing.T) {
	var calls []string
	a := &fakeSide{name: "llama.cpp", ns: 2e6, calls: &calls}
	b := &fakeSide{name: "kernbench", ns: 1e6, calls: &calls}
	p := Params{Prompt: []int{16}, Gen: []int{8}, Reps: 3, Threads: 2}
	runs := Pair(context.Background(), []string{"m1", "m2"}, a, b, 3, p, nil)
	want := "llama.cpp:m1 kernbench:m1 kernbench:m1 llama.cpp:m1 llama.cpp:m1 kernbench:m1 " +
		"kernbench:m2 llama.cpp:m2 llama.cpp:m2 kernbench:m2 kernbench:m2 llama.cpp:m2"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	if len(runs) != 12 || runs[11].Round != 2 || runs[11].Side != "llama.cpp" || runs[11].Model != "m2" {
		t.Errorf("runs: %d, last %+v", len(runs), runs[len(runs)-1])
	}

	// A cancelled context stops before the next run: a's second call is
	// the fourth (a b, b a), and nothing runs after it.
	calls = nil
	ctx, cancel := context.WithCancel(context.Background())
	stopAfter := &cancelSide{Side: a, after: 2, cancel: cancel}
	runs = Pair(ctx, []string{"m1"}, stopAfter, b, 5, p, nil)
	if len(runs) != 4 || len(calls) != 4 {
		t.Errorf("cancelled in the second call of a: %d runs (%v), want 4", len(runs), calls)
	}
}

type cancelSide struct {
	Side
	after, n int
	cancel   func()
}

func (c *cancelSide) Bench(ctx context.Context, model string, p Params) ([]Result, error) {
	c.n++
	if c.n == c.after {
		c.cancel()
	}
	return c.Side.Bench(ctx, model, p)
}

// TestRecords checks the records of paired runs: every repetition of
// every round pooled per model, test and side, the bytes of a tg test,
// one type per model whichever side ran, and bench.Compare's ratio of
// the two sides.
func TestRecords(t *testing.T) {
	var calls []string
	a := &fakeSide{name: "llama.cpp", ns: 2e6, calls: &calls, fail: map[int]bool{2: true}}
	b := &fakeSide{name: "kernbench", ns: 1e6, calls: &calls}
	p := Params{Prompt: []int{16}, Gen: []int{8}, Reps: 3, Threads: 2}
	runs := Pair(context.Background(), []string{"dir/m1.gguf", "m2.gguf"}, a, b, 2, p, nil)
	recs := Records(runs, 2, "kernbench", nil)
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8 (2 models x 2 tests x 2 sides)", len(recs))
	}
	for _, r := range recs {
		wantSamples := 6
		if r.Backend == "llama.cpp" && r.Shape == "m1.gguf" {
			wantSamples = 3 // its second run failed
			if !strings.Contains(r.Error, "round 2: it crashed") {
				t.Errorf("%s: error %q, want the failed round's", r.Key(), r.Error)
			}
		} else if r.Error != "" {
			t.Errorf("%s: error %q", r.Key(), r.Error)
		}
		if len(r.Samples) != wantSamples || !r.Timed() || r.Validation != bench.ValidExternal {
			t.Errorf("%s: %d samples, timed %v, validation %s; want %d", r.Key(), len(r.Samples), r.Timed(), r.Validation, wantSamples)
		}
		if want := "llama " + map[string]string{"m1.gguf": "dir/m1.gguf", "m2.gguf": "m2.gguf"}[r.Shape]; r.Type != want {
			t.Errorf("%s: type %q, want %q", r.Key(), r.Type, want)
		}
		wantBytes := int64(0)
		if r.Op == "tg8" {
			wantBytes = 8000
		}
		if r.Bytes != wantBytes || (wantBytes > 0) != (r.GBPS > 0) {
			t.Errorf("%s: bytes %d gbps %g, want %d", r.Key(), r.Bytes, r.GBPS, wantBytes)
		}
	}
	set := func(backend string) *bench.Set {
		s := &bench.Set{}
		for _, r := range recs {
			if r.Backend == backend {
				s.Records = append(s.Records, r)
			}
		}
		return s
	}
	rep, err := bench.Compare(set("llama.cpp"), set("kernbench"), bench.CompareOptions{Ignore: []string{"backend"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Comparisons) != 4 {
		t.Fatalf("%d comparisons, want 4", len(rep.Comparisons))
	}
	for _, c := range rep.Comparisons {
		if c.Speedup < 1.9 || c.Speedup > 2.1 {
			t.Errorf("%s: kernbench/llama.cpp %.3fx, want 2x", c.Key, c.Speedup)
		}
		if c.A.Shape == "m2.gguf" && c.Verdict != bench.Faster {
			t.Errorf("%s: verdict %v with 6 samples a side, all apart; want faster", c.Key, c.Verdict)
		}
	}
}

// TestRecordsMissing checks the records when a side never ran a test:
// one side always failing, and a side that leaves out a test.
func TestRecordsMissing(t *testing.T) {
	var calls []string
	a := &fakeSide{name: "llama.cpp", ns: 2e6, calls: &calls, fail: map[int]bool{1: true, 2: true}}
	b := &fakeSide{name: "kernbench", ns: 1e6, calls: &calls}
	p := Params{Prompt: []int{16}, Gen: []int{8}, Reps: 2, Threads: 1}
	recs := Records(Pair(context.Background(), []string{"m"}, a, b, 2, p, nil), 1, "kernbench", nil)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	for _, r := range recs {
		failed := r.Backend == "llama.cpp"
		if failed != (r.Validation == bench.ValidError) || failed != strings.Contains(r.Error, "2 failed runs") || failed == r.Timed() {
			t.Errorf("%s: validation %s, error %q, timed %v", r.Key(), r.Validation, r.Error, r.Timed())
		}
	}

	runs := []Run{
		{Model: "m", Side: "kernbench", Results: []Result{fakeResult("m", 16, 0, 2, 1e6), fakeResult("m", 0, 8, 2, 1e6)}},
		{Model: "m", Side: "llama.cpp", Results: []Result{fakeResult("m", 16, 0, 2, 1e6)}},
	}
	recs = Records(runs, 1, "kernbench", nil)
	var msgs []string
	for _, r := range recs {
		if r.Error != "" {
			msgs = append(msgs, fmt.Sprintf("%s %s: %s", r.Backend, r.Op, r.Error))
		}
	}
	if len(recs) != 4 || len(msgs) != 1 || msgs[0] != "llama.cpp tg8: llama.cpp reported no tg8 test" {
		t.Errorf("%d records, errors %q", len(recs), msgs)
	}
}

func TestParamsCheck(t *testing.T) {
	tests := []struct {
		p    Params
		want string
	}{
		{Params{Prompt: []int{512}, Gen: []int{128}, Reps: 3, Threads: 2}, ""},
		{Params{Prompt: []int{0}, Gen: []int{128}, Reps: 1, Threads: 1}, ""},
		{Params{Prompt: []int{0}, Gen: []int{0}, Reps: 3, Threads: 2}, "no test"},
		{Params{Prompt: []int{-1}, Reps: 3, Threads: 2}, "negative"},
		{Params{Prompt: []int{16}, Reps: 0, Threads: 2}, "repetitions"},
		{Params{Prompt: []int{16}, Reps: 1, Threads: 0}, "threads"},
	}
	for _, tt := range tests {
		err := tt.p.Check()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.p, err, tt.want)
		}
	}
	got := strings.Join(Params{Prompt: []int{16, 32}, Reps: 2, Threads: 3, FlashAttn: true}.args("m.gguf"), " ")
	if want := "-m m.gguf -p 16,32 -n 0 -r 2 -t 3 -fa on -o json"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}
