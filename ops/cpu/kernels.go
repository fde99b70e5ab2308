package cpu

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/getrows"
	"github.com/kernbench/kernbench/ops/cpu/internal/rope"
	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/ssm"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"
	"github.com/kernbench/kernbench/ops/tuning"

	"github.com/kernbench/kernbench/quant"
)

// A kernelSet is one tier's implementations of the hot kernels: the
// registry the backend reads its kernels from. A backend picks its set once,
// when it is made (see Tier); kernels then call through the set without
// checking CPU features. The generic set is pure Go and complete; a SIMD
// set lists its own entries (kernels_amd64.go) and takes the generic dot
// products for the types it lacks.
//
// Tests run every set the host supports against the generic one and the
// float64 reference (see forEachTier in the tests).
type kernelSet struct {
	name string
	// dots maps a weight type to its dot product and activation type.
	dots map[quant.Type]dotKernel
	// act maps an activation type to a fast converter from float32;
	// types absent here go through convertRow.
	act map[quant.Type]func(src []float32, dst []byte)
	// gemm maps a weight type to its register-tiled matrix kernel for
	// MUL_MAT with several activation rows; absent types compute every
	// output with the dot product.
	gemm map[quant.Type]*gemmKernel
	// gemv maps a weight type to a four-row kernel for MUL_MAT with one
	// (or a few) activation rows; absent types use the dot product.
	gemv map[quant.Type]gemvFunc
	// gemvLLC maps a weight type to a four-row kernel that replaces
	// gemv's for weights about the size of the last level cache
	// (nearLLC): read again and again, as in an op benchmark or a
	// product of a resident matrix, they come partly from the LLC and
	// partly from DRAM each pass. Nil where gemv's serves every size.
	gemvLLC map[quant.Type]gemvFunc
	// gemvPF maps a weight type to the form of its four-row kernel that
	// prefetches the next four rows into L2 as it streams (bit for bit
	// the same): GemvPrefetch = 1 (tuned.go) puts them in gemv
	// (usePrefetchGemv).
	gemvPF map[quant.Type]gemvFunc
	// gemvSide maps a weight type to a four-row kernel that takes data
	// prepared once per call from each activation row (see
	// gemvSideKernel); MUL_MAT and MUL_MAT_ID prefer it to gemv.
	gemvSide map[quant.Type]*gemvSideKernel
	// x8 maps a weight type to its matrix-vector kernel over weights
	// repacked eight rows at a time (mul_mat_x8.go), which MUL_MAT
	// prefers for weights in buffers marked as holding them.
	x8 map[quant.Type]*x8Kernel
	// vec holds the row kernels of softmax, RMS norm and flash
	// attention (see vecKernels).
	vec vecKernels
	// elt holds the row kernels of the elementwise ops (see
	// eltKernels).
	elt eltKernels
	// deq maps a type to a fast row decoder to float32 (GET_ROWS), equal
	// bit for bit to quant.DequantizeRow; absent types use that.
	deq map[quant.Type]func(src []byte, dst []float32)
	// rope and ssm are ROPE's and SSM_SCAN/SSM_CONV's kernels (see
	// ropeKernels, ssmKernels).
	rope *ropeKernels
	ssm  *ssmKernels
	// fa is FLASH_ATTN_EXT's block kernels (nil: the row path only);
	// its q8_0 scores reproduce this set's q8_0 dot kernel.
	fa *faBlockKernels
	// swaps are the set's kernel swaps (see kernelSwap), in the order
	// tuned applies them.
	swaps []kernelSwap
	// transpose turns sixteen rows of 32-bit values into lines of
	// sixteen, ld apart (sgemm.TransposeTwin): the packed paths'
	// activation panels, and their blocks' sums into the outputs.
	transpose func(dst []uint32, ld int, rows *[16][]uint32, n int)
}

// A kernelSwap is a tunable parameter's choice between kernels that give
// the same bits, whichever is the faster being the core's (tuned.go):
// where a backend opens with param at value, it runs its tier's set
// changed by apply, on a copy (deriveKernels), the tier's table left as
// it is.
type kernelSwap struct {
	param tuning.Param
	value int
	apply func(ks *kernelSet)
}

// tuned returns ks with the swaps whose parameter has its value in v
// applied, in ks.swaps' order, to one copy; ks itself where none applies.
func (ks *kernelSet) tuned(v tuning.Values) *kernelSet {
	var apply []func(*kernelSet)
	for _, s := range ks.swaps {
		if v.Get(s.param) == s.value {
			apply = append(apply, s.apply)
		}
	}
	if len(apply) == 0 {
		return ks
	}
	return deriveKernels(ks, ks.name, func(c *kernelSet) {
		for _, f := range apply {
			f(c)
		}
	})
}

// usePrefetchGemv puts ks's prefetching four-row kernels (gemvPF) in
// gemv: GemvPrefetch's swap.
func usePrefetchGemv(ks *kernelSet) { maps.Copy(ks.gemv, ks.gemvPF) }

// A gemvFunc is a four-row kernel (see gemv.Func).
type gemvFunc = gemv.Func

