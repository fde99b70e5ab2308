//go:build amd64 && !purego

package cpu

import (
	"maps"
	"reflect"

	"github.com/klauspost/cpuid/v2"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/flashattn"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/getrows"
	"github.com/kernbench/kernbench/ops/cpu/internal/qgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/quantize"
	"github.com/kernbench/kernbench/ops/cpu/internal/rope"
	"github.com/kernbench/kernbench/ops/cpu/internal/sgemm"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/ssm"
	"github.com/kernbench/kernbench/ops/cpu/internal/vec"

	"github.com/kernbench/kernbench/quant"
)

// avx2Kernels is the AVX2+FMA+F16C tier: every kernel it installs, in one
// place. Entries it lacks fall back to the generic tier's (dots) or to the
// generic path of the op (the other maps: a missing entry means the op
// computes with the dot product or quant's converters). The kernels live
// in the leaf packages under internal/ (dot, gemv, qgemm, sgemm,
// quantize, getrows, vec, rope, ssm, flashattn), each with its assembly,
// its pure-Go twins and the tests that compare the two bit for bit.
var avx2Kernels = &kernelSet{
	name: "avx2",
	// The packed paths' panel transposes: Go (an AVX2 8x8 kernel was
	// not written; the pack is a few percent of a product).
	transpose: sgemm.TransposeTwin,
	dots: withGenericDots(map[quant.Type]dotKernel{
		quant.F32:  {dot.F32AVX2, quant.F32},
		quant.F16:  {dot.F16AVX2, quant.F16},
		quant.BF16: {dot.BF16AVX2, quant.BF16},
		quant.Q8_0: {dot.Q8_0AVX2, quant.Q8_0},
		quant.Q4_0: {dot.Q4_0AVX2, quant.Q8_0},
		quant.Q5_0: {dot.Q5_0AVX2, quant.Q8_0},
		quant.Q4_1: {dot.Q4_1AVX2, quant.Q8_1},
		quant.Q5_1: {dot.Q5_1AVX2, quant.Q8_1},
		quant.Q2_K: {dot.Q2_KAVX2, quant.Q8_K},
		quant.Q3_K: {dot.Q3_KAVX2, quant.Q8_K},
		quant.Q4_K: {dot.Q4_KAVX2, quant.Q8_K},
		quant.Q5_K: {dot.Q5_KAVX2, quant.Q8_K},
		quant.Q6_K: {dot.Q6_KAVX2, quant.Q8_K},
		// The table-coded formats: q8_0's dot with a VPSHUFB lookup of
		// the value table, float32 lanes FMA'd per block (IQ4_XS: per
		// super-block, its sub-block scales applied to the int32 lanes)
		// in registers; they differ from the generic kernels by rounding
		// only (twins MXFP4Twin, IQ4_NLTwin, IQ4_XSTwin).
		quant.IQ4_NL: {dot.IQ4_NLAVX2, quant.Q8_0},
		quant.IQ4_XS: {dot.IQ4_XSAVX2, quant.Q8_K},
		quant.MXFP4:  {dot.MXFP4AVX2, quant.Q8_0},
		// The ternary formats: exact integer sums in AVX2 (tq1_0's
		// trits decoded by byte comparisons and multiplies by powers of
		// 3, sum(y) from q8_K's bsums), scaled per super-block in
		// registers as the generic kernels do (equal to them bit for
		// bit).
		quant.TQ1_0: {dot.TQ1_0AVX2, quant.Q8_K},
		quant.TQ2_0: {dot.TQ2_0AVX2, quant.Q8_K},
		// The codebook formats: per 8 (or 4) elements a grid entry loaded
		// by a scalar load and inserted into the vector (no VPGATHERDD or
		// VPGATHERDQ, which are microcoded on AMD Zen 2 and 3), signs by
		// VPSIGNB with 8-byte sign vectors of the 7-bit sign codes or a
		// mask of the sign bytes, the signed products and scales in AVX2
		// and each super-block's float32 scaling in the assembly, in the
		// generic kernels' order and rounding (equal to them bit for bit;
		// F16C for the f16 scales, which the tier requires).
		quant.IQ2_XXS: {dot.IQ2_XXSAVX2, quant.Q8_K},
		quant.IQ3_XXS: {dot.IQ3_XXSAVX2, quant.Q8_K},
		quant.IQ3_S:   {dot.IQ3_SAVX2, quant.Q8_K},
		quant.IQ2_XS:  {dot.IQ2_XSAVX2, quant.Q8_K},
		quant.IQ2_S:   {dot.IQ2_SAVX2, quant.Q8_K},
		quant.IQ1_S:   {dot.IQ1_SAVX2, quant.Q8_K},
		quant.IQ1_M:   {dot.IQ1_MAVX2, quant.Q8_K},
	}),
	act: map[quant.Type]func([]float32, []byte){
		quant.Q8_0: quantize.Q8_0AVX2,
		quant.Q8_1: quantize.Q8_1AVX2,
		quant.Q8_K: quantize.Q8_KAVX2,
		quant.F16:  quantize.F16AVX2,
	},
	// The formats without a tiled integer kernel decode their weights
	// into the packed float path (gemmDeq; deqTypes).
	gemm: withDeqGemms(sgemm.MicroAVX2, avx2Deq, map[quant.Type]*gemmKernel{
		quant.F32:  {kind: gemmFloat, tile: dot.TileF32AVX2, micro: sgemm.MicroAVX2},
		quant.F16:  {kind: gemmFloat, tile: dot.TileF32AVX2, widen: dot.WidenF16AVX2, micro: sgemm.MicroAVX2},
		quant.BF16: {kind: gemmFloat, tile: dot.TileF32AVX2, widen: dot.WidenBF16AVX2, micro: sgemm.MicroAVX2},
		quant.Q4_0: {kind: gemmQ8Quad, quad: dot.QuadQ4_0AVX2,
			qtile: &qTile{block: qgemm.PanelBlock, gblock: dot.PackQ8Block, biased: true,
				repack: qgemm.RepackQ4_0AVX2, kernel: qgemm.Q4_0AVX2, fromX8: qgemm.PanelQ4_0FromX8AVX2}},
		quant.Q5_0: {kind: gemmQ8Quad, quad: dot.QuadQ5_0AVX2,
			qtile: &qTile{block: qgemm.PanelBlock, gblock: dot.PackQ8Block, biased: true,
				repack: qgemm.RepackQ5_0AVX2, kernel: qgemm.Q5_0AVX2}},
		// The q8_0 panel kernel is taken from n = 8: at n = 4 it
		// measured no faster than the quad kernel (BenchmarkQTile).
		quant.Q8_0: {kind: gemmQ8Quad, quad: dot.QuadQ8_0AVX2,
			qtile: &qTile{block: qgemm.PanelBlock8, gblock: dot.PackQ8Block, minN: 8,
				repack: qgemm.RepackQ8_0AVX2, kernel: qgemm.Q8_0AVX2, fromX8: qgemm.PanelQ8_0FromX8AVX2}},
		quant.Q4_1: {kind: gemmQ81Quad, quad: dot.QuadQ4_1AVX2,
			qtile: &qTile{block: qgemm.PanelBlock, gblock: dot.PackQ81Block,
				repack: qgemm.RepackQ4_1AVX2, kernel: qgemm.Q4_1AVX2}},
		quant.Q5_1: {kind: gemmQ81Quad, quad: dot.QuadQ5_1AVX2,
			qtile: &qTile{block: qgemm.PanelBlock, gblock: dot.PackQ81Block,
				repack: qgemm.RepackQ5_1AVX2, kernel: qgemm.Q5_1AVX2}},
		quant.Q2_K: {kind: gemmKQuad, quad: dot.QuadQ2_KAVX2},
		quant.Q3_K: {kind: gemmKQuad, quad: dot.QuadQ3_KAVX2},
		quant.Q4_K: {kind: gemmKQuad, quad: dot.QuadQ4_KAVX2,
			ktile: &kTile{block: qgemm.PanelQ4_K, minN: 4, repack: qgemm.RepackQ4_KAVX2, kernel: qgemm.Q4_KAVX2}},
		quant.Q5_K: {kind: gemmKQuad, quad: dot.QuadQ5_KAVX2,
			ktile: &kTile{block: qgemm.PanelQ4_K, minN: 4, repack: qgemm.RepackQ5_KAVX2, kernel: qgemm.Q5_KAVX2}},
		quant.Q6_K: {kind: gemmKQuad, quad: dot.QuadQ6_KAVX2,
			ktile: &kTile{block: qgemm.PanelQ6_K, minN: 4, repack: qgemm.RepackQ6_KAVX2, kernel: qgemm.Q6_KAVX2}},
	}),
	// Four-row kernels for MUL_MAT with one to three activation rows
	// (package internal/gemv); with next-step prefetch each beats the dot product
	// inside MUL_MAT (BenchmarkGemvMulMat).
	gemv: map[quant.Type]gemvFunc{
		quant.Q4_0: gemv.Q4_0AVX2,
		quant.Q8_0: gemv.Q8_0AVX2,
		quant.Q5_0: gemv.Q5_0AVX2,
		quant.Q4_1: gemv.Q4_1AVX2,
		quant.Q5_1: gemv.Q5_1AVX2,
		quant.Q2_K: gemv.Q2_KAVX2,
		quant.Q3_K: gemv.Q3_KAVX2,
		quant.Q4_K: gemv.Q4_KAVX2,
		quant.Q5_K: gemv.Q5_KAVX2,
		quant.Q6_K: gemv.Q6_KAVX2,
		quant.F16:  gemv.F16AVX2,
		quant.BF16: gemv.BF16AVX2,
		quant.F32:  gemv.F32AVX2,
		// The table-coded formats: q8_0's scheme with the value table
		// looked up by VPSHUFB and |y| shared by the four rows (IQ4_XS:
		// the sub-block scales applied to int32 lanes, as its dot
		// product, which it equals bit for bit).
		quant.IQ4_NL: gemv.IQ4_NLAVX2,
		quant.MXFP4:  gemv.MXFP4AVX2,
		quant.IQ4_XS: gemv.IQ4_XSAVX2,
	},
	// Four-row kernels with data prepared once per activation row, which
	// MUL_MAT and MUL_MAT_ID prefer to gemv.
	gemvSide: map[quant.Type]*gemvSideKernel{
		quant.Q4_0: {per: gemv.SideSlots, prep: gemv.Q4_0Prep, f: gemv.SideQ4_0AVX2},
	},
	// The x8 kernels (internal/gemv's x8.go): eight interleaved rows per
	// call, for weights repacked once (mul_mat_x8.go).
	x8: map[quant.Type]*x8Kernel{
		quant.Q4_0: {qk: quant.QK, bs: simd.BytesQ4_0, per: gemv.X8SlotsQ4_0, repack: gemv.RepackX8Q4_0, prep: gemv.Q4_0Prep, f: gemv.X8Q4_0AVX2, tail: gemv.SideQ4_0AVX2},
		quant.Q8_0: {qk: quant.QK, bs: simd.BytesQ8_0, per: gemv.X8SlotsQ8_0, repack: gemv.RepackX8Q8_0, prep: gemv.X8Q8_0Prep, f: gemv.X8Q8_0AVX2, tail: gemv.Q8_0AVX2},
		// f16 and bf16 in runs of 16 (gemv.F16Run), so rows of any
		// multiple of 16 take the x8 path (Mamba's dt projection: 48).
		quant.F16:  {qk: gemv.F16Run, bs: 2 * gemv.F16Run, per: gemv.X8SlotsF16, repack: gemv.RepackX8F16, prep: gemv.X8F16Prep, f: gemv.X8F16AVX2, tail: gemv.F16AVX2, gather: gemv.GatherX8F16Row},
		quant.BF16: {qk: gemv.F16Run, bs: 2 * gemv.F16Run, per: gemv.X8SlotsF16, repack: gemv.RepackX8F16, prep: gemv.X8F16Prep, f: gemv.X8BF16AVX2, tail: gemv.BF16AVX2, gather: gemv.GatherX8F16Row},
		// The K formats' x8 layouts regroup the 6-bit codes (x8k.go);
		// their tail rows go to the four-row kernels, equal to the dot
		// product bit for bit, as the x8 kernels are.
		quant.Q6_K: {qk: quant.QKK, bs: simd.BytesQ6_K, per: gemv.X8SlotsK, repack: gemv.RepackX8Q6_K, prep: gemv.X8Q8_KPrep, f: gemv.X8Q6_KAVX2, tail: gemv.Q6_KAVX2},
		quant.Q4_K: {qk: quant.QKK, bs: simd.BytesQ4_K, per: gemv.X8SlotsK, repack: gemv.RepackX8Q4_K, prep: gemv.X8Q8_KPrep, f: gemv.X8Q4_KAVX2, tail: gemv.Q4_KAVX2},
	},
	vec: vecKernels{
		smPrep:   vec.SMPrepAVX2,
		expSum:   vec.ExpSumAVX2,
		mulTo:    vec.MulToAVX2,
		sumSq:    vec.SumSqAVX2,
		hasNaN:   vec.HasNaNAVX2,
		axpy:     vec.AxpyAVX2,
		axpyF16:  vec.AxpyF16AVX2,
		axpy4:    vec.Axpy4AVX2,
		axpy4F16: vec.Axpy4F16AVX2,
		axpyQ8_0: vec.AxpyQ8_0AVX2,
		dot2F16:  vec.Dot2F16AVX2,
		f16ToF32: vec.F16ToF32AVX2,
	},
	elt: eltKernels{
		add:       vec.AddAVX2,
		mul:       vec.MulAVX2,
		silu:      vec.SiLUAVX2,
		gelu:      vec.GELUAVX2,
		swiglu:    vec.SwiGLUAVX2,
		swigluOAI: vec.SwiGLUOAIAVX2,
		// Non-temporal stores for ops past the last level cache: a
		// quarter less time for MUL of two [14336, 512] rows on a Zen 5
		// (BenchmarkEltLarge).
		addStream:    vec.AddStreamAVX2,
		mulStream:    vec.MulStreamAVX2,
		swigluStream: vec.SwiGLUStreamAVX2,
	},
	deq: avx2Deq,
	rope: &ropeKernels{
		angles: rope.AnglesAVX2,
		norm:   rope.NormHeadsAVX2,
		neox:   rope.NeoXHeadsAVX2,
	},
	ssm: &ssmKernels{
		softplus:  ssm.SoftplusAVX2,
		expMul:    ssm.ExpMulAVX2,
		scanA:     ssm.ScanAAVX2,
		scanS:     ssm.ScanSAVX2,
		scanSTok:  ssm.ScanSTokAVX2,
		scanSTile: ssm.ScanSTileAVX2,
		conv4:     ssm.Conv4AVX2,
		conv4g:    ssm.Conv4GatherAVX2,
		conv41:    ssm.Conv41AVX2,
	},
	fa: &faBlockKernels{
		scores: flashattn.ScoresAVX2, values: flashattn.ValuesAVX2,
		scores1: flashattn.Scores1AVX2, values1: flashattn.Values1AVX2,
		scoresQ8: flashattn.ScoresQ8AVX2, scores1Q8: flashattn.Scores1Q8AVX2, dequantQ8: flashattn.DequantQ8AVX2,
		valuesF32: flashattn.ValuesF32AVX2, values1F32: flashattn.Values1F32AVX2,
		maskF16: flashattn.MaskF16AVX2, logits: flashattn.LogitsAVX2,
		roundF16: flashattn.RoundF16AVX2, scores4: flashattn.Scores4AVX2,
		small: &faSmallKernels{
			kt: flashattn.KTAVX2, scores: flashattn.ScoresSmallAVX2, values: flashattn.ValuesSmallTAVX2,
		},
	},
}

