package harness

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

func init() { register(flashAttnDef) }

// flashAttnDef declares FLASH_ATTN_EXT: f32 queries against a K/V cache of
// the case's type, with masks, sinks, softcap, ALiBi and GQA.
var flashAttnDef = OpDef{
	Op: ops.OpFlashAttnExt, TypeRole: "K/V cache", FlopBound: true,
	Types: ops.FlashAttnKVTypes, DefaultType: quant.F16,
	Dims: []Dim{
		{DimD, 128, "head size"},
		{DimHeads, 32, "query heads"},
		{DimKVHeads, 8, "K/V heads (GQA)"},
		{DimN, 1, "queries (tokens)"},
		{DimKV, 4096, "keys (KV cache length)"},
	},
	Note: "q [d, n, heads] f32, k and v [d, kv, kv_heads] of the type, causal f16 mask, scale 1/sqrt(d)",
	Shapes: []Dims{
		{DimD: 128, DimHeads: 32, DimKVHeads: 8, DimN: 1, DimKV: 4096},
		{DimD: 128, DimHeads: 32, DimKVHeads: 8, DimN: 64, DimKV: 512},
	},
	point: func(t quant.Type, d Dims) (Case, error) {
		return flashAttn{heads: d[DimHeads], kvHeads: d[DimKVHeads], d: d[DimD], nq: d[DimN], nkv: d[DimKV],
			hasMask: true, maskType: quant.F16, mask: Causal()}.Case(t), nil
	},
	cases:  flashAttnCases,
	sample: sampleFlashAttn,
	Tolerances: []Tolerance{
		{Type: quant.F32, MaxNMSE: 2e-11, MaxRelErr: 3e-5,
			Reason: "f32 K/V: online softmax over up to 4096 keys in f32; observed NMSE 2.1e-12 (nkv=4096), rel 2.5e-6"},
		{Type: quant.F16, MaxNMSE: 4e-6, MaxRelErr: 3e-2,
			Reason: "f16 K/V: q rounded to f16 for q·k and f16 values, as ggml's CPU kernel; observed NMSE 4.2e-7 (softcap, sharp softmax), rel 2.5e-3"},
		{Type: AnyType, MaxNMSE: 8e-4, MaxRelErr: 0.2,
			Reason: "q8_0/q4_0 K/V: q quantized to q8_0 for q·k, amplified by sharp softmaxes; observed NMSE 8e-5 (q8_0, softcap with scale 4), rel 1.9e-2"},
	},
}

// flashAttn is a FLASH_ATTN_EXT variant: q [d, nq, heads, q3] f32, k
// [d, nkv, kvHeads] and v [dv, nkv, kvHeads] of the case's type.
type flashAttn struct {
	heads, kvHeads, d, dv, nq, nkv, q3 int64 // zero dv means d, zero q3 means 1
	mask                               Dist
	maskType                           quant.Type
	hasMask, sinks, permuted           bool
	p                                  ops.FlashAttnParams // zero Scale means 1/sqrt(d)
	extra                              string              // added to the name
	zeroQueries                        []int64             // queries that must come out as zeros
}

func (s flashAttn) name() string {
	n := fmt.Sprintf("heads=%d,kv=%d,d=%d", s.heads, s.kvHeads, s.d)
	if s.dv != s.d {
		n += fmt.Sprintf(",dv=%d", s.dv)
	}
	n += fmt.Sprintf(",nq=%d,nkv=%d", s.nq, s.nkv)
	if s.q3 > 1 {
		n += fmt.Sprintf(",q3=%d", s.q3)
	}
	if s.hasMask {
		n += ",mask"
		if s.maskType == quant.F32 {
			n += " f32"
		}
	}
	if s.sinks {
		n += ",sinks"
	}
	if s.p.Softcap != 0 {
		n += fmt.Sprintf(",softcap=%g", s.p.Softcap)
	}
	if s.p.MaxBias != 0 {
		n += fmt.Sprintf(",alibi=%g", s.p.MaxBias)
	}
	if s.permuted {
		n += ",q/k/v permuted"
	}
	return n + s.extra
}

