package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// applyShifts re-ropes the cached keys of every cell whose position
// seq_add or seq_div moved (llama.cpp's has_shift path): for each store
// and stream with a shift, one graph that reads each layer's K rows
// [0, n_kv) as f32 (GET_ROWS, which also dequantizes), rotates each cell's
// heads by its shift (ROPE with the shifts as positions) and writes them
// back in place (CPY). A rotation by d after one by p is one by p + d, so
// the keys end up as if roped at the new positions. The magnitude factor
// of YaRN is not applied twice: the shift's rope has an attention factor
// that cancels it (llama.cpp applies it again, except for DeepSeek-2).
func (c *Context) applyShifts(ctx context.Context) error {
	h := c.m.Hparams
	for _, st := range c.kv.stores {
		for s, cache := range st.cells {
			if !cache.HasShift() {
				continue
			}
			if err := c.shiftStream(ctx, st, s, h); err != nil {
				return fmt.Errorf("model: re-roping shifted keys: %w", err)
			}
			cache.ClearShifts()
		}
	}
	return nil
}

func (c *Context) shiftStream(ctx context.Context, st *kvStore, s int, h Hparams) error {
	cache := st.cells[s]
	n := int64(cache.NKV(kvPad))
	g := &graphs.Graph{}
	b := &builder{g: g, block: "shift"}
	ids := b.node("shift_cells", -1)(ops.NewTensor("", quant.I32, n))
	pos := b.node("shift_pos", -1)(ops.NewTensor("", quant.I32, n))
	if b.err != nil {
		return b.err
	}
	p := ops.RopeParams{
		NDims: h.NRot, Mode: h.RopeMode, NCtxOrig: h.RopeNCtxOrig,
		FreqBase: h.RopeFreqBase, FreqScale: h.RopeFreqScale, ExtFactor: h.RopeExtFactor,
		AttnFactor: 1, BetaFast: h.RopeBetaFast, BetaSlow: h.RopeBetaSlow,
	}
	if h.RopeExtFactor != 0 {
		p.AttnFactor = float32(1 / (1 + 0.1*math.Log(1/float64(h.RopeFreqScale))))
	}
	var outs []*ops.Tensor
	base := int64(s * st.size)
	for il, k := range st.k {
		if k == nil {
			continue
		}
		kv := b.node("k_stream", il)(ops.View(k, []int64{k.Ne[0], n}, []int64{0, k.Nb[1]}, base*k.Nb[1]))
		rows := b.node("k_f32", il)(ops.GetRows(kv, ids))
		rows = b.node("k_heads", il)(ops.Reshape(rows, int64(h.HeadDimK), int64(h.NHeadKV), n))
		rows = b.node("k_shifted", il)(ops.Rope(rows, pos, c.m.Weights.RopeFreqs, p))
		outs = append(outs, b.node("k_shift_store", il)(ops.Cpy(rows, kv)))
	}
	if b.err != nil {
		return b.err
	}
	if err := g.Expand(outs...); err != nil {
		return err
	}
	idv, shifts := make([]int32, n), make([]int32, n)
	cache.Shifts(shifts)
	for i := range idv {
		idv[i] = int32(i)
	}
	for _, in := range []struct {
		t *ops.Tensor
		v []int32
	}{{ids, idv}, {pos, shifts}} {
		if err := ops.AllocTensor(c.b, in.t, 0); err != nil {
			return err
		}
		raw := make([]byte, 4*len(in.v))
		for i, x := range in.v {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
		}
		if _, err := in.t.Buffer.WriteAt(raw, in.t.Offset); err != nil {
			return err
		}
	}
	g.Hook, g.Recorder, g.Stepwise = c.hook, c.rec, c.stepwise
	return c.sched.Compute(ctx, g)
}