// withGenericDots returns the generic tier's dot products with those of
// over in their place.
func withGenericDots(over map[quant.Type]dotKernel) map[quant.Type]dotKernel {
	m := maps.Clone(dotKernels)
	maps.Copy(m, over)
	return m
}

// avx2Deq are the AVX2 tier's fast row decoders, equal bit for bit to
// quant.DequantizeRow, for GET_ROWS and gemmDeq.
var avx2Deq = map[quant.Type]func([]byte, []float32){
	quant.Q4_0:  getrows.DeqQ4_0AVX2,
	quant.Q8_0:  getrows.DeqQ8_0AVX2,
	quant.F16:   dot.WidenF16AVX2,
	quant.BF16:  dot.WidenBF16AVX2,
	quant.TQ2_0: getrows.DeqTQ2_0,
}

// avx512Kernels is the AVX-512 F/BW/VL tier: the avx2 tier's kernels with
// the 512-bit ones that have been written in their place. It is derived
// rather than spelled out, so that every kernel the avx2 tier gains is
// here too; the entries it replaces are the assignments below.
var avx512Kernels = deriveKernels(avx2Kernels, "avx512", func(ks *kernelSet) {
	withMicro2(ks.gemm, sgemm.MicroAVX2, sgemm.Micro2AVX512)
	// The packed paths' panel transposes, a 16x16 tile in registers.
	ks.transpose = sgemm.Transpose16AVX512
	// The f16 and bf16 wideners in zmm (bit for bit the AVX2 ones) for
	// the packed float path's weights and GET_ROWS.
	f16, bf16 := *ks.gemm[quant.F16], *ks.gemm[quant.BF16]
	f16.widen, bf16.widen = dot.WidenF16AVX512, dot.WidenBF16AVX512
	ks.gemm[quant.F16], ks.gemm[quant.BF16] = &f16, &bf16
	ks.deq[quant.F16], ks.deq[quant.BF16] = dot.WidenF16AVX512, dot.WidenBF16AVX512
	// The elementwise kernels in zmm with masked tails, bit for bit the
	// AVX2 ones (internal/vec's TestEltAVX512; about twice as fast at
	// n = 4096 in BenchmarkEltAVX512).
	ks.elt.add, ks.elt.mul = vec.AddAVX512, vec.MulAVX512
	ks.elt.silu, ks.elt.gelu = vec.SiLUAVX512, vec.GELUAVX512
	ks.elt.swiglu, ks.elt.swigluOAI = vec.SwiGLUAVX512, vec.SwiGLUOAIAVX512
	// Past the L2s with one thread, ADD and MUL run in ymm: zmm is 1.8x
	// faster in L1 and even in L2, and 6% slower streaming from L3 on a
	// Zen 5 with one thread (ADD of two [4096, 512] rows,
	// BenchmarkEltLarge; 24 MiB), where with two threads it is 8% faster
	// (medians of eight alternated runs, 2026-11-29; op_binary.go's
	// binaryKernel picks by thread count). Their streaming kernels stay the avx2 tier's too (32-byte
	// non-temporal stores were as fast as or faster than 64-byte ones);
	// SWIGLU's is in zmm, whose exp is half the work.
	ks.elt.addL3, ks.elt.mulL3 = vec.AddAVX2, vec.MulAVX2
	ks.elt.swigluStream = vec.SwiGLUStreamAVX512
	// The row kernels in zmm, bit for bit the AVX2 ones (internal/vec's
	// TestVecAVX512); the reductions keep the AVX2 accumulators' order.
	// expSum takes half the time (16 exps a step); the streaming ones
	// gain in L1 (head dimensions, 4096-wide rows) and hand rows longer
	// than 8192 to the AVX2 kernels, 2-5% faster on L2-resident 14336-wide
	// rows (BenchmarkVecAVX512).
	ks.vec.expSum, ks.vec.smPrep, ks.vec.sumSq = vec.ExpSumAVX512, vec.SMPrepAVX512, vec.SumSqAVX512
	ks.vec.mulTo, ks.vec.axpy, ks.vec.axpy4 = vec.MulToAVX512, vec.AxpyAVX512, vec.Axpy4AVX512
	ks.vec.axpyF16, ks.vec.axpy4F16 = vec.AxpyF16AVX512, vec.Axpy4F16AVX512
	ks.vec.f16ToF32 = vec.F16ToF32AVX512
	ks.vec.axpyQ8_0, ks.vec.dot2F16 = vec.AxpyQ8_0AVX512, vec.Dot2F16AVX512
	// The activation quantizers in zmm: quant.QuantizeRow's bytes for
	// finite inputs and the AVX2 ones' bytes for any (internal/quantize's
	// TestQuantizersAVX512).
	ks.act[quant.Q8_0], ks.act[quant.Q8_1] = quantize.Q8_0AVX512, quantize.Q8_1AVX512
	ks.act[quant.Q8_K], ks.act[quant.F16] = quantize.Q8_KAVX512, quantize.F16AVX512
	// bf16 activations (the bf16 weights' vec-dot type) in zmm, bit for
	// bit quant.FP32ToBF16: before, every row went through it in Go.
	ks.act[quant.BF16] = quantize.BF16AVX512
	// FLASH_ATTN_EXT's block kernels in zmm (bit for bit the AVX2 ones).
	fa := *ks.fa
	fa.values, fa.values1 = flashattn.ValuesAVX512, flashattn.Values1AVX512
	fa.valuesF32, fa.values1F32 = flashattn.ValuesF32AVX512, flashattn.Values1F32AVX512
	fa.scores, fa.scores4 = flashattn.ScoresAVX512, flashattn.Scores4AVX512
	fa.maskF16, fa.logits = flashattn.MaskF16AVX512, flashattn.LogitsAVX512
	fa.roundF16, fa.dequantQ8 = flashattn.RoundF16AVX512, flashattn.DequantQ8AVX512
	fa.scoresQ8, fa.scores1Q8 = flashattn.ScoresQ8AVX512, flashattn.Scores1Q8AVX512
	small := *fa.small
	small.scores, small.values = flashattn.ScoresSmallAVX512, flashattn.ValuesSmallTAVX512
	fa.small = &small
	ks.fa = &fa
	// The float four-row kernels in zmm (bit for bit the AVX2 ones): f16
	// and bf16 prefetching 2 KiB ahead in the four rows they stream
	// instead of into the next four rows, f32 leaving it to the hardware.
	ks.gemv[quant.F16], ks.gemv[quant.BF16], ks.gemv[quant.F32] = gemv.F16AVX512, gemv.BF16AVX512, gemv.F32AVX512
	// Except f16 weights about the LLC's size (nearLLC), which keep the
	// AVX2 kernel (bit for bit the same): read again and again they come
	// partly from L3, and there the zmm kernel keeps fewer of its lines.
	// On a Zen 5 (32 MiB L3), MUL_MAT m=4096 n=1 alternated call by call
	// with two threads (medians of 150), zmm against AVX2: 24 MiB
	// 239-248 against 207-216 us, 32 MiB 377-415 against 292-346, 48 MiB
	// 651-708 against 593-664; one thread, 32 MiB 835 against 591. Below
	// (16 MiB: 117-125 against 141-144) and past it (64 MiB: 1121-1142
	// against 1221-1222; 112 MiB, from DRAM: 1739-2260 against
	// 1869-2361) the zmm kernel is the faster. The zmm kernel with the
	// AVX2 one's prefetch (next four rows, twice a line) was as slow as
	// without it, so it is not the prefetch. bf16's kernels (the widening
	// and the pair kernel) against AVX2's were within noise in the window.
	ks.gemvLLC = map[quant.Type]gemvFunc{quant.F16: gemv.F16AVX2}
	// GemvPrefetch = 1 (tuned.go) takes f32's kernel asking for the next
	// four rows as it streams, as AVX2's do; Gemv512 = 0 AVX2's f16
	// kernel at every size.
	ks.gemvPF = map[quant.Type]gemvFunc{quant.F32: gemv.F32AVX512PF}
	ks.swaps = []kernelSwap{
		{param: Gemv512, value: 0, apply: useAVX2Gemv},
		{param: GemvPrefetch, value: 1, apply: usePrefetchGemv},
	}
	// The f16/bf16 x8 decode kernels stay AVX2's: zmm ones (bit for bit
	// the same; in git at a68d4ba, internal/gemv/x8f16_avx512_amd64.go)
	// made gpt-oss-100m-f16's tg128 13% slower with a 1 KiB prefetch and
	// were within noise of the AVX2 ones with the tuned 8 KiB (Zen 5).
	// The codebook formats' dot products two sub-blocks a step in zmm,
	// their grid indexes deposited by PDEP (BMI2); IQ1's delta folded
	// into a biased 12-bit grid table, the others' signs a mask register
	// (7-bit sign codes with their parity bits, or sign bytes) XORed with
	// the codes' signs (bit for bit the generic kernels, as the AVX2
	// ones; BenchmarkIQDotAVX512 against BenchmarkIQDot on a Zen 5: iq1_m
	// 1.6x, iq1_s 1.4x, iq2_s 1.5x, iq2_xxs 1.4x, iq2_xs 1.15x, iq3_xxs
	// 1.3x, iq3_s 1.4x).
	for wt, f := range map[quant.Type]vecDotFunc{
		quant.IQ1_M: dot.IQ1_MAVX512, quant.IQ1_S: dot.IQ1_SAVX512, quant.IQ2_S: dot.IQ2_SAVX512,
		quant.IQ2_XXS: dot.IQ2_XXSAVX512, quant.IQ2_XS: dot.IQ2_XSAVX512,
		quant.IQ3_XXS: dot.IQ3_XXSAVX512, quant.IQ3_S: dot.IQ3_SAVX512,
		// The ternary formats: two of the AVX2 kernels' steps in one zmm
		// where the codes allow it (bit for bit them; BenchmarkIQDotAVX512
		// against BenchmarkIQDot: tq2_0 51 -> 46 ns a 4096 row).
		quant.TQ2_0: dot.TQ2_0AVX512, quant.TQ1_0: dot.TQ1_0AVX512,
	} {
		dk := ks.dots[wt]
		dk.dot = f
		ks.dots[wt] = dk
	}
	// SSM_SCAN's scans in zmm, bit for bit the AVX2 ones (scalar A: a
	// row's two 8-lane sums are the halves of one zmm; vector A: the
	// exponentials 16 at a time, the same 8-lane sum; tiled: 4 rows by 32
	// states).
	s := *ks.ssm
	s.scanS, s.scanSTok, s.scanA = ssm.ScanSAVX512, ssm.ScanSTokAVX512, ssm.ScanAAVX512
	s.scanSTile = ssm.ScanSTileAVX512
	// (AVX2's tiled scan where SSMTile512 = 0, tuned.go.)
	ks.swaps = append(ks.swaps, kernelSwap{param: SSMTile512, value: 0, apply: useAVX2SSMTile})
	// SSM_CONV: 16 tokens (conv4), 2 tokens of 8 gathered channels
	// (conv4g) or 16 channels (conv41) per zmm, bit for bit the AVX2
	// kernels.
	s.conv4, s.conv4g, s.conv41 = ssm.Conv4AVX512, ssm.Conv4GatherAVX512, ssm.Conv41AVX512
	// Softplus of dt: eight float64 lanes (bit for bit the AVX2 kernel).
	s.softplus = ssm.SoftplusAVX512
	ks.ssm = &s
})

