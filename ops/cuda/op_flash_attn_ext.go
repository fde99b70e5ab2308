package cuda

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// FLASH_ATTN_EXT: kernels/flash_attn_ext.cu.

func init() {
	kernelsByOp.Add(ops.OpFlashAttnExt, supportsFlashAttn, launchFlashAttn)
}

const (
	faTile      = 32  // keys per tile (FA_KT)
	faMaxSplits = 32  // the tiled and tensor-core kernels' most KV splits (FA_MAX_SPLITS is the vector kernel's)
	faMaxHead   = 256 // the largest head size (q·k and v)
	faMaxWarps  = 4
)

// faSplitsOverride, when positive, sets the number of KV splits (at most
// one per tile and faMaxSplits): tests take the split path with it.
var faSplitsOverride int

// faKernelOverride, when not faAuto, makes faKernelFor pick that kernel
// wherever it can run (tests take every path with it); it wins over
// $KERNBENCH_CUDA_FA (faKernelEnv).
var faKernelOverride faKernel

// A faKernel is one of FLASH_ATTN_EXT's kernels.
type faKernel int

const (
	faAuto  faKernel = iota // no override
	faTiled                 // kb_flash_attn_ext_r*: f32 tiles of keys in shared memory, FMA
	faVec                   // kb_flash_attn_vec_*: decode, K and V read once from global memory
	faMMA                   // kb_flash_attn_mma_d*: prefill on tensor cores
)

// faKernelEnv names the environment variable that forces a
// FLASH_ATTN_EXT kernel wherever it can run (parseFAKernel).
const faKernelEnv = "KERNBENCH_CUDA_FA"

// parseFAKernel reads $KERNBENCH_CUDA_FA: empty or auto, tiled, vec or
// mma.
func parseFAKernel(v string) (faKernel, error) {
	switch v {
	case "", "auto":
		return faAuto, nil
	case "tiled":
		return faTiled, nil
	case "vec":
		return faVec, nil
	case "mma":
		return faMMA, nil
	}
	return faAuto, fmt.Errorf("cuda: $%s=%q: want auto, tiled, vec or mma", faKernelEnv, v)
}

const (
	faVecWarps   = 4 // FV_WARPS
	faVecMaxRows = 8 // the most query rows per K/V head the vector kernel takes
	faVecMinKeys = 64
	// faVecMaxSplits is the vector kernel's most KV splits
	// (FA_MAX_SPLITS; the other kernels stop at faMaxSplits).
	faVecMaxSplits = 64
	// faVecBlocksPerSM is how many of the vector kernel's blocks an SM
	// holds (__launch_bounds__(128, 4) in fa_vec.cuh: at most 128
	// registers a thread); faVecGeometryFor splits the keys for
	// faVecWaves waves of them.
	faVecBlocksPerSM = 4
	faVecWaves       = 2

	faMMARows = 64 // FM_ROWS: (query, head) rows per block of the tensor-core kernel
)

// faKernelFor picks the kernel for t with K and V at device addresses
// kPtr and vPtr, override (faAuto: none) asking for one wherever it can
// run:
//   - the vector kernel where each K/V head has at most faVecMaxRows
//     (query, head) rows per sequence (decode, GQA groups of up to 8), K
//     and V are both f16 or both q8_0 with rows of 64, 128 or 256
//     contiguous elements (q·k and v alike), and every K and V row starts
//     16 bytes aligned for f16 (2 for q8_0, whose blocks are read in
//     2-byte pieces);
//   - the tensor-core kernel for more rows (prefill) where faMMAFits;
//   - the tiled kernel otherwise.
func faKernelFor(t *ops.Tensor, kPtr, vPtr uint64, override faKernel) faKernel {
	q, k := t.Src[ops.FAQ], t.Src[ops.FAK]
	rows := q.Ne[1] * (q.Ne[2] / k.Ne[2])
	switch {
	case override == faTiled || rows == 0:
		return faTiled
	case override == faMMA:
		if faMMAFits(t, kPtr, vPtr) {
			return faMMA
		}
		return faTiled
	case override == faVec || rows <= faVecMaxRows:
		if faVecFits(t, kPtr, vPtr) {
			return faVec
		}
		return faTiled
	case faMMAFits(t, kPtr, vPtr):
		return faMMA
	}
	return faTiled
}

// faVecFits reports whether the vector kernel takes t's types, head
// sizes and K/V addresses.
func faVecFits(t *ops.Tensor, kPtr, vPtr uint64) bool {
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	d := q.Ne[0]
	if (k.Type != quant.F16 && k.Type != quant.Q8_0) || v.Type != k.Type || v.Ne[0] != d || (d != 64 && d != 128 && d != 256) {
		return false
	}
	return faAligned(k, kPtr) && faAligned(v, vPtr)
}

