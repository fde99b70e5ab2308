package metal

import (
	"fmt"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// FLASH_ATTN_EXT: kernels/flash_attn_ext.metal.

func init() {
	kernelsByOp.Add(ops.OpFlashAttnExt, supportsFlashAttn, encodeFlashAttn)
}

// faMaxHead is the largest head size the kernels take (FA_DMAX).
const faMaxHead = 256

// The query-tile kernel's geometry (FA_QB query rows by FA_KB keys), and
// the fewest queries per head that take it (fewer take the vector
// kernel, a query row per threadgroup).
const (
	faQB      = 8
	faKB      = 8
	faMinTile = 4
)

func supportsFlashAttn(t *ops.Tensor) error {
	p, ok := t.Params.(ops.FlashAttnParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.FlashAttnParams", t.Params)
	}
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	want, err := ops.FlashAttnExt(q, k, v, srcAt(t, ops.FAMask), srcAt(t, ops.FASinks), p)
	if err != nil {
		return err
	}
	if want.Ne != t.Ne || want.Type != t.Type {
		return fmt.Errorf("node %v %v, the op makes %v %v", t.Type, t.Ne, want.Type, want.Ne)
	}
	for _, x := range []*ops.Tensor{k, v} {
		if !slices.Contains(ops.FlashAttnKVTypes, x.Type) {
			return fmt.Errorf("K/V type %v", x.Type)
		}
	}
	if k.Ne[0] > faMaxHead || v.Ne[0] > faMaxHead {
		return fmt.Errorf("head sizes %d and %d: the kernels take up to %d", k.Ne[0], v.Ne[0], faMaxHead)
	}
	if s := srcAt(t, ops.FASinks); s != nil && s.Nb[0] != 4 {
		return fmt.Errorf("sinks are not packed")
	}
	return nil
}

// faSimdgroups is how many simdgroups share the keys of one query row.
func faSimdgroups(nkv int64) int {
	switch {
	case nkv >= 256:
		return 4
	case nkv >= 64:
		return 2
	}
	return 1
}

func encodeFlashAttn(e *encoder, t *ops.Tensor) error {
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	mask, sinks := srcAt(t, ops.FAMask), srcAt(t, ops.FASinks)
	p := t.Params.(ops.FlashAttnParams)
	qb, err := e.src(1, q)
	if err != nil {
		return err
	}
	kb, err := e.src(2, k)
	if err != nil {
		return err
	}
	vb, err := e.src(3, v)
	if err != nil {
		return err
	}
	mb, sb := qb, qb // unused bindings when absent
	mb.index, sb.index = 4, 5
	mt := q
	if mask != nil {
		if mb, err = e.src(4, mask); err != nil {
			return err
		}
		mt = mask
	}
	if sinks != nil {
		if sb, err = e.src(5, sinks); err != nil {
			return err
		}
	}
	d, err := e.out(6, t)
	if err != nil {
		return err
	}
	nl, m0, m1 := alibi(p.MaxBias, q.Ne[2])
	var s gpu.CStruct
	s.Tensor(q).Tensor(k).Tensor(v).Tensor(mt).Tensor(t)
	s.F32(p.Scale).F32(p.MaxBias).F32(p.Softcap).F32(m0).F32(m1)
	s.I32(nl).I32(b32(mask != nil)).I32(b32(mask != nil && mask.Type == quant.F16)).I32(b32(sinks != nil))
	dk, dv := int(k.Ne[0]), int(v.Ne[0])
	if q.Ne[1] >= faMinTile && dk%8 == 0 && dv%8 == 0 {
		// Query tiles with simdgroup matrices.
		per := faKB*max(dk, dv) + faQB*dv + 2*faQB*faKB + 3*faQB
		nsg := min(4, (e.b.dev.maxThreadgroupMemory()/4-faQB*dk)/per, int((k.Ne[1]+faKB-1)/faKB))
		nsg = max(nsg, 1)
		name := fmt.Sprintf("kb_fa_mm_%v_%v", k.Type, v.Type)
		return e.dispatch("flash_attn_ext.metal", name, [3]int{int((q.Ne[1] + faQB - 1) / faQB), int(q.Ne[2]), int(q.Ne[3])},
			[3]int{32 * nsg, 1, 1}, []int{4 * (faQB*dk + nsg*per)}, args(&s), qb, kb, vb, mb, sb, d)
	}
	nsg := faSimdgroups(k.Ne[1])
	name := fmt.Sprintf("kb_fa_vec_%v_%v", k.Type, v.Type)
	return e.dispatch("flash_attn_ext.metal", name, [3]int{int(q.Ne[1]), int(q.Ne[2]), int(q.Ne[3])}, [3]int{32 * nsg, 1, 1},
		[]int{4 * nsg * (2 + dv)}, args(&s), qb, kb, vb, mb, sb, d)
}