// withMicro2 replaces each entry of gemm whose micro-kernel is micro with
// a copy that has micro2 as its two-panel micro-kernel (the packed float
// path then takes its panels in pairs; micro2 must equal micro on each
// panel bit for bit). The entries are copied, not changed: their
// pointers are shared with the tier gemm was cloned from.
func withMicro2(gemm map[quant.Type]*gemmKernel, micro sgemmMicro, micro2 sgemmMicro2) {
	want := reflect.ValueOf(micro).Pointer()
	for t, g := range gemm {
		if g.micro != nil && reflect.ValueOf(g.micro).Pointer() == want {
			c := *g
			c.micro2 = micro2
			gemm[t] = &c
		}
	}
}

// vnniKernels is the AVX-512 VNNI tier: the avx512 tier's kernels with
// those whose int8 dot products use VPDPBUSD (one instruction for
// VPMADDUBSW, VPMADDWD and VPADDD, and no int16 saturation) in their
// place.
var vnniKernels = deriveKernels(avx512Kernels, "vnni", func(ks *kernelSet) {
	// The x8 decode kernels of q4_0, q8_0, q6_K and q4_K: the same
	// repacking, prep and plain tail, VPDPBUSD in f (bit for bit the AVX2
	// ones).
	for t, f := range map[quant.Type]gemv.X8Func{
		quant.Q4_0: gemv.X8Q4_0VNNI, quant.Q8_0: gemv.X8Q8_0VNNI,
		quant.Q6_K: gemv.X8Q6_KVNNI, quant.Q4_K: gemv.X8Q4_KVNNI,
	} {
		k := *ks.x8[t]
		k.f = f
		ks.x8[t] = &k
	}
	// The quantized panel kernels with VPDPBUSD (package qgemm; same
	// panels and groups, bit for bit the AVX2 kernels).
	for wt, kernel := range map[quant.Type]func(int, []byte, []byte, *[32]float32){
		quant.Q4_0: qgemm.Q4_0VNNI, quant.Q5_0: qgemm.Q5_0VNNI, quant.Q8_0: qgemm.Q8_0VNNI,
		quant.Q4_1: qgemm.Q4_1VNNI, quant.Q5_1: qgemm.Q5_1VNNI,
	} {
		gk := *ks.gemm[wt]
		qt := *gk.qtile
		qt.kernel = kernel
		if wt == quant.Q8_0 {
			// From n = 4: there the VNNI panel kernel measured 1.27x
			// the quad kernel (m = k = 4096), where AVX2's was not faster.
			qt.minN = 4
		}
		gk.qtile = &qt
		ks.gemm[wt] = &gk
	}
	// The K-format panel kernels with VPDPBUSD (likewise), or AVX2's
	// where KTileVNNI = 0 (tuned.go).
	for wt, kernel := range vnniKTile {
		setKTile(ks, wt, kernel)
	}
	ks.swaps = append(ks.swaps, kernelSwap{param: KTileVNNI, value: 0, apply: useAVX2KTile})
	// The four-row kernels with VPDPBUSD (package gemv; bit for bit the
	// AVX2 ones): MUL_MAT with 1-3 activation rows where the weights are
	// not repacked.
	for wt, f := range vnniGemv {
		ks.gemv[wt] = f
	}
	// The q4_0 side kernel with VPDPBUSD, the four rows in one zmm
	// register (bit for bit SideQ4_0AVX2), and the x8 kernels' plain
	// tails: the VNNI four-row kernels, each equal to the AVX2 tail.
	sk := *ks.gemvSide[quant.Q4_0]
	sk.f = gemv.SideQ4_0VNNI
	ks.gemvSide[quant.Q4_0] = &sk
	for wt, tail := range map[quant.Type]gemvFunc{
		quant.Q4_0: gemv.SideQ4_0VNNI, quant.Q8_0: gemv.Q8_0VNNI,
		quant.Q6_K: gemv.Q6_KVNNI, quant.Q4_K: gemv.Q4_KVNNI,
	} {
		k := *ks.x8[wt]
		k.tail = tail
		ks.x8[wt] = &k
	}
	// The q4_K, q5_K, q6_K, q4_0 and q8_0 dot products with VPDPBUSD
	// (package dot; bit for bit the AVX2 ones: the same integer lanes and
	// float32 steps, so the flash-attention q8_0 score kernels still sum
	// as the tier's q8_0 dot does).
	for wt, f := range map[quant.Type]vecDotFunc{
		quant.Q4_K: dot.Q4_KVNNI, quant.Q5_K: dot.Q5_KVNNI, quant.Q6_K: dot.Q6_KVNNI,
		quant.Q4_0: dot.Q4_0VNNI, quant.Q8_0: dot.Q8_0VNNI,
	} {
		dk := ks.dots[wt]
		dk.dot = f
		ks.dots[wt] = dk
	}
	// bf16 weights from 16 activation rows: the bfloat16 pair path
	// (VDPBF16PS, AVX-512 BF16; mul_mat_sgemm_bf16.go), where the CPU
	// has it (vnniExtras).
	gk := *ks.gemm[quant.BF16]
	gk.microBF16 = sgemm.MicroBF16AVX512
	ks.gemm[quant.BF16] = &gk
	// bf16 weights from one to three activation rows: a 64-byte line of
	// each of four rows in one VDPBF16PS (a load and one instruction a
	// line, where the avx2 kernel widens it in four), with no software
	// prefetch (gemv.BF16DP), or asking for the next four rows where
	// GemvPrefetch = 1 (gemv.BF16DPPF, bit for bit the same).
	ks.gemv[quant.BF16] = gemv.BF16DP
	ks.gemvPF[quant.BF16] = gemv.BF16DPPF
	// And the x8 decode kernel of bf16 weights, equal to it bit for bit
	// (the plain and x8 layouts give the same bits).
	xk := *ks.x8[quant.BF16]
	xk.f, xk.tail = gemv.X8BF16DP, gemv.BF16DP
	ks.x8[quant.BF16] = &xk
	// The q2_K and q3_K quad kernels with VPDPBUSD (package dot; bit for
	// bit the AVX2 ones): their MUL_MAT path from n = 4 (no panels).
	for wt, quad := range map[quant.Type]quadFunc{
		quant.Q2_K: dot.QuadQ2_KVNNI, quant.Q3_K: dot.QuadQ3_KVNNI,
	} {
		gk := *ks.gemm[wt]
		gk.quad = quad
		ks.gemm[wt] = &gk
	}
})