// faMMAFits reports whether the tensor-core kernel takes t: head sizes
// q·k = v of 64, 80, 96, 112, 128 or 256; K and V each f16 (rows 16-byte
// aligned, copied by cp.async), q8_0 or q4_0 (2-byte aligned), with
// contiguous rows.
func faMMAFits(t *ops.Tensor, kPtr, vPtr uint64) bool {
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	switch d := q.Ne[0]; {
	case v.Ne[0] != d:
		return false
	case d != 64 && d != 80 && d != 96 && d != 112 && d != 128 && d != 256:
		return false
	}
	for _, x := range []*ops.Tensor{k, v} {
		if x.Type != quant.F16 && x.Type != quant.Q8_0 && x.Type != quant.Q4_0 {
			return false
		}
	}
	return faAligned(k, kPtr) && faAligned(v, vPtr)
}

// faAligned reports whether x at device address ptr has contiguous rows
// that all start aligned as the vector and tensor-core kernels read
// them: 16 bytes for f16, 2 for the block types.
func faAligned(x *ops.Tensor, ptr uint64) bool {
	align := int64(16)
	if x.Type != quant.F16 {
		align = 2
	}
	return x.HasContiguousRows() && int64(ptr)%align == 0 && x.Nb[1]%align == 0 && x.Nb[2]%align == 0 && x.Nb[3]%align == 0
}

// faMMAKeys is the tensor-core kernel's keys per tile for head size d
// (FM_KT in kernels/fa_mma.cuh): 32 for the heads built for three blocks
// per multiprocessor with 32 keys (80, 96) and for 256, 64 otherwise.
func faMMAKeys(d int64) int {
	if d == 80 || d == 96 || d > 128 {
		return 32
	}
	return 64
}

// faMMAGeometryFor is the tensor-core kernel's launch for t on a device
// of sms multiprocessors: blocks of 4 warps over faMMARows rows, tiles of
// faMMAKeys keys in two stages of f16 K and V rows of d+8 halves (and,
// for head size 256, the q rows in shared memory too), and the keys split
// as faGeometryFor splits them when the blocks are few.
func faMMAGeometryFor(t *ops.Tensor, sms int) faGeometry {
	q, k := t.Src[ops.FAQ], t.Src[ops.FAK]
	d, nq, nh, nhk, nkv := q.Ne[0], q.Ne[1], q.Ne[2], k.Ne[2], k.Ne[1]
	rows := nq * (nh / nhk)
	g := faGeometry{mma: true, warps: 4, cols: int(d), keys: faMMAKeys(d)}
	ld := int(d) + 8
	qs := 0
	if d > 128 {
		qs = faMMARows * ld
	}
	g.sharedBytes = 2 * (qs + 4*g.keys*ld)
	g.rowBlocks = (rows + faMMARows - 1) / faMMARows
	ntiles := int((nkv + int64(g.keys) - 1) / int64(g.keys))
	g.splits, g.tiles = 1, max(ntiles, 1)
	blocks := g.rowBlocks * nhk * q.Ne[3]
	want := 1
	if faSplitsOverride > 0 {
		want = faSplitsOverride
	} else if sms > 0 && blocks < int64(2*sms) {
		want = int((int64(2*sms) + blocks - 1) / blocks)
	}
	if want = min(want, ntiles, faMaxSplits); want > 1 {
		g.tiles = (ntiles + want - 1) / want
		g.splits = (ntiles + g.tiles - 1) / g.tiles
	}
	return g
}

// faVecGeometryFor is the vector kernel's launch for t on a device of sms
// multiprocessors: blocks of faVecWarps warps over up to 8 rows (1, 2, 4
// or 8 as the rows need), and the keys split so that the grid is
// faVecWaves waves of faVecBlocksPerSM blocks per multiprocessor (a
// decoded token of a GQA model has only a block per K/V head, 8 on
// llama-3-8b: the loads in flight, not the load width, bound the kernel),
// each split at least faVecMinKeys keys (tiles of faTile keys) and at
// most maxSplits splits (faVecMaxSplits where maxSplits is 0 or more:
// $KERNBENCH_CUDA_FA_VEC_SPLITS, tileForce.faVecSplits, sets it to time
// the choice on a GPU).
func faVecGeometryFor(t *ops.Tensor, sms, maxSplits int) faGeometry {
	if maxSplits <= 0 || maxSplits > faVecMaxSplits {
		maxSplits = faVecMaxSplits
	}
	q, k := t.Src[ops.FAQ], t.Src[ops.FAK]
	d, nq, nh, nhk, nkv := q.Ne[0], q.Ne[1], q.Ne[2], k.Ne[2], k.Ne[1]
	rows := nq * (nh / nhk)
	g := faGeometry{vec: true, warps: faVecWarps, cols: int(d), rpw: 1, q8: k.Type == quant.Q8_0}
	for int64(g.rpw) < min(rows, faVecMaxRows) {
		g.rpw *= 2
	}
	g.rowBlocks = (rows + int64(g.rpw) - 1) / int64(g.rpw)
	// Rows of FV_LD(D) floats (q, the warps' accumulators), the warps'
	// (m, l) pairs and q's q8_0 block scales.
	g.sharedBytes = 4 * (g.rpw*(g.cols+16)*(1+faVecWarps) + faVecWarps*g.rpw*2 + g.rpw*g.cols/32)
	ntiles := int((nkv + faTile - 1) / faTile)
	g.splits, g.tiles = 1, max(ntiles, 1)
	blocks := g.rowBlocks * nhk * q.Ne[3]
	want := 1
	if faSplitsOverride > 0 {
		want = min(faSplitsOverride, ntiles)
	} else if target := int64(faVecWaves * faVecBlocksPerSM * sms); sms > 0 && blocks < target {
		want = min(int((target+blocks-1)/blocks), ntiles*faTile/faVecMinKeys)
	}
	if want = min(want, maxSplits); want > 1 {
		g.tiles = (ntiles + want - 1) / want
		g.splits = (ntiles + g.tiles - 1) / g.tiles
	}
	return g
}