// genericKernels is the pure-Go tier: every kernel it installs, in one
// place (avx2Kernels, in kernels_amd64.go, is the other tier). It has a dot
// product for every weight type and one matrix kernel, the packed float
// path for the formats that decode their weights (gemmDeq, with
// sgemmMicroGo); MUL_MAT computes the rest with the dot products,
// GET_ROWS and the activation conversion with quant's converters.
var genericKernels = &kernelSet{
	name:      "generic",
	dots:      dotKernels,
	act:       map[quant.Type]func([]float32, []byte){},
	gemm:      deqGemms(sgemmMicroGo, genericDeq),
	gemv:      map[quant.Type]gemvFunc{},
	transpose: sgemm.TransposeTwin,
	vec: vecKernels{
		smPrep:   vec.SMPrep,
		expSum:   vec.ExpSum,
		mulTo:    vec.MulTo,
		sumSq:    vec.SumSq,
		hasNaN:   vec.HasNaN,
		axpy:     vec.Axpy,
		axpyF16:  vec.AxpyF16,
		axpy4:    vec.Axpy4,
		axpy4F16: vec.Axpy4F16,
		axpyQ8_0: vec.AxpyQ8_0,
		f16ToF32: vec.F16ToF32,
	},
	// The elementwise kernels with float64 exp and tanh.
	elt: eltKernels{
		add:       vec.Add,
		mul:       vec.Mul,
		silu:      vec.SiLU,
		gelu:      vec.GELU,
		swiglu:    vec.SwiGLU,
		swigluOAI: swigluOAIRow,
	},
	deq: genericDeq,
	// ROPE: float64 math.Sincos for the cache and the rotation loops of
	// vec.go, head by head.
	rope: &ropeKernels{angles: rope.Angles, norm: rope.NormHeads, neox: rope.NeoXHeads},
	// SSM_SCAN: float64 exp and ssm.Softplus, float32 state updates and sums
	// in order.
	ssm: &ssmKernels{softplus: ssm.SoftplusRow, expMul: ssm.ExpMul, scanA: ssm.ScanA, scanS: ssm.ScanS, scanSTok: ssm.ScanSTok},
}

// dot returns the dot kernel for weight type t.
func (ks *kernelSet) dot(t quant.Type) (dotKernel, error) {
	k, ok := ks.dots[t]
	if !ok {
		return dotKernel{}, fmt.Errorf("no dot product for weight type %v", t)
	}
	if k.actType != t.VecDotType() {
		return dotKernel{}, fmt.Errorf("dot product for %v expects %v activations, quant says %v", t, k.actType, t.VecDotType())
	}
	return k, nil
}

// convertRow writes src as a row of type t into dst (exactly one row of
// len(src) elements), with the set's fast converter when it has one.
func (ks *kernelSet) convertRow(t quant.Type, src []float32, dst []byte) error {
	if f := ks.act[t]; f != nil {
		f(src, dst)
	} else if err := convertRow(t, src, dst); err != nil {
		return err
	}
	markNaNBlocks(ks.vec.hasNaN, t, src, dst)
	return nil
}

// markNaNBlocks sets the scale of each block of dst (a row of q8_0, q8_1
// or q8_K that src was quantized to) whose source elements hold a NaN to
// NaN. The quantizers take a block's scale from its largest magnitude,
// which a NaN does not win, and turn the NaN itself into an arbitrary
// integer: without this, a NaN activation would give a finite product.
// hasNaN (the tier's scan) tells whether src, then each block, holds
// one.
func markNaNBlocks(hasNaN func([]float32) bool, t quant.Type, src []float32, dst []byte) {
	var scale int // bytes of the scale at the start of each block
	switch t {
	case quant.Q8_0, quant.Q8_1:
		scale = 2
	case quant.Q8_K:
		scale = 4
	default:
		return
	}
	if !hasNaN(src) {
		return
	}
	bs, size := int(t.BlockSize()), int(t.TypeSize())
	for b := 0; b*bs < len(src); b++ {
		if !hasNaN(src[b*bs : min((b+1)*bs, len(src))]) {
			continue
		}
		blk := dst[b*size:]
		if scale == 2 {
			binary.LittleEndian.PutUint16(blk, 0x7e00) // binary16 NaN
		} else {
			binary.LittleEndian.PutUint32(blk, math.Float32bits(float32(math.NaN())))
		}
	}
}

// kernelSets returns the kernels of every tier the host supports, generic
// first.
func kernelSets() []*kernelSet {
	var out []*kernelSet
	for _, t := range detectTiers() {
		if t.Supported {
			out = append(out, t.kernels)
		}
	}
	return out
}

// genericDeq are the generic tier's fast row decoders (plain Go, equal
// bit for bit to quant.DequantizeRow), for GET_ROWS and gemmDeq.
var genericDeq = map[quant.Type]func([]byte, []float32){
	quant.TQ2_0: getrows.DeqTQ2_0,
}

// deriveKernels returns a copy of base named name, with its maps cloned
// (so that over's assignments, and tests that swap entries, leave base
// alone), then changed by over. The pointer fields (gemm entries, rope,
// ssm, fa) are shared until over replaces them: over must assign a new
// value rather than change the one it finds.
func deriveKernels(base *kernelSet, name string, over func(ks *kernelSet)) *kernelSet {
	ks := *base
	ks.name = name
	ks.dots = maps.Clone(base.dots)
	ks.act = maps.Clone(base.act)
	ks.gemm = maps.Clone(base.gemm)
	ks.gemv = maps.Clone(base.gemv)
	ks.gemvSide = maps.Clone(base.gemvSide)
	ks.gemvLLC = maps.Clone(base.gemvLLC)
	ks.gemvPF = maps.Clone(base.gemvPF)
	ks.x8 = maps.Clone(base.x8)
	ks.deq = maps.Clone(base.deq)
	ks.swaps = slices.Clone(base.swaps)
	over(&ks)
	return &ks
}