// Case returns the variant with K and V of type kv.
func (s flashAttn) Case(kv quant.Type) Case {
	if s.dv == 0 {
		s.dv = s.d
	}
	if s.q3 == 0 {
		s.q3 = 1
	}
	if s.p.Scale == 0 {
		s.p.Scale = float32(1 / math.Sqrt(float64(s.d)))
	}
	c := Case{
		Name: s.name(), Op: ops.OpFlashAttnExt, Types: types(kv),
		Build: func(b *Builder) (*ops.Tensor, error) {
			var q, k, v *ops.Tensor
			if s.permuted {
				// As llama.cpp lays them out: q [d, heads, nq] and a
				// KV cache [d, kv heads, nkv], permuted to put the
				// sequence in dimension 1.
				q = b.Permute(b.Leaf("q", quant.F32, uni, s.d, s.heads, s.nq, s.q3), 0, 2, 1, 3)
				k = b.Permute(b.Leaf("k", kv, uni, s.d, s.kvHeads, s.nkv), 0, 2, 1, 3)
				v = b.Permute(b.Leaf("v", kv, uni, s.dv, s.kvHeads, s.nkv), 0, 2, 1, 3)
			} else {
				q = b.Leaf("q", quant.F32, uni, s.d, s.nq, s.heads, s.q3)
				k = b.Leaf("k", kv, uni, s.d, s.nkv, s.kvHeads)
				v = b.Leaf("v", kv, uni, s.dv, s.nkv, s.kvHeads)
			}
			var mask, sinks *ops.Tensor
			if s.hasMask {
				mask = b.Leaf("mask", s.maskType, s.mask, s.nkv, s.nq)
			}
			if s.sinks {
				sinks = b.Leaf("sinks", quant.F32, Normal(0, 2), s.heads)
			}
			return ops.FlashAttnExt(q, k, v, mask, sinks, s.p)
		},
	}
	if len(s.zeroQueries) > 0 {
		c.Check = zeroAt([4]int64{s.dv, s.heads, s.nq, s.q3}, 2, s.zeroQueries...)
	}
	return c
}