// name is the kernel's name.
func (g faGeometry) name() string {
	switch {
	case g.vec && g.q8:
		return fmt.Sprintf("kb_flash_attn_vec_q8_0_d%d_r%d", g.cols, g.rpw)
	case g.vec:
		return fmt.Sprintf("kb_flash_attn_vec_d%d_r%d", g.cols, g.rpw)
	case g.mma:
		return fmt.Sprintf("kb_flash_attn_mma_d%d", g.cols)
	}
	return fmt.Sprintf("kb_flash_attn_ext_r%d_d%d", g.rpw, g.cols)
}

func supportsFlashAttn(t *ops.Tensor) error {
	p, ok := t.Params.(ops.FlashAttnParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.FlashAttnParams", t.Params)
	}
	if len(t.Src) < 3 || len(t.Src) > 5 {
		return fmt.Errorf("want 3 to 5 sources, got %d", len(t.Src))
	}
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	want, err := ops.FlashAttnExt(q, k, v, srcAt(t, ops.FAMask), srcAt(t, ops.FASinks), p)
	if err != nil {
		return err
	}
	if t.Type != quant.F32 || t.Ne != want.Ne {
		return fmt.Errorf("node is %v %v, its sources give %v %v", t.Type, t.Ne, want.Type, want.Ne)
	}
	if !kvTypeOK(k.Type) || !kvTypeOK(v.Type) {
		return fmt.Errorf("K/V types %v and %v, the kernels take f32, f16, q8_0 and q4_0", k.Type, v.Type)
	}
	if q.Ne[0] > faMaxHead || v.Ne[0] > faMaxHead {
		return fmt.Errorf("head sizes %d (q·k) and %d (v), the kernels take up to %d", q.Ne[0], v.Ne[0], faMaxHead)
	}
	if q.Ne[3] > math.MaxUint16 || k.Ne[2] > math.MaxUint16/faVecMaxSplits {
		return fmt.Errorf("%d sequences and %d K/V heads, more than a grid takes", q.Ne[3], k.Ne[2])
	}
	g := faGeometryOf(t)
	if g.rowBlocks > math.MaxInt32 || t.NumRows() > math.MaxInt32 {
		return fmt.Errorf("%d query rows, more than a grid takes", t.NumRows())
	}
	return nil
}

// faGeometry is a FLASH_ATTN_EXT launch's shape.
type faGeometry struct {
	vec, q8     bool  // the vector kernel (rpw is then its rows per block, cols its head size); of q8_0 K/V
	mma         bool  // the tensor-core kernel (cols is its head size)
	keys        int   // the tensor-core kernel's keys per tile (tiles counts those)
	rpw, warps  int   // rows per warp, warps per block
	rowBlocks   int64 // blocks over a K/V head's (query, head) rows
	cols        int   // the kernel's largest dv: 64, 128 or 256
	splits      int   // KV splits
	tiles       int   // tiles per split
	sharedBytes int
}

// faGeometryOf picks the launch for t on a device of sms multiprocessors:
// 16 rows per block (4 per warp) when a K/V head has that many (query,
// head) rows, fewer for decode; and, when that leaves under two blocks
// per multiprocessor, the keys split over more blocks (at least a tile
// each).
func faGeometryOf(t *ops.Tensor) faGeometry { return faGeometryFor(t, 0) }

