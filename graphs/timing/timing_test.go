package timing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/graphstest"
	"github.com/kernbench/kernbench/graphs/timing"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

type named string

func (n named) Name() string                  { return string(n) }
func (named) Supports(*ops.Tensor) error      { return nil }
func (named) Alloc(int64) (ops.Buffer, error) { return nil, nil }
func (named) Compute(*ops.Tensor) error       { return nil }
func (named) Close() error                    { return nil }

// synthetic returns records of a made-up run: per layer a q4_0 matmul of
// 4 ms and 8 GFLOP and an add of 1 ms, then an output matmul of 2 ms, and
// one copy of 1 MB taking 0.5 ms between two backends.
func synthetic(t *testing.T) timing.Trace {
	w, _ := ops.NewTensor("blk.0.attn_q.weight", quant.Q4_0, 64, 64)
	x, _ := ops.NewTensor("x", quant.F32, 64, 8)
	mm, _ := ops.MulMat(w, x)
	add, _ := ops.Add(mm, mm)
	start := time.Unix(1000, 0)
	at := start
	var tr timing.Trace
	rec := func(kind graphs.StepKind, n *ops.Tensor, b, from ops.Backend, d time.Duration, c ops.Cost, layer int, block string) {
		tr.Records = append(tr.Records, graphs.Record{
			Step:  graphs.Step{Kind: kind, Node: n, Backend: b, From: from, For: n},
			Start: at, End: at.Add(d), Cost: c, Layer: layer, Block: block,
		})
		at = at.Add(d)
	}
	gpu, host := named("gpu"), named("cpu")
	for l := range 3 {
		q, _ := ops.MulMat(w, x)
		rec(graphs.KindCompute, q.SetName(fmt.Sprintf("Qcur-%d", l)), gpu, nil, 4*time.Millisecond, ops.Cost{Flops: 8e9, Bytes: 4e6}, l, "attn")
		rec(graphs.KindCompute, add, host, nil, time.Millisecond, ops.Cost{Flops: 1e6, Bytes: 3e6}, l, "ffn")
	}
	rec(graphs.KindCopy, add, gpu, host, 500*time.Microsecond, ops.Cost{Bytes: 2e6}, -1, "output")
	rec(graphs.KindCompute, mm, gpu, nil, 2*time.Millisecond, ops.Cost{Flops: 4e9, Bytes: 1e6}, -1, "output")
	tr.Spans = []timing.Span{{Name: "prompt", Start: start, End: at, Args: map[string]any{"tokens": 8}}}
	return tr
}

