package metal

import (
	"fmt"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT: kernels/mul_mat.metal.

func init() {
	kernelsByOp.Add(ops.OpMulMat, supportsMulMat, encodeMulMat)
}

// Launch geometry of mul_mat.metal's kernels.
const (
	mvSimdgroups = 2  // KB_MV_NSG, and mm.h's MV_NSG
	mvRows       = 4  // mm.h's MV_R: weight rows per simdgroup of kb_mv_rows (MUL_MAT_ID)
	mmRows       = 64 // MM_BM: weight rows per threadgroup
	mmCols       = 32 // MM_BN: activation columns per threadgroup
	mmThreads    = 128
	// mvMaxCols is the most activation columns the matrix-vector kernel
	// takes (KB_MV_NC); more go to the simdgroup-matrix kernel.
	mvMaxCols = 8
)

// mvTypeRows is the weight rows a simdgroup of kb_mul_mv_<t> takes: mv.h's
// kb_mv<T>::NR, as ggml-metal's N_R0 (four for the legacy 4- and 5-bit
// formats and Q2_K, two for the 8-bit ones, the other K-quants and the
// formats of issue 26, kb_mv_dq).
func mvTypeRows(t quant.Type) int64 {
	switch t {
	case quant.Q8_0, quant.Q8_1, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K:
		return 2
	}
	if slices.Contains(newWeightTypes, t) {
		return 2
	}
	return 4
}

// mvAlign is the alignment kb_mul_mv_<t> reads the weight rows' block
// fields at: 4 bytes for the blocks whose size is a multiple of 4 (32-bit
// loads), 2 for the others (16-bit loads), 1 for the float types (scalar
// loads; vector loads where encodeMulMat's avec says) and MXFP4 (17-byte
// blocks, read a byte at a time). Rows less aligned take the
// simdgroup-matrix kernel, which reads bytes.
func mvAlign(t quant.Type) int64 {
	switch {
	case t.BlockSize() == 1, t.TypeSize()%2 != 0:
		return 1
	case t.TypeSize()%4 == 0:
		return 4
	}
	return 2
}

// bindingAligned reports whether the binding's offset and the tensor's strides
// over dims 1-3 are multiples of n.
func bindingAligned(b binding, t *ops.Tensor, n int64) bool {
	if b.off%n != 0 {
		return false
	}
	for _, nb := range t.Nb[1:] {
		if nb%n != 0 {
			return false
		}
	}
	return true
}

// actType is the kernels' number for an activation type.
func actType(t quant.Type) (int32, error) {
	switch t {
	case quant.F32:
		return 0, nil
	case quant.F16:
		return 1, nil
	case quant.BF16:
		return 30, nil
	}
	return 0, fmt.Errorf("activation type %v, want f32, f16 or bf16", t)
}

func supportsMulMat(t *ops.Tensor) error {
	a, b := t.Src[0], t.Src[1]
	if !isWeightType(a.Type) {
		return fmt.Errorf("weight type %v", a.Type)
	}
	if !a.HasContiguousRows() {
		return fmt.Errorf("weight rows are not packed")
	}
	if _, err := actType(b.Type); err != nil {
		return err
	}
	if t.Type != quant.F32 {
		return fmt.Errorf("output type %v, want f32", t.Type)
	}
	return nil
}

func encodeMulMat(e *encoder, t *ops.Tensor) error {
	a, b := t.Src[0], t.Src[1]
	ab, err := e.src(1, a)
	if err != nil {
		return err
	}
	bb, err := e.src(2, b)
	if err != nil {
		return err
	}
	d, err := e.out(3, t)
	if err != nil {
		return err
	}
	bt, _ := actType(b.Type)
	var s gpu.CStruct
	s.Tensor(a).Tensor(b).Tensor(t).I64(b.Ne[2] / a.Ne[2]).I64(b.Ne[3] / a.Ne[3]).I32(bt)
	m, n, batches := t.Ne[0], t.Ne[1], int(t.Ne[2]*t.Ne[3])
	if n <= mvMaxCols && bindingAligned(ab, a, mvAlign(a.Type)) {
		// Vector loads: packed f32 or f16 columns (two float4, one
		// 16-byte vector of f16) and float rows (two float4, one 16-byte
		// vector of f16 or bf16), 16-byte aligned at every eighth element.
		bvec := b.Nb[0] == b.Type.TypeSize() && (b.Type == quant.F32 || b.Type == quant.F16) && bindingAligned(bb, b, 16)
		avec := a.Type.BlockSize() == 1 && bindingAligned(ab, a, 16)
		s.I32(b32(bvec)).I32(b32(avec)).I32(int32(ab.off % 16)) // kb_mv_args's bvec, avec, amis
		rows := mvSimdgroups * mvTypeRows(a.Type)
		return e.dispatch("mul_mat.metal", "kb_mul_mv_"+a.Type.String(),
			[3]int{int((m + rows - 1) / rows), 1, batches}, [3]int{32 * mvSimdgroups, 1, 1},
			[]int{mvShared(a.Type)}, args(&s), ab, bb, d)
	}
	s.I32(mmActVector(b, bb.off)).I32(int32(ab.off % 16)) // kb_mm_args's bvec, amis
	return e.dispatch("mul_mat.metal", "kb_mul_mm_"+a.Type.String(),
		[3]int{int((m + mmRows - 1) / mmRows), int((n + mmCols - 1) / mmCols), batches}, [3]int{mmThreads, 1, 1},
		[]int{mmShared(a.Type)}, args(&s), ab, bb, d)
}

// mvStage is KB_MV_STAGE: kb_mul_mv's raw copy takes mvStage/NR elements
// of each of a simdgroup's NR rows at a time.
const mvStage = 4096

// mvRawStride is mv.h's kb_mv_raw<T>::RS: the bytes of one row's raw copy
// in kb_mul_mv's threadgroup memory (the 16-byte words that hold a stage's
// bytes starting at any even byte of a word), 0 for the types that read
// device memory (kb_mv_coop: not the float types, MXFP4, the IQ and TQ
// formats).
func mvRawStride(t quant.Type) int {
	switch t {
	case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q8_1,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K:
	default:
		return 0
	}
	rb := int(t.TypeSize()) * (mvStage / int(mvTypeRows(t)) / int(t.BlockSize()))
	return 16 * ((rb + 14 + 15) / 16)
}

// mvShared is kb_mul_mv's threadgroup memory for weights of type t, in
// bytes: each simdgroup's NR rows of raw copy, or 16 (Metal's least
// nonzero length) for the types without it.
func mvShared(t quant.Type) int {
	return max(mvSimdgroups*int(mvTypeRows(t))*mvRawStride(t), 16)
}

// mmShared is the threadgroup memory of kb_mm_tile for weights of type t,
// in bytes: the weight and activation tiles (rows of MM_LD = 40 elements
// of kb_mm_elem's type: float for f32, bf16, q8_1 and q8_K, half for the
// others) and after them the rows' raw copy where the type has one
// (mmRawStride), or the float result tile (32 columns of MM_LDC = 72)
// where that is larger.
func mmShared(t quant.Type) int {
	elem := 2
	switch t {
	case quant.F32, quant.BF16, quant.Q8_1, quant.Q8_K:
		elem = 4
	}
	return max((mmRows+mmCols)*40*elem+mmRows*mmRawStride(t), mmCols*(mmRows+8)*4)
}

// mmStage is MM_KS, the elements of a row kb_mm_tile copies raw at a time.
const mmStage = 256

// mmRawStride is mm.h's kb_mm_raw_stride: the bytes of one row's raw copy
// in kb_mm_tile's threadgroup memory (the 16-byte words that hold a stage
// of mmStage elements starting at any even byte of a word, and 8 more, so
// rows are an odd number of 8-byte words apart), 0 for the types it
// decodes from device memory.
func mmRawStride(t quant.Type) int {
	switch t {
	case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.IQ4_NL,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
	default:
		return 0
	}
	rb := int(t.TypeSize()) * (mmStage / int(t.BlockSize()))
	return 16*((rb+29)/16) + 8
}

// mmActVector says how kb_mm_tile may read the activations b, bound at
// byte offset off: MM_B_F32X4 (1) for f32 whose columns all start 16-byte
// aligned with elements packed, MM_B_F16X4 (2) for f16 on 8 bytes, else
// MM_B_SCALAR (0), one element at a time.
func mmActVector(b *ops.Tensor, off int64) int32 {
	aligned := func(a int64) bool {
		return off%a == 0 && b.Nb[1]%a == 0 && b.Nb[2]%a == 0 && b.Nb[3]%a == 0
	}
	switch {
	case b.Type == quant.F32 && b.Nb[0] == 4 && aligned(16):
		return 1
	case b.Type == quant.F16 && b.Nb[0] == 2 && aligned(8):
		return 2
	}
	return 0
}
