package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/graphs/timing"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Limits on single-op mode's tensors.
const (
	maxWeightBytes = 4 << 30
	maxActBytes    = 1 << 30
)

// traceOp runs MUL_MAT of an M x K weight of c.typ by K x N f32
// activations c.reps times after one untraced warm-up.
func traceOp(ctx context.Context, c *config, out io.Writer) (*result, error) {
	w, err := ops.NewTensor("weight", c.typ, int64(c.k), int64(c.m))
	if err != nil {
		return nil, fmt.Errorf("-type %v with -k %d: %w", c.typ, c.k, err)
	}
	x, err := ops.NewTensor("x", quant.F32, int64(c.k), int64(c.n))
	if err != nil {
		return nil, err
	}
	if w.Bytes() > maxWeightBytes || x.Bytes() > maxActBytes || 4*int64(c.m)*int64(c.n) > maxActBytes {
		return nil, fmt.Errorf("a %d x %d %v weight (%d bytes) by %d columns is too big for single-op mode (weights up to %d bytes, activations and result up to %d)",
			c.m, c.k, c.typ, w.Bytes(), c.n, int64(maxWeightBytes), int64(maxActBytes))
	}
	y, err := ops.MulMat(w, x)
	if err != nil {
		return nil, err
	}
	y.SetName("mul_mat")

	b, err := c.target.Open(cli.ResolveThreads(c.threads))
	if err != nil {
		return nil, err
	}
	defer b.Close()
	r := rand.New(rand.NewPCG(1, uint64(c.k)))
	for _, t := range []*ops.Tensor{w, x} {
		if err := fill(b, t, r); err != nil {
			return nil, err
		}
	}
	g, err := graphs.New(y)
	if err != nil {
		return nil, err
	}
	g.SetScope(y, -1, "op")
	fmt.Fprintf(out, "op: MUL_MAT %v weight [%d x %d] by f32 [%d x %d] on %s\n", c.typ, c.m, c.k, c.k, c.n, cli.BackendDesc(b))
	emulatedNote(out, b)
	if err := g.Compute(ctx, b); err != nil { // warm-up
		return nil, err
	}
	res := &result{graph: g, title: fmt.Sprintf("MUL_MAT %v m=%d n=%d k=%d", c.typ, c.m, c.n, c.k), records: newStore()}
	// -counters profiles the first traced run, a node at a time.
	var cnt *counters
	if c.counters {
		if cnt, err = newCounters(c.gpu); err != nil {
			return nil, err
		}
	}
	g.Recorder = func(rec graphs.Record) {
		res.records.Add(rec)
		res.graphRecs = append(res.graphRecs, rec)
		cnt.record(rec)
	}
	var times []time.Duration
	for i := range c.reps {
		start := time.Now()
		path := ""
		if i == 0 {
			path = c.metalCapture // the first traced run is the one captured
		}
		g.Stepwise = i == 0 && cnt != nil
		err := capture(b, path, func() error {
			if !g.Stepwise {
				return g.Compute(ctx, b)
			}
			if err := cnt.start(); err != nil {
				return err
			}
			err := g.Compute(ctx, b)
			if serr := cnt.stop(); err == nil {
				err = serr
			}
			return err
		})
		g.Stepwise = false
		if err != nil {
			return nil, err
		}
		end := time.Now()
		times = append(times, end.Sub(start))
		res.spans = append(res.spans, timing.Span{Name: fmt.Sprintf("run %d", i+1), Start: start, End: end})
	}
	if c.metalCapture != "" {
		fmt.Fprintf(out, "GPU capture of run 1: %s\n", c.metalCapture)
	}
	if cnt != nil {
		if err := cnt.write(out, "run 1", g); err != nil {
			return nil, err
		}
	}
	slices.Sort(times)
	med := times[len(times)/2]
	cost := ops.CostOf(y)
	fmt.Fprintf(out, "%d runs: median %.3f ms, %.2f GFLOP/s, %.2f GB/s (min %.3f ms, max %.3f ms)\n",
		c.reps, ms(med), float64(cost.Flops)/med.Seconds()/1e9, float64(cost.Bytes)/med.Seconds()/1e9, ms(times[0]), ms(times[len(times)-1]))
	return res, nil
}

// emulatedNote says, for an emulated backend, that its times are not
// performance.
func emulatedNote(out io.Writer, b ops.Backend) {
	if ops.IsEmulated(b) {
		fmt.Fprintf(out, "note: %s is emulated: the times below are the emulator's on this CPU, not the device's performance\n", b.Name())
	}
}

// fill allocates t on b and fills it with normal random values encoded
// as t's type, a row at a time.
func fill(b ops.Backend, t *ops.Tensor, r *rand.Rand) error {
	if err := ops.AllocTensor(b, t, 0); err != nil {
		return fmt.Errorf("allocating %s: %w", t.Name, err)
	}
	row := make([]float32, t.Ne[0])
	raw := make([]byte, t.RowBytes())
	for i := range t.NumRows() {
		for j := range row {
			row[j] = float32(r.NormFloat64())
		}
		if err := quant.QuantizeRow(t.Type, row, raw); err != nil {
			return fmt.Errorf("filling %s: %w", t.Name, err)
		}
		if _, err := t.Buffer.WriteAt(raw, t.Offset+i*t.Nb[1]); err != nil {
			return fmt.Errorf("filling %s: %w", t.Name, err)
		}
	}
	return nil
}