func TestStack(t *testing.T) {
	tr := synthetic(t)
	for i, want := range map[int]string{
		0: "forward;layer.0;attn;MUL_MAT(q4_0)",
		1: "forward;layer.0;ffn;ADD(f32)",
		6: "forward;output;COPY(cpu->gpu)",
		7: "forward;output;MUL_MAT(q4_0)",
	} {
		if got := strings.Join(timing.Stack(tr.Records[i]), ";"); got != want {
			t.Errorf("record %d: stack %s, want %s", i, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	s := synthetic(t).Summary()
	if s.Total.Time != 17500*time.Microsecond || s.Total.Count != 8 {
		t.Fatalf("total %+v", s.Total)
	}
	var names []string
	for _, r := range s.ByOp {
		names = append(names, r.Name)
	}
	if want := []string{"MUL_MAT(q4_0)", "ADD(f32)", "COPY(cpu->gpu)"}; !slices.Equal(names, want) {
		t.Errorf("ops %v, want %v (most time first)", names, want)
	}
	mm := s.ByOp[0]
	// 3*8 + 4 GFLOP in 14 ms.
	if mm.Count != 4 || mm.Time != 14*time.Millisecond || math.Abs(mm.GFLOPS()-28/0.014) > 1e-6 || math.Abs(s.Share(mm)-14/17.5) > 1e-12 {
		t.Errorf("MUL_MAT row %+v: %g GFLOP/s, share %g", mm, mm.GFLOPS(), s.Share(mm))
	}
	names = names[:0]
	for _, r := range s.ByLayer {
		names = append(names, r.Name)
	}
	if want := []string{"layer.0", "layer.1", "layer.2", "output"}; !slices.Equal(names, want) {
		t.Errorf("layers %v, want %v", names, want)
	}
	if out := s.ByLayer[3]; out.Time != 2500*time.Microsecond || math.Abs(out.GBPS()-3e6/2.5e-3/1e9) > 1e-9 {
		t.Errorf("output row %+v: %g GB/s", out, out.GBPS())
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"MUL_MAT(q4_0)", "2000.00", "80.0%", "layer.2", "COPY(cpu->gpu)", "17.500", "GFLOP/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	t.Logf("\n%s", text)
}

func TestChromeSynthetic(t *testing.T) {
	var buf bytes.Buffer
	if err := synthetic(t).WriteChrome(&buf); err != nil {
		t.Fatal(err)
	}
	evs := graphstest.DecodeChrome(t, buf.Bytes())
	if len(evs) != 9 {
		t.Fatalf("%d slices, want 8 records and 1 span", len(evs))
	}
	span := evs[0]
	if span["name"] != "prompt" || span["ts"] != 0.0 || span["dur"] != 17500.0 || span["tid"] != 0.0 {
		t.Errorf("span %v", span)
	}
	first := evs[1]
	args := first["args"].(map[string]any)
	if first["name"] != "Qcur-0" || first["dur"] != 4000.0 || args["op"] != "MUL_MAT(q4_0)" || args["GFLOPs"] != 2000.0 || args["layer"] != 0.0 {
		t.Errorf("first node %v", first)
	}
	tids := map[string]float64{}
	for _, e := range evs[1:] {
		tids[e["args"].(map[string]any)["op"].(string)] = e["tid"].(float64)
	}
	if tids["MUL_MAT(q4_0)"] == tids["ADD(f32)"] || tids["COPY(cpu->gpu)"] != tids["MUL_MAT(q4_0)"] {
		t.Errorf("tracks %v: want one per backend, copies on the receiver's", tids)
	}
	if !strings.Contains(buf.String(), `"name":"thread_name","ph":"M","ts":0,"dur":0,"pid":1,"tid":1,"args":{"name":"gpu"}`) {
		t.Errorf("no thread name for the gpu track:\n%s", buf.String())
	}
}

func TestProfileSynthetic(t *testing.T) {
	var buf bytes.Buffer
	if err := synthetic(t).WriteProfile(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, s := range p.Sample {
		var frames []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			frames = append(frames, s.Location[i].Line[0].Function.Name)
		}
		got[strings.Join(frames, ";")+"@"+s.Label["backend"][0]] = s.Value
	}
	want := map[string][]int64{
		"forward;layer.0;attn;MUL_MAT(q4_0)@gpu": {4e6, 8e9, 4e6},
		"forward;layer.2;ffn;ADD(f32)@cpu":       {1e6, 1e6, 3e6},
		"forward;output;COPY(cpu→gpu)@gpu":       {5e5, 0, 2e6},
		"forward;output;MUL_MAT(q4_0)@gpu":       {2e6, 4e9, 1e6},
	}
	if len(got) != 8 {
		t.Errorf("%d samples, want 8 distinct stacks: %v", len(got), got)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("sample %s = %v, want %v", k, got[k], v)
		}
	}
	if p.DefaultSampleType != "time" || p.SampleType[0].Unit != "nanoseconds" || p.DurationNanos != 17500e3 {
		t.Errorf("profile header: default %q, %v, duration %d", p.DefaultSampleType, p.SampleType[0], p.DurationNanos)
	}
}

// TestStream: a trace whose records come from Stream gives the same
// outputs as one holding them, and WriteChrome, which writes an event at
// a time, the bytes of encoding Chrome's value.
func TestStream(t *testing.T) {
	held := synthetic(t)
	streamed := timing.Trace{Spans: held.Spans, Stream: slices.Values(held.Records)}
	var a, b bytes.Buffer
	if err := held.WriteChrome(&a); err != nil {
		t.Fatal(err)
	}
	if err := streamed.WriteChrome(&b); err != nil {
		t.Fatal(err)
	}
	whole, err := json.Marshal(held.Chrome())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), append(whole, '\n')) || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("WriteChrome:\n%s\nstreamed:\n%s\nChrome encoded:\n%s", a.Bytes(), b.Bytes(), whole)
	}
	if fmt.Sprint(held.Summary()) != fmt.Sprint(streamed.Summary()) {
		t.Errorf("summaries differ:\n%v\n%v", held.Summary(), streamed.Summary())
	}
	pa, err1 := held.Profile()
	pb, err2 := streamed.Profile()
	if err1 != nil || err2 != nil || pa.String() != pb.String() {
		t.Errorf("profiles differ (%v, %v)", err1, err2)
	}
}