// vnniGemv are the vnni tier's four-row matrix-vector kernels with
// VPDPBUSD (package gemv; bit for bit the AVX2 ones): MUL_MAT with 1-3
// activation rows where the weights are not repacked.
var vnniGemv = map[quant.Type]gemvFunc{
	quant.Q4_K: gemv.Q4_KVNNI, quant.Q5_K: gemv.Q5_KVNNI, quant.Q6_K: gemv.Q6_KVNNI,
	quant.Q4_0: gemv.Q4_0VNNI, quant.Q5_0: gemv.Q5_0VNNI, quant.Q8_0: gemv.Q8_0VNNI,
	quant.Q4_1: gemv.Q4_1VNNI, quant.Q5_1: gemv.Q5_1VNNI,
	quant.Q2_K: gemv.Q2_KVNNI, quant.Q3_K: gemv.Q3_KVNNI,
}

// useAVX2Gemv puts the AVX2 four-row kernels of plain weights in ks in
// place of its 512-bit ones (Gemv512's swap): vnniGemv's types and the
// q4_0 side kernel (VPDPBUSD on the vnni tier), and f16 (zmm on the
// avx512 and vnni tiers); the same results bit for bit. f32's zmm kernel
// and bf16's stay. On a Zen 4, whose 512-bit operations run as two
// 256-bit halves, the VNNI kernels of q4_0, q4_K and q5_K took 15-17%
// longer on a 9 MiB matrix in L3 (within 3% for the other formats, and
// the same from DRAM), and the zmm f16 one 14-38% longer from DRAM (4096
// rows of 2048 to 14336) and up to 14% in L3 (alternated call by call,
// medians); on a Zen 5 the 512-bit ones are the faster.
func useAVX2Gemv(ks *kernelSet) {
	for wt := range vnniGemv {
		ks.gemv[wt] = avx2Kernels.gemv[wt]
	}
	ks.gemv[quant.F16] = avx2Kernels.gemv[quant.F16]
	ks.gemvSide[quant.Q4_0] = avx2Kernels.gemvSide[quant.Q4_0]
}

