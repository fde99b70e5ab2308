package harness

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// smShape is one SOFT_MAX case.
type smShape struct {
	name     string
	ne       [4]int64
	maskNe   [4]int64 // zero: no mask
	maskType quant.Type
	mask     Dist
	sinks    bool
	permuted bool // input allocated [ne0, ne2, ne1, ne3] and permuted
	in       Dist // the zero Dist means Uniform(-4, 4)
	p        ops.SoftMaxParams
	zeroRows []int64 // rows that must come out as zeros
}

func softMaxCase(s smShape) Case {
	ts := types(quant.F32)
	if s.maskNe[0] != 0 {
		ts = opTypes(quant.F32, s.maskType)
	}
	if s.in.Kind == DistUniform && s.in.Lo == 0 && s.in.Hi == 0 {
		s.in = Uniform(-4, 4)
	}
	c := Case{
		Name: s.name, Op: ops.OpSoftMax, Types: ts,
		Build: func(b *Builder) (*ops.Tensor, error) {
			ne := s.ne
			var a *ops.Tensor
			if s.permuted {
				a = b.Permute(b.Leaf("a", quant.F32, s.in, ne[0], ne[2], ne[1], ne[3]), 0, 2, 1, 3)
			} else {
				a = b.Leaf("a", quant.F32, s.in, ne[:]...)
			}
			var mask, sinks *ops.Tensor
			if s.maskNe[0] != 0 {
				mask = b.Leaf("mask", s.maskType, s.mask, s.maskNe[:]...)
			}
			if s.sinks {
				sinks = b.Leaf("sinks", quant.F32, Normal(0, 2), ne[2])
			}
			return ops.SoftMax(a, mask, sinks, s.p)
		},
	}
	if len(s.zeroRows) > 0 {
		c.Check = zeroAt(s.ne, 1, s.zeroRows...)
	}
	return c
}

// softMaxCases covers scale, masks of both types (random, causal, padded,
// broadcast over heads and dims 2-3), ALiBi, sinks, fully masked rows, one
// column, one row, a permuted input, large logits and refused operands.
func softMaxCases() []Case {
	one := ops.SoftMaxParams{Scale: 1}
	eighth := ops.SoftMaxParams{Scale: 0.125}
	ne := [4]int64{64, 7, 4, 1}
	cs := []Case{
		softMaxCase(smShape{name: "ne=[64,7,4,1]", ne: ne, p: one}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],scale=0.125,mask", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Mask(0.2, -2, 0), p: eighth}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],causal", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Causal(), p: eighth}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],mask padded to 8 rows", ne: ne, maskNe: [4]int64{64, 8, 1, 1}, maskType: quant.F16, mask: Causal(), p: one}),
		softMaxCase(smShape{name: "ne=[32,5,8,1],alibi max_bias=8", ne: [4]int64{32, 5, 8, 1}, maskNe: [4]int64{32, 5, 1, 1}, maskType: quant.F32, mask: Mask(0.1, -4, 0), p: ops.SoftMaxParams{Scale: 0.5, MaxBias: 8}}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],causal,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],rows 0,3 masked", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal().WithMaskedRows(0, 3), p: one, zeroRows: []int64{0, 3}}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],rows 2,6 masked,sinks", ne: ne, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F32, mask: Mask(0.3, -1, 0).WithMaskedRows(2, 6), sinks: true, p: one, zeroRows: []int64{2, 6}}),
		softMaxCase(smShape{name: "ne=[32,5,4,3],mask [32,5,2,1]", ne: [4]int64{32, 5, 4, 3}, maskNe: [4]int64{32, 5, 2, 1}, maskType: quant.F16, mask: Mask(0.2, -1, 1), p: one}),
		softMaxCase(smShape{name: "ne=[1,6,2,1]", ne: [4]int64{1, 6, 2, 1}, p: one}),
		softMaxCase(smShape{name: "ne=[256,1,1,1]", ne: [4]int64{256, 1, 1, 1}, p: one}),
		softMaxCase(smShape{name: "ne=[64,0,4,1] (no rows)", ne: [4]int64{64, 0, 4, 1}, p: one}),
		softMaxCase(smShape{name: "ne=[64,7,4,1],a permuted", ne: ne, permuted: true, maskNe: [4]int64{64, 7, 1, 1}, maskType: quant.F16, mask: Causal(), p: eighth}),
		softMaxCase(smShape{name: "ne=[100,3,2,1],logits in [-80,80)", ne: [4]int64{100, 3, 2, 1}, in: Uniform(-80, 80), p: one}),
		large(softMaxCase(smShape{name: "ne=[4096,512,1,1]", ne: [4]int64{4096, 512, 1, 1}, maskNe: [4]int64{4096, 512, 1, 1}, maskType: quant.F16, mask: Causal(), p: eighth})),
		large(softMaxCase(smShape{name: "ne=[512,512,32,1],sinks", ne: [4]int64{512, 512, 32, 1}, maskNe: [4]int64{512, 512, 1, 1}, maskType: quant.F16, mask: Causal(), sinks: true, p: eighth})),
		refuse(Case{Name: "mask [63,7] for ne0=64", Op: ops.OpSoftMax, Types: types(quant.F32, quant.F16),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SoftMax(b.Leaf("a", quant.F32, uni, 64, 7), b.Leaf("mask", quant.F16, Causal(), 63, 7), nil, ops.SoftMaxParams{Scale: 1})
			}}),
		refuse(Case{Name: "3 sinks for 4 heads", Op: ops.OpSoftMax, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.SoftMax(b.Leaf("a", quant.F32, uni, 64, 7, 4), nil, b.Leaf("sinks", quant.F32, uni, 3), ops.SoftMaxParams{Scale: 1})
			}}),
	}
	return cs
}