// flashAttnCases covers K/V in f16, f32, q8_0 and q4_0: GQA and MQA,
// decoding one query, causal and random masks (f16 and f32), sinks,
// softcap, ALiBi, a fully masked query, views of a KV cache, broadcasting
// in dim 3, odd head sizes where the type allows them, small heads (8 and
// 16), and refused shapes.
func flashAttnCases() []Case {
	var cs []Case
	f16 := quant.F16
	for _, kv := range ops.FlashAttnKVTypes {
		cs = append(cs,
			flashAttn{heads: 8, kvHeads: 4, d: 64, nq: 7, nkv: 33, hasMask: true, maskType: f16, mask: Causal()}.Case(kv),
			flashAttn{heads: 8, kvHeads: 4, d: 64, nq: 7, nkv: 33, hasMask: true, maskType: f16, mask: Causal(), sinks: true}.Case(kv),
			flashAttn{heads: 4, kvHeads: 1, d: 128, nq: 1, nkv: 256}.Case(kv),
			flashAttn{heads: 4, kvHeads: 4, d: 64, nq: 5, nkv: 40, hasMask: true, maskType: f16, mask: Mask(0.3, -1, 0), p: ops.FlashAttnParams{Softcap: 30, Scale: 4}}.Case(kv),
			flashAttn{heads: 8, kvHeads: 2, d: 64, nq: 3, nkv: 64, hasMask: true, maskType: quant.F32, mask: Mask(0.1, -8, 0), p: ops.FlashAttnParams{MaxBias: 8}}.Case(kv),
			flashAttn{heads: 4, kvHeads: 2, d: 32, nq: 6, nkv: 20, hasMask: true, maskType: f16, mask: Causal().WithMaskedRows(1, 4), extra: ",queries 1,4 masked", zeroQueries: []int64{1, 4}}.Case(kv),
			flashAttn{heads: 8, kvHeads: 4, d: 64, nq: 5, nkv: 48, hasMask: true, maskType: f16, mask: Causal(), permuted: true}.Case(kv),
			large(flashAttn{heads: 32, kvHeads: 8, d: 128, nq: 64, nkv: 1024, hasMask: true, maskType: f16, mask: Causal()}.Case(kv)),
			large(flashAttn{heads: 32, kvHeads: 8, d: 128, nq: 1, nkv: 4096, hasMask: true, maskType: f16, mask: Causal(), sinks: true}.Case(kv)),
		)
		if kv.BlockSize() == 1 {
			cs = append(cs,
				flashAttn{heads: 4, kvHeads: 2, d: 40, nq: 3, nkv: 17, hasMask: true, maskType: f16, mask: Causal()}.Case(kv),
				flashAttn{heads: 2, kvHeads: 1, d: 72, dv: 24, nq: 2, nkv: 9}.Case(kv),
			)
		} else {
			cs = append(cs, refuse(flashAttn{heads: 4, kvHeads: 2, d: 40, nq: 3, nkv: 17, extra: " (not a block multiple)"}.Case(kv)))
		}
		cs = append(cs, refuse(flashAttn{heads: 6, kvHeads: 4, d: 64, nq: 2, nkv: 8, extra: " (heads not a multiple of kv)"}.Case(kv)))
	}
	// Non-finite inputs: a NaN sink, mask value, q, or K row a query
	// sees makes the query's row (of the head, or of every head) NaN; a
	// NaN in a V row makes that element of the rows that see it NaN, a
	// +Inf +Inf; keys masked with -Inf for every query never contribute,
	// NaN K/V rows and all; a -Inf sink is none, a +Inf one makes its head
	// NaN (exp(Inf - Inf), as SOFT_MAX). (A NaN in K/V of a
	// block type does not survive the quantizer that stores it, so those
	// types take NaN in q, the mask and the sinks only.)
	for _, kv := range []quant.Type{f16, quant.F32, quant.Q8_0} {
		fa := flashAttn{heads: 4, kvHeads: 2, d: 64, nq: 5, nkv: 20, hasMask: true, maskType: f16, mask: Causal(), sinks: true}
		cs = append(cs,
			planted(fa.Case(kv), at("sinks", nan, 1)),
			planted(fa.Case(kv), at("mask", nan, 2, 3)),
			planted(fa.Case(kv), at("q", nan, 5, 2, 3)),
		)
		if kv.BlockSize() > 1 {
			continue
		}
		hide := []Plant{at("k", nan, 3, 10, 0), at("v", nan, 5, 10, 1)}
		for q := range fa.nq { // key 10 masked for every query
			hide = append(hide, at("mask", ninf, 10, q))
		}
		noSink := fa
		noSink.sinks = false
		cs = append(cs,
			planted(fa.Case(kv), at("k", nan, 0, 4, 1)),
			planted(fa.Case(kv), at("v", nan, 7, 4, 0)),
			planted(noSink.Case(kv), at("v", pinf, 3, 0, 1)),
			plantedFinite(fa.Case(kv), hide...),
			// Key 19 is seen by query 4 alone: its NaN V row must not
			// reach the others, whose mask hides it.
			planted(fa.Case(kv), at("v", nan, 6, 19, 0)),
			plantedFinite(fa.Case(kv), at("sinks", ninf, 0)),
			planted(fa.Case(kv), at("sinks", pinf, 2)),
		)
	}
	// Small heads (stories260K has d=8): the CPU has its own path for
	// d and dv of 8 and 16 with f16 K/V; prefill (causal mask) and decode
	// (a random mask: a causal one hides nothing from the last query), GQA.
	for _, d := range []int64{8, 16} {
		cs = append(cs,
			flashAttn{heads: 8, kvHeads: 2, d: d, nq: 7, nkv: 33, hasMask: true, maskType: f16, mask: Causal()}.Case(f16),
			flashAttn{heads: 8, kvHeads: 2, d: d, nq: 1, nkv: 70, hasMask: true, maskType: f16, mask: Mask(0.3, -1, 0)}.Case(f16),
		)
	}
	cs = append(cs,
		flashAttn{heads: 4, kvHeads: 2, d: 64, nq: 3, nkv: 16, q3: 2, hasMask: true, maskType: f16, mask: Causal()}.Case(f16),
		flashAttn{heads: 2, kvHeads: 1, d: 64, nq: 0, nkv: 8, extra: " (no queries)"}.Case(f16),
		flashAttn{heads: 2, kvHeads: 1, d: 64, nq: 3, nkv: 0, extra: " (empty KV: zeros)", zeroQueries: []int64{0, 1, 2}}.Case(f16),
		// A mask with fewer rows than queries: the variant's mask always
		// has nq rows.
		refuse(Case{Name: "mask [16,2] for nq=3", Op: ops.OpFlashAttnExt, Types: types(f16),
			Build: func(b *Builder) (*ops.Tensor, error) {
				q := b.Leaf("q", quant.F32, uni, 64, 3, 4)
				k := b.Leaf("k", f16, uni, 64, 16, 2)
				v := b.Leaf("v", f16, uni, 64, 16, 2)
				m := b.Leaf("mask", f16, Causal(), 16, 2)
				return ops.FlashAttnExt(q, k, v, m, nil, ops.FlashAttnParams{Scale: 0.125})
			}}),
	)
	return cs
}