// vnniKTile are the vnni tier's K-format panel kernels with VPDPBUSD
// (package qgemm; bit for bit the AVX2 ones).
var vnniKTile = map[quant.Type]kTileFunc{
	quant.Q4_K: qgemm.Q4_KVNNI, quant.Q5_K: qgemm.Q5_KVNNI, quant.Q6_K: qgemm.Q6_KVNNI,
}

// setKTile gives ks's gemm entry of wt a K-format panel kernel of its
// own.
func setKTile(ks *kernelSet, wt quant.Type, kernel kTileFunc) {
	gk := *ks.gemm[wt]
	kt := *gk.ktile
	kt.kernel = kernel
	gk.ktile = &kt
	ks.gemm[wt] = &gk
}

// useAVX2KTile puts AVX2's K-format panel kernels in ks in place of
// vnniKTile's (KTileVNNI's swap), the same results bit for bit. On a Zen
// 4, whose 512-bit operations run as two 256-bit halves, the VNNI ones
// took 8-29% longer for q4_K, q5_K and q6_K at m=4096 n=512 k=4096
// (alternated call by call, medians of 40; q4_K 13-29%) and q4_K 16% at
// k=14336; on a Zen 5 q4_K's and q6_K's are 1.13x and 1.36x faster
// (k=14336).
func useAVX2KTile(ks *kernelSet) {
	for wt := range vnniKTile {
		setKTile(ks, wt, avx2Kernels.gemm[wt].ktile.kernel)
	}
}