// faShape is one FLASH_ATTN_EXT case.
type faShape struct {
	heads, kvHeads, d, dv, nq, nkv, q3 int64
	mask                               Dist
	maskType                           quant.Type
	hasMask, sinks, permuted           bool
	p                                  ops.FlashAttnParams
	extra                              string
	zeroQueries                        []int64
}

func (s faShape) name() string {
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

func flashAttnCase(kv quant.Type, s faShape) Case {
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
// in dim 3, odd head sizes where the type allows them, and refused shapes.
func flashAttnCases() []Case {
	var cs []Case
	f16 := quant.F16
	for _, kv := range ops.FlashAttnKVTypes {
		cs = append(cs,
			flashAttnCase(kv, faShape{heads: 8, kvHeads: 4, d: 64, nq: 7, nkv: 33, hasMask: true, maskType: f16, mask: Causal()}),
			flashAttnCase(kv, faShape{heads: 8, kvHeads: 4, d: 64, nq: 7, nkv: 33, hasMask: true, maskType: f16, mask: Causal(), sinks: true}),
			flashAttnCase(kv, faShape{heads: 4, kvHeads: 1, d: 128, nq: 1, nkv: 256}),
			flashAttnCase(kv, faShape{heads: 4, kvHeads: 4, d: 64, nq: 5, nkv: 40, hasMask: true, maskType: f16, mask: Mask(0.3, -1, 0), p: ops.FlashAttnParams{Softcap: 30, Scale: 4}}),
			flashAttnCase(kv, faShape{heads: 8, kvHeads: 2, d: 64, nq: 3, nkv: 64, hasMask: true, maskType: quant.F32, mask: Mask(0.1, -8, 0), p: ops.FlashAttnParams{MaxBias: 8}}),
			flashAttnCase(kv, faShape{heads: 4, kvHeads: 2, d: 32, nq: 6, nkv: 20, hasMask: true, maskType: f16, mask: Causal().WithMaskedRows(1, 4), extra: ",queries 1,4 masked", zeroQueries: []int64{1, 4}}),
			flashAttnCase(kv, faShape{heads: 8, kvHeads: 4, d: 64, nq: 5, nkv: 48, hasMask: true, maskType: f16, mask: Causal(), permuted: true}),
			large(flashAttnCase(kv, faShape{heads: 32, kvHeads: 8, d: 128, nq: 64, nkv: 1024, hasMask: true, maskType: f16, mask: Causal()})),
			large(flashAttnCase(kv, faShape{heads: 32, kvHeads: 8, d: 128, nq: 1, nkv: 4096, hasMask: true, maskType: f16, mask: Causal(), sinks: true})),
		)
		if kv.BlockSize() == 1 {
			cs = append(cs,
				flashAttnCase(kv, faShape{heads: 4, kvHeads: 2, d: 40, nq: 3, nkv: 17, hasMask: true, maskType: f16, mask: Causal()}),
				flashAttnCase(kv, faShape{heads: 2, kvHeads: 1, d: 72, dv: 24, nq: 2, nkv: 9}),
			)
		} else {
			c := flashAttnCase(kv, faShape{heads: 4, kvHeads: 2, d: 40, nq: 3, nkv: 17})
			c.Name += " (not a block multiple)"
			cs = append(cs, refuse(c))
		}
		bad := flashAttnCase(kv, faShape{heads: 6, kvHeads: 4, d: 64, nq: 2, nkv: 8})
		bad.Name += " (heads not a multiple of kv)"
		cs = append(cs, refuse(bad))
	}
	cs = append(cs,
		flashAttnCase(f16, faShape{heads: 4, kvHeads: 2, d: 64, nq: 3, nkv: 16, q3: 2, hasMask: true, maskType: f16, mask: Causal()}),
		flashAttnCase(f16, faShape{heads: 2, kvHeads: 1, d: 64, nq: 0, nkv: 8, extra: " (no queries)"}),
		flashAttnCase(f16, faShape{heads: 2, kvHeads: 1, d: 64, nq: 3, nkv: 0, extra: " (empty KV: zeros)", zeroQueries: []int64{0, 1, 2}}),
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
