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

// kb_fa_mm's geometry (FA_QB query rows by FA_KB keys), and the fewest
// queries per head that take a prefill kernel (kb_fa_pre, else kb_fa_mm;
// fewer take the decode kernel, kb_fa_vec).
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

// The decode kernel's geometry (kb_fa_vec): up to faVecRows rows
// (simdgroups) per threadgroup, K/V chunks of faVecChunk head elements
// in a tile of 32 rows padded by faVecPad, splits of at least
// faMinSplit keys, and about faVecGroups threadgroups to aim for.
const (
	faVecRows   = 8   // FA_VNSG
	faVecChunk  = 64  // FA_VCH
	faVecPad    = 4   // FA_VPAD
	faMinSplit  = 128 // keys
	faVecGroups = 128
)

// faVecPlan is a decode launch: rows of the GQA group per threadgroup
// (simdgroups), threadgroups per K/V head (chunks), keys per split and
// splits.
type faVecPlan struct {
	nsg, chunks, split, nsplit int
}

// planFlashAttnVec plans the decode kernel for q against k: the GQA
// group's query rows (heads of a K/V head times queries) in threadgroups
// of up to faVecRows, and the keys split in multiples of 32, at least
// faMinSplit each, until there are about faVecGroups threadgroups.
func planFlashAttnVec(q, k *ops.Tensor) faVecPlan {
	rows := int(q.Ne[2]/k.Ne[2]) * int(q.Ne[1])
	p := faVecPlan{nsg: max(1, min(rows, faVecRows))}
	p.chunks = (rows + p.nsg - 1) / p.nsg
	groups := int(k.Ne[2]) * p.chunks * int(q.Ne[3])
	want := (faVecGroups + groups - 1) / groups
	nkv := int(k.Ne[1])
	per := (nkv + want - 1) / want
	p.split = max(faMinSplit, (per+31)/32*32)
	p.nsplit = max(1, (nkv+p.split-1)/p.split)
	return p
}

// The prefill kernel's geometry (kb_fa_pre): keys per step (FA_PKB) and
// the most simdgroups (8 rows of a GQA group each) per threadgroup.
const (
	faPreKeys = 32 // FA_PKB
	faPreRows = 8
	faPrePad  = 8 // FA_PPAD
)

// faTileBytes is the bytes of an element of a K or V tile of type t in
// threadgroup memory: float for f32, half for the others.
func faTileBytes(t quant.Type) int {
	if t == quant.F32 {
		return 4
	}
	return 2
}

// faPreShared is kb_fa_pre's threadgroup memory for nsg simdgroups (rows
// padded by faPrePad elements; O is in simdgroup matrices, not here).
func faPreShared(nsg, dk, dv int, kt, vt quant.Type) int {
	dks, dvs := dk+faPrePad, dv+faPrePad
	tile := max(faPreKeys*dks*faTileBytes(kt), faPreKeys*dvs*faTileBytes(vt))
	per := 8*dks*faTileBytes(kt) + 8*(faPreKeys+faPrePad)*4 + 24*4 + 64*4
	return tile + nsg*per + 3*nsg*4
}

// faPreSimdgroups is the simdgroups of a kb_fa_pre launch for nr rows
// (a GQA group's query heads times the queries): a simdgroup per 8, up to
// faPreRows, fewer where the threadgroup memory (at most limit bytes)
// takes fewer, 0 where it takes none.
func faPreSimdgroups(nr int64, dk, dv int, kt, vt quant.Type, limit int) int {
	nsg := min(faPreRows, int((nr+7)/8))
	for nsg > 0 && faPreShared(nsg, dk, dv, kt, vt) > limit {
		nsg--
	}
	return nsg
}

// maskVec reports whether the mask's rows (bound at b) take float4 or
// half4 loads at every eighth key.
func maskVec(b binding, m *ops.Tensor) bool {
	switch {
	case m.Nb[0] != m.Type.TypeSize():
		return false
	case m.Type == quant.F16:
		return bindingAligned(b, m, 8)
	}
	return bindingAligned(b, m, 16)
}