// useAVX2SSMTile puts AVX2's tiled SSM_SCAN kernel in ks in place of the
// zmm one (SSMTile512's swap), the same results bit for bit; the other
// scan and conv kernels stay. On a Zen 4 the AVX2 one took 4-6% less
// time (d_state 128, head_dim 64, 48 heads: 754 against 803 µs at 64
// tokens and 6.18 against 6.57 ms at 512 in one session, 804 against 834
// µs and 6.34 against 6.77 ms in the next).
func useAVX2SSMTile(ks *kernelSet) {
	s := *ks.ssm
	s.scanSTile = avx2Kernels.ssm.scanSTile
	ks.ssm = &s
}

// vnniExtras are the vnni tier's kernels that need AVX-512 BF16 as well:
// the bfloat16 pair kernels of bf16 products (the packed path's
// micro-kernel, the mat-vec and x8 kernels).
var vnniExtras = []tierExtra{{feature: cpuid.AVX512BF16, what: "the bf16 products' VDPBF16PS paths", drop: withoutBF16}}

// withoutBF16 returns ks without its bfloat16 pair kernels: the bf16
// products then widen their weights as the avx512 tier does.
func withoutBF16(ks *kernelSet) *kernelSet {
	return deriveKernels(ks, ks.name, func(ks *kernelSet) {
		ks.gemv[quant.BF16] = avx512Kernels.gemv[quant.BF16]
		delete(ks.gemvPF, quant.BF16)
		ks.x8[quant.BF16] = avx512Kernels.x8[quant.BF16]
		for t, g := range ks.gemm {
			if g.microBF16 != nil {
				c := *g
				c.microBF16 = nil
				ks.gemm[t] = &c
			}
		}
	})
}