func faGeometryFor(t *ops.Tensor, sms int) faGeometry {
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	d, dv, nq, nh, nhk, nkv := q.Ne[0], v.Ne[0], q.Ne[1], q.Ne[2], k.Ne[2], k.Ne[1]
	rows := nq * (nh / nhk) // per K/V head and sequence
	var g faGeometry
	switch {
	case rows >= 16:
		g.rpw = 4
	case rows >= 8:
		g.rpw = 2
	default:
		g.rpw = 1
	}
	g.warps = int(min(faMaxWarps, max(1, (rows+int64(g.rpw)-1)/int64(g.rpw))))
	qr := int64(g.rpw * g.warps)
	g.rowBlocks = (rows + qr - 1) / qr
	switch {
	case dv <= 64:
		g.cols = 64
	case dv <= 128:
		g.cols = 128
	default:
		g.cols = 256
	}
	// q rows padded to float4s, K rows one float longer (an odd stride),
	// V rows as they are (kernels/flash_attn_ext.cu).
	ldq := (d + 3) &^ 3
	g.sharedBytes = 4 * int(qr*ldq+faTile*(ldq+1)+faTile*dv)
	ntiles := int((nkv + faTile - 1) / faTile)
	g.splits, g.tiles = 1, max(ntiles, 1)
	blocks := g.rowBlocks * nhk * q.Ne[3]
	want := 1
	if faSplitsOverride > 0 {
		want = faSplitsOverride
	} else if sms > 0 && blocks < int64(2*sms) {
		want = int((int64(2*sms) + blocks - 1) / blocks)
	}
	if want = min(want, ntiles, faMaxSplits); want > 1 {
		g.tiles = (ntiles + want - 1) / want
		g.splits = (ntiles + g.tiles - 1) / g.tiles
	}
	return g
}

func launchFlashAttn(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	p := t.Params.(ops.FlashAttnParams)
	q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
	mask, sinks := srcAt(t, ops.FAMask), srcAt(t, ops.FASinks)
	override := faKernelOverride
	if override == faAuto {
		override = b.faKernel
	}
	var g faGeometry
	switch faKernelFor(t, src[ops.FAK], src[ops.FAV], override) {
	case faVec:
		g = faVecGeometryFor(t, b.info.SMs, b.tiles.faVecSplits)
	case faMMA:
		g = faMMAGeometryFor(t, b.info.SMs)
	default:
		g = faGeometryFor(t, b.info.SMs)
	}
	var maskPtr, sinkPtr uint64
	mtype := int32(-1)
	if mask != nil {
		maskPtr, mtype = src[ops.FAMask], int32(mask.Type)
	}
	if sinks != nil {
		sinkPtr = src[ops.FASinks]
	}
	var part uint64
	rows := t.NumRows()
	if g.splits > 1 {
		// Per split and output row: dv partial sums, then (m, l) pairs
		// after all of them, in the backend's scratch memory.
		var err error
		if part, err = b.scratchBuffer(scratchFAParts, int64(g.splits)*rows*(v.Ne[0]+2)*4); err != nil {
			return err
		}
	}
	scale, softcap := p.Scale, p.Softcap
	if softcap > 0 {
		scale /= softcap
	}
	m0, m1, nLog2 := alibiBases(p.MaxBias, q.Ne[2])
	var ps gpu.CStruct
	ps.F32(scale)
	ps.F32(softcap)
	ps.F32(m0)
	ps.F32(m1)
	ps.I32(nLog2)
	ps.I32(int32(k.Type))
	ps.I32(int32(v.Type))
	ps.I32(mtype)
	ps.I32(int32(q.Ne[2] / k.Ne[2]))
	ps.I32(int32(g.splits))
	ps.I32(int32(g.tiles))
	err = b.launch("flash_attn_ext.cu", g.name(),
		dim3{uint32(g.rowBlocks), uint32(k.Ne[2]) * uint32(g.splits), uint32(q.Ne[3])}, dim3{32, uint32(g.warps), 1}, g.sharedBytes,
		u64(src[ops.FAQ]), tensorArg(q), u64(src[ops.FAK]), tensorArg(k), u64(src[ops.FAV]), tensorArg(v),
		u64(maskPtr), optTensorArg(mask), u64(sinkPtr), optTensorArg(sinks), u64(dst), tensorArg(t), u64(part), ps.Bytes())
	if err != nil || g.splits == 1 {
		return err
	}
	return b.launch("flash_attn_ext.cu", "kb_flash_attn_combine", dim3{uint32(rows), 1, 1}, dim3{uint32(min(rowBlock(v.Ne[0]), 256)), 1, 1}, 0,
		u64(part), i32(int32(g.splits)), u64(sinkPtr), optTensorArg(sinks), u64(dst), tensorArg(t))
}

// kvTypeOK reports whether the kernels read K or V of type t.
func kvTypeOK(t quant.Type) bool {
	return t == quant.F32 || t == quant.F16 || t == quant.Q8_0 || t == quant.Q4_0
}