// kvVec reports whether rows of K or V (x, bound at b) take float4 or
// half4 loads: f32 or f16 rows aligned to 16 or 8 bytes.
func kvVec(b binding, x *ops.Tensor) bool {
	if x.Nb[0] != x.Type.TypeSize() {
		return false
	}
	switch x.Type {
	case quant.F32:
		return bindingAligned(b, x, 16)
	case quant.F16:
		return bindingAligned(b, x, 8)
	}
	return false
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
	tiled := q.Ne[1] >= faMinTile && dk%8 == 0 && dv%8 == 0
	plan := planFlashAttnVec(q, k)
	if tiled {
		plan = faVecPlan{}
	}
	s.I32(int32(plan.split)).I32(int32(plan.nsplit)).I32(b32(kvVec(kb, k))).I32(b32(kvVec(vb, v))).I32(int32(plan.chunks))
	s.I32(b32(mask != nil && maskVec(mb, mask)))
	rows := q.Ne[2] / k.Ne[2] * q.Ne[1] // a GQA group's rows
	if nsg := faPreSimdgroups(rows, dk, dv, k.Type, v.Type, e.b.dev.maxThreadgroupMemory()); tiled && nsg > 0 {
		// Half simdgroup matrices, 32 keys a step; a threadgroup takes
		// rows of one K/V head's group of query heads.
		name := fmt.Sprintf("kb_fa_pre_%v_%v", k.Type, v.Type)
		return e.dispatch("flash_attn_ext.metal", name, [3]int{int((rows + 8*int64(nsg) - 1) / (8 * int64(nsg))), int(k.Ne[2]), int(q.Ne[3])},
			[3]int{32 * nsg, 1, 1}, []int{faPreShared(nsg, dk, dv, k.Type, v.Type)}, args(&s), qb, kb, vb, mb, sb, d)
	}
	if tiled {
		// Too large a head for kb_fa_pre's threadgroup memory (f32 K/V
		// of 256): 8x8 float tiles.
		// Query tiles with simdgroup matrices.
		per := faKB*max(dk, dv) + faQB*dv + 2*faQB*faKB + 3*faQB
		nsg := min(4, (e.b.dev.maxThreadgroupMemory()/4-faQB*dk)/per, int((k.Ne[1]+faKB-1)/faKB))
		nsg = max(nsg, 1)
		name := fmt.Sprintf("kb_fa_mm_%v_%v", k.Type, v.Type)
		return e.dispatch("flash_attn_ext.metal", name, [3]int{int((q.Ne[1] + faQB - 1) / faQB), int(q.Ne[2]), int(q.Ne[3])},
			[3]int{32 * nsg, 1, 1}, []int{4 * (faQB*dk + nsg*per)}, args(&s), qb, kb, vb, mb, sb, d)
	}
	// The decode kernel, and kb_fa_combine where the keys are split.
	part := d
	part.index = 7
	if plan.nsplit > 1 {
		if part, err = e.scratch(4 * q.Ne[1] * q.Ne[2] * q.Ne[3] * int64(plan.nsplit) * int64(dv+2)); err != nil {
			return err
		}
		part.index = 7
	}
	chunks := (max(dk, dv) + faVecChunk - 1) / faVecChunk
	per := chunks*faVecChunk + 64
	shmem := 32*(faVecChunk+faVecPad)*4 + 4*(plan.nsg*per+33)
	name := fmt.Sprintf("kb_fa_vec_%v_%v", k.Type, v.Type)
	if err := e.dispatch("flash_attn_ext.metal", name, [3]int{plan.nsplit, int(k.Ne[2]) * plan.chunks, int(q.Ne[3])},
		[3]int{32 * plan.nsg, 1, 1}, []int{shmem}, args(&s), qb, kb, vb, mb, sb, d, part); err != nil {
		return err
	}
	if plan.nsplit == 1 {
		return nil
	}
	return e.dispatch("flash_attn_ext.metal", "kb_fa_combine", [3]int{int(q.Ne[1]), int(q.Ne[2]), int(q.Ne[3])},
		[3]int{32, 1, 1}, nil, args(&s), sb, d, part)
}