// sampleQueries is the number of query rows per sampled block of a
// FLASH_ATTN_EXT: every head and sequence of those rows is computed.
const sampleQueries = 2

// sampleFlashAttn samples blocks of sampleQueries query rows (all heads,
// all sequences), with the matching rows of the mask.
func sampleFlashAttn(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	q := node.Src[ops.FAQ]
	var mask, sinks *ops.Tensor
	if len(node.Src) > ops.FAMask {
		mask = node.Src[ops.FAMask]
	}
	if len(node.Src) > ops.FASinks {
		sinks = node.Src[ops.FASinks]
	}
	p, _ := node.Params.(ops.FlashAttnParams)
	dv, nh, nq, ns := node.Ne[0], node.Ne[1], node.Ne[2], node.Ne[3]
	for _, r0 := range sampleStarts(rng, nq, sampleQueries) {
		rows := min(sampleQueries, nq-r0)
		qv, err := ops.View(q, []int64{q.Ne[0], rows, q.Ne[2], q.Ne[3]}, q.Nb[:], r0*q.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		mv := mask
		if mask != nil {
			if mv, err = ops.View(mask, []int64{mask.Ne[0], rows, mask.Ne[2], mask.Ne[3]}, mask.Nb[:], r0*mask.Nb[1]); err != nil {
				return nil, nil, err
			}
		}
		sub, err := ops.FlashAttnExt(qv, node.Src[ops.FAK], node.Src[ops.FAV], mv, sinks, p)
		if err != nil {
			return nil, nil, err
		}
		vals, err := reference.Compute(sub)
		if err != nil {
			return nil, nil, err
		}
		// vals is [dv, nh, rows, ns]; the node's output [dv, nh, nq, ns].
		for s := range ns {
			for r := range rows {
				for h := range nh {
					for e := range dv {
						idx = append(idx, e+dv*(h+nh*(r0+r+nq*s)))
						want = append(want, vals[e+dv*(h+nh*(r+rows*s))])
					}
				}
			}
		}
	}
	return idx, want, nil
}
