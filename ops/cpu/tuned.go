package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops/tuning"
)

// GemvRows is the most weight rows one task of the matrix-vector path
// takes (MUL_MAT with fewer than 4 activation rows): the cap on a tile's
// rows before tileSizes shrinks tiles to give every thread several.
// Fewer rows balance the threads better and hand out more tasks; more
// rows hand out fewer.
var GemvRows = tuning.Param{
	Name:       "cpu.mulmat.gemv_rows",
	Doc:        "weight rows per task of the matrix-vector MUL_MAT path (n < 4)",
	Default:    tileRows,
	Candidates: []int{4, 8, 16, 32, 64, 128},
}

// SgemmRows is the most weight rows one block of the packed float gemm
// path takes (f32, f16, bf16 and the decoded formats, at least sgemmMinN
// activation rows). Each 6x32 micro-tile reuses its two activation
// panels (32 KiB, held in L1) for every 6-row group of the block, and
// the panels arrive from L3, so taller blocks wait on L3 less; the
// block's widened weight rows (rows x 1 KiB) and its partial sums (rows
// x 2 KiB) must stay in L2, so too tall a block spills. The row blocks
// are then evened out so every thread gets as many.
var SgemmRows = tuning.Param{
	Name:       "cpu.mulmat.sgemm_rows",
	Doc:        "most weight rows per block of the packed float MUL_MAT path (n >= 16)",
	Default:    384,
	Candidates: []int{96, 192, 288, 384, 576, 768},
}

// X8Prefetch is how many bytes ahead of its reads an x8 matrix-vector
// kernel (repacked weights, mul_mat_x8.go) prefetches its weight stream
// into L1: the decode path's DRAM stream. Too short and the loads wait
// on DRAM (1 KiB was enough on a Zen 3, 12-20% short of the decode
// speed 4-8 KiB gave on a Zen 5); too long and the lines can be evicted
// before they are read. 0 prefetches the line being read: none ahead.
var X8Prefetch = tuning.Param{
	Name:       "cpu.mulmat.x8_prefetch",
	Doc:        "bytes ahead of its reads the x8 matrix-vector kernels prefetch the repacked weights (n < 4)",
	Default:    4096,
	Candidates: []int{0, 1024, 2048, 4096, 8192, 16384},
}

// EltL3Bytes is the vector width, in bytes, of ADD's and MUL's row
// kernels where their tensors are past the threads' L2s but within the
// last level cache and two or more threads run them, on a tier with both
// widths (avx512, vnni): 64 the zmm kernels, 32 the ymm ones (the same
// results bit for bit). Which is faster is the core's: on a Zen 5 zmm
// was 8% faster streaming ADD of [4096, 512] from L3 with two threads,
// on a Zen 4, whose 512-bit operations run as two 256-bit halves, 20-25%
// slower. One thread takes ymm there whatever this says (6% faster on
// the Zen 5).
var EltL3Bytes = tuning.Param{
	Name:       "cpu.elt.l3_vector_bytes",
	Doc:        "vector width of ADD and MUL past the L2s within the last level cache, two or more threads (32 ymm, 64 zmm)",
	Default:    64,
	Candidates: []int{32, 64},
}

// Gemv512 selects the four-row matrix-vector kernels (MUL_MAT with 1-3
// activation rows on weights in their plain layout, not repacked) of the
// avx512 and vnni tiers: 1 their 512-bit ones (VPDPBUSD for the integer
// formats on vnni, zmm for f16), 0 the AVX2 ones (the same results bit
// for bit; f32's and bf16's kernels stay). Which is faster is the core's:
// on a Zen 4, which runs 512-bit operations as two 256-bit halves, the
// AVX2 ones were 15-17% faster for q4_0, q4_K and q5_K in L3 and 14-38%
// for f16 from DRAM; on a Zen 5 the 512-bit ones are. The avx2 and
// generic tiers have one kind only.
var Gemv512 = tuning.Param{
	Name:       "cpu.mulmat.gemv_512",
	Doc:        "the avx512/vnni tiers' four-row matrix-vector kernels of plain weights (n < 4): 1 their 512-bit ones (VNNI, zmm f16), 0 AVX2's",
	Default:    1,
	Candidates: []int{0, 1},
}

// GemvPrefetch selects whether the avx512 and vnni tiers' f32 (zmm) and
// bf16 (VDPBF16PS, vnni) four-row matrix-vector kernels of plain
// weights ask, once a line, for the same line of the next four rows into
// L2 as the AVX2 kernels do (1), or leave the streaming to the hardware
// prefetchers (0); the same results bit for bit. Which is faster is the
// core's: on a Zen 5 the next-rows prefetch was slower for bf16 from
// DRAM (4096x14336); on a Zen 4 it was 1.2-1.4x faster for f32 and bf16
// matrices of 16-64 MiB from L3 or DRAM and 6-12% slower for ones held
// in L2 or L3 (1-16 MiB, read over and over).
var GemvPrefetch = tuning.Param{
	Name:       "cpu.mulmat.gemv_prefetch",
	Doc:        "the avx512/vnni tiers' f32 and bf16 four-row matrix-vector kernels of plain weights (n < 4): 1 prefetch the next four rows, 0 none",
	Default:    0,
	Candidates: []int{0, 1},
}

