package cuda

import (
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// The formats of issue 26 (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the
// IQ1/IQ2/IQ3 codebook formats): kernels/mul_mat_iq.cu, with GET_ROWS
// decoding eight elements at a time (quants_iq.cuh's kb_iq8; the grids
// in iq_grids.cuh, generated from package quant's tables). GET_ROWS
// takes them in launchGetRows, MUL_MAT and MUL_MAT_ID in their launch
// functions:
//
//   - up to mmvMaxCols columns (pairs): kb_mmvq_* (kb_mmvq1_* for one),
//     mmv.cuh's integer matrix-vector kernel, as for the legacy and K
//     formats (q8Acts): the activations quantized once per node to q8a
//     blocks (kb_quantize_q8a), every 32-element chunk of weights decoded
//     to int8 codes with a scale (and offset) per 16 or 32 elements by
//     quants_iq.cuh's kb_decode<T> (the 4-bit tables' int8 values, the
//     ternary codes less one, the codebooks' signed grid entries; IQ1_S's
//     delta as an offset per 32, IQ1_M's, which changes every 8, folded
//     into 8*value +- 1) and dotted in int32 (__dp4a);
//   - more: the weights are decoded to packed f16 rows in scratch memory
//     (kb_dequant_f16_*: every matrix; of MUL_MAT_ID's experts those its
//     ids name, which kb_iq_used_experts marks first), and
//     the node is computed as if its weights were those f16 rows
//     (viaF16), by the f16 tensor-core tiled kernels (kb_mmh*; kb_mmf_f16
//     without tensor cores).

// iqTypes are the types of kernels/mul_mat_iq.cu (quants_iq.cuh's KB_FOR_IQ_TYPES).
var iqTypes = []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M}

func isIQType(t quant.Type) bool { return slices.Contains(iqTypes, t) }

// scratchIQWeights is the scratch slot of the f16 copies of viaF16 (a
// number clear of op_mul_mat.go's slots).
const scratchIQWeights = 64

// viaF16 computes node t, whose source wi holds weights of an iqTypes
// type, with launch on a copy of t whose source wi is those weights
// decoded to packed f16 rows in scratch memory (a MUL_MAT_ID's experts
// that no pair names are left undecoded: no product reads them).
func (b *Backend) viaF16(t *ops.Tensor, wi int, launch func(*Backend, *ops.Tensor) error) error {
	w := t.Src[wi]
	pw, err := b.ptr(w)
	if err != nil {
		return err
	}
	n := w.Ne[0] * w.Ne[1] * w.Ne[2] * w.Ne[3]
	size := (2*n + 255) / 256 * 256 // the copy, then MUL_MAT_ID's expert flags
	out, err := b.scratchBuffer(scratchIQWeights, size+4*w.Ne[2])
	if err != nil {
		return err
	}
	var used uint64
	if t.Op == ops.OpMulMatID {
		ids := t.Src[ops.MMIDIDs]
		pid, err := b.ptr(ids)
		if err != nil {
			return err
		}
		used = out + uint64(size)
		if err := b.launch("mul_mat_iq.cu", "kb_iq_used_experts", dim3{1, 1, 1}, dim3{256, 1, 1}, 0,
			u64(pid), i64(ids.Nb[0]), i64(ids.Nb[1]), i64(ids.Ne[0]), i64(ids.Ne[1]), i64(w.Ne[2]), u64(used)); err != nil {
			return err
		}
	}
	grid, block := elementGrid(n / 8)
	if err := b.launch("mul_mat_iq.cu", "kb_dequant_f16_"+w.Type.String(), grid, block, 0,
		u64(pw), i64(w.Nb[1]), i64(w.Nb[2]), i64(w.Nb[3]), i64(w.Ne[0]), i64(w.Ne[1]), i64(w.Ne[2]), i64(w.Ne[3]), u64(used), u64(out)); err != nil {
		return err
	}
	w16 := &ops.Tensor{Name: w.Name + " (as f16)", Type: quant.F16, Ne: w.Ne,
		Nb: ops.ContiguousStrides(quant.F16, w.Ne), Buffer: b.scratch[scratchIQWeights]}
	t2 := *t
	t2.Src = slices.Clone(t.Src)
	t2.Src[wi] = w16
	return launch(b, &t2)
}