// KTileVNNI selects the vnni tier's panel kernels of the K formats
// (q4_K, q5_K, q6_K: MUL_MAT and MUL_MAT_ID from 16 activation rows):
// 1 its VPDPBUSD ones, 0 AVX2's (the same results bit for bit). Which is
// faster is the core's: on a Zen 4 the AVX2 ones were 8-29% faster
// (m=4096 n=512 k=4096); on a Zen 5 the VNNI ones are 1.13-1.36x
// faster. The other tiers have one kind only.
var KTileVNNI = tuning.Param{
	Name:       "cpu.mulmat.ktile_vnni",
	Doc:        "the vnni tier's q4_K, q5_K and q6_K panel kernels (n >= 16): 1 VPDPBUSD, 0 AVX2's",
	Default:    1,
	Candidates: []int{0, 1},
}

// SSMTile512 selects the avx512 and vnni tiers' tiled SSM_SCAN kernel
// (Mamba-2's scalar A, every token after a sequence's first, d_state a
// multiple of 16: all the head's rows on a scaled state in one call): 1
// their zmm one, 0 AVX2's (the same results bit for bit). Which is
// faster is the core's: on a Zen 4, which runs 512-bit operations as two
// 256-bit halves, the AVX2 one was 4-6% faster (d_state 128, head_dim
// 64, 48 heads, 64 and 512 tokens; alternated), where
// Mamba-1's zmm kernels are 22% faster than AVX2's and stay. The other
// tiers have one kind only.
var SSMTile512 = tuning.Param{
	Name:       "cpu.ssm.tile_512",
	Doc:        "the avx512/vnni tiers' tiled SSM_SCAN kernel of Mamba-2 (scalar A, after the first token): 1 zmm, 0 AVX2's",
	Default:    1,
	Candidates: []int{0, 1},
}

// Tunables returns the CPU backend's tunable parameters.
func Tunables() []tuning.Param {
	return []tuning.Param{GemvRows, SgemmRows, X8Prefetch, EltL3Bytes, Gemv512, GemvPrefetch, KTileVNNI, SSMTile512}
}

// tunedParams are a backend's resolved parameter values.
type tunedParams struct {
	values   tuning.Values
	source   string
	gemvRows int64
	// sgemmRows is SgemmRows's value.
	sgemmRows int64
	// x8Prefetch is X8Prefetch's value.
	x8Prefetch int64
	// eltL3Bytes is EltL3Bytes's value.
	eltL3Bytes int
}

// resolveTuned returns the values for Options.Tuned v: v itself when not
// nil, else what $KERNBENCH_TUNED selects (see tuning.Load).
func resolveTuned(v tuning.Values) (tunedParams, error) {
	src := "Options.Tuned"
	if v == nil {
		var err error
		if v, src, err = tuning.Load(); err != nil {
			return tunedParams{}, fmt.Errorf("cpu: tuned parameters: %w", err)
		}
	}
	if err := v.Check(Tunables()); err != nil {
		return tunedParams{}, fmt.Errorf("cpu: tuned parameters from %s: %w", src, err)
	}
	return tunedParams{values: v, source: src, gemvRows: int64(v.Get(GemvRows)), sgemmRows: int64(v.Get(SgemmRows)), x8Prefetch: int64(v.Get(X8Prefetch)), eltL3Bytes: v.Get(EltL3Bytes)}, nil
}

// Tuned returns the value of every tunable parameter the backend runs
// with, and where the tuned ones came from ("" when all are defaults).
func (b *Backend) Tuned() (tuning.Values, string) {
	out := tuning.Values{}
	for _, p := range Tunables() {
		out[p.Name] = b.tuned.values.Get(p)
	}
	return out, b.tuned.source
}

// tileSizesCap is tileSizes with at most capRows rows a tile.
func tileSizesCap(m, n, batches int64, threads int, capRows int64) (tm, tn int64) {
	tm, tn = min(capRows, max(m, 1)), min(tileCols, max(n, 1))
	want := 4 * int64(threads)
	for batches*ceilDiv(m, tm)*ceilDiv(n, tn) < want {
		switch {
		case tn > 1 && tn >= tm:
			tn = (tn + 1) / 2
		case tm > 1:
			tm = (tm + 1) / 2
		default:
			return tm, tn
		}
	}
	return tm, tn
}
