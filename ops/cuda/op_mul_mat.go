package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// MUL_MAT and MUL_MAT_ID's products: kernels/mul_mat.cu (preparation,
// matrix-vector), mul_mat_q.cu and mul_mat_f.cu (tiled), device code
// shared in kernels/mm.cuh; MUL_MAT_ID's grouping is mul_mat_id.cu
// (op_mul_mat_id.go).
//
// A product first prepares its activations: the integer paths (weights
// q4_0, q4_1, q5_0, q5_1, q8_0, q2_K ... q6_K) quantize them to blocks of
// 32 int8 codes with a float scale and the halves' code sums (ggml's q8_1
// with a float scale: at most the error of the q8_0 or q8_K activations
// the CPU uses); the float paths (f32, f16, bf16, and q8_1 and q8_K, whose
// dot products ggml takes in f32) read f32 rows, converted to a packed
// copy unless the activations already are f32 with packed rows, or f16 or
// bf16 rows for the tensor-core kernels. Then up to mmvMaxCols columns
// (per batch) take the matrix-vector kernels and more the tiled ones.
//
// MUL_MAT_ID with up to mmvMaxCols (slot, token) pairs runs the
// matrix-vector kernels with a pair per grid row, reading its expert from
// ids; with more, kb_mmid_group groups the pairs by expert on the device
// (and lists the column tiles: up to the tile's columns of pairs of one
// expert each), and the tiled kernels MUL_MAT would run (the same tiles,
// see mmidHalfTile) run over that list, reading each column's activation
// row and output through its pair, so each expert's weights are read
// once per tile of its pairs. Both check the ids: one out of range is
// Compute's error.

func init() {
	kernelsByOp.Add(ops.OpMulMat, supportsMulMat, launchMulMat)
}

// mmvMaxCols is the most columns the matrix-vector kernels take
// (KB_MMV_COLS); tests lower it to run every case through the tiled
// kernels.
var mmvMaxCols int64 = 8

// useMMA selects the tensor-core kernels (the tiled f16, bf16 and integer
// ones) on devices that have them (sm_80 and later; the emulator reports
// sm_80). Tests turn it off to run the SIMT ones (__dp4a, f32 FMAs).
var useMMA = true

// Tile sizes of the tiled kernels (KB_BM, KB_BN) and their block.
const (
	tileM   = 64
	tileN   = 64
	tileNT  = 128
	mmvRows = 4  // warps per matrix-vector block (KB_MMV_WARPS)
	mmvqSeg = 64 // chunks of 32 weights per k step of kb_mmvq (KB_MMVQ_SEG)
	// mmvq1Bytes is about how many bytes of a row kb_mmvq1 copies per
	// warp and k step by cp.async (KB_MMVQ1_BYTES; mmvqStep): a whole
	// 4096-wide row of q8_0 or a smaller type. (Before sm_80 the kernel
	// takes steps of 2560 bytes, within the shared memory sized for these.)
	mmvq1Bytes = 4352
	q8aSize    = 40 // sizeof(kb_q8a)
)

// bigTileM is the weight rows of kb_mmq128_*'s tile (KB_BM2): tileN
// columns, 2*bigTileM threads, mmqShared(bigTileM) bytes of dynamic
// shared memory.
const bigTileM = 128

// mmqShared is the bytes of kernels/mul_mat_q.cu's tiles of bm weight
// rows but the column offsets (KB_QSMEM): per row 36 ints of codes, 5
// float4 scale pairs and 140 raw bytes; per column and buffer 36 ints of
// codes and 5 8-byte heads, two buffers.
func mmqShared(bm int) int { return bm*(36*4+5*16+(4*34+4)) + 2*tileN*(36*4+5*8) }

// The tile of the tensor-core integer kernels, forced or chosen
// (tileAuto).
const (
	tileAuto  = 0
	tileSmall = tileM
	tileBig   = bigTileM
)

// Environment variables that force a tiled product's tile or split, read
// when a backend opens (tileForce), to time each choice on a GPU.
const (
	mmqTileEnv  = "KERNBENCH_CUDA_MMQ_TILE"  // 64 or 128
	hTileEnv    = "KERNBENCH_CUDA_HTILE"     // 128x128, 128x128w4, 128x64 or 64x64
	mmqSplitEnv = "KERNBENCH_CUDA_MMQ_SPLIT" // the k splits: 1 (none) or more
	// faVecSplitsEnv caps FLASH_ATTN_EXT's vector (decode) kernel's KV
	// splits: 1 (none) to faVecMaxSplits.
	faVecSplitsEnv = "KERNBENCH_CUDA_FA_VEC_SPLITS"
)

// tileForce is the tiles a backend's tiled products are forced to: mmq
// (tileSmall or tileBig) for the integer tensor-core kernels, half (a
// named hTile) for the f16/bf16 ones, split (1 or more) the integer
// MUL_MAT's k splits; tileAuto, the zero hTile and split 0 leave the
// choice to mmqTileRows, hTileFor and kSplits. faVecSplits (1 to
// faVecMaxSplits) caps the attention decode kernel's KV splits, 0 leaving
// faVecMaxSplits (faVecGeometryFor). Tests set a backend's to run every
// case through one tile or split.
type tileForce struct {
	mmq         int
	half        hTile
	split       int64
	faVecSplits int
}

// tileForceFromEnv reads $KERNBENCH_CUDA_MMQ_TILE, $KERNBENCH_CUDA_HTILE,
// $KERNBENCH_CUDA_MMQ_SPLIT and $KERNBENCH_CUDA_FA_VEC_SPLITS through
// getenv; a value that names no tile or count leaves the choice, and a
// cap of the decode kernel's splits past faVecMaxSplits is
// faVecMaxSplits (the combine kernel's most).
func tileForceFromEnv(getenv func(string) string) tileForce {
	f := tileForce{mmq: tileFromEnv(getenv(mmqTileEnv)), half: hTileFromEnv(getenv(hTileEnv))}
	if n, err := strconv.ParseInt(strings.TrimSpace(getenv(mmqSplitEnv)), 10, 64); err == nil && n > 0 {
		f.split = n
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv(faVecSplitsEnv))); err == nil && n > 0 {
		f.faVecSplits = min(n, faVecMaxSplits)
	}
	return f
}

// Split-k of the integer tiled MUL_MAT: where its blocks are fewer than
// the SMs, the k chunks (of 32) are split into runs of whole k steps
// (kStep chunks, KB_QC), each block computing one run of one tile into a
// partial copy of the output (scratchSplitK), and kb_mmq_splitk_sum adds
// them up. A split gets minSplitSteps steps or more, so that the
// partials' writes and reads stay small against the weights'.
const (
	kStep         = 4
	minSplitSteps = 4
)

// kSplits returns into how many runs to split kc chunks of k for a
// product of blocks blocks on sms SMs: as many as fit the SMs in one
// wave (sms/blocks), at most one per minSplitSteps steps; 1 where the
// blocks already fill the SMs. force (> 0) overrides the count, up to one
// run per step.
func kSplits(blocks, kc int64, sms int, force int64) int64 {
	steps := (kc + kStep - 1) / kStep
	n := int64(1)
	switch {
	case force > 0:
		n = force
	case blocks < int64(sms):
		n = min(int64(sms)/max(blocks, 1), steps/minSplitSteps)
	}
	return max(1, min(n, steps))
}

// kRun returns the chunks of each of n runs over kc chunks (whole steps)
// and the runs that then hold chunks: n or fewer, none empty.
func kRun(kc, n int64) (chunks, runs int64) {
	steps := (kc + kStep - 1) / kStep
	chunks = (steps + n - 1) / n * kStep
	return chunks, (kc + chunks - 1) / chunks
}

// tileFromEnv reads $KERNBENCH_CUDA_MMQ_TILE: "64" or "128" force that
// tile; anything else leaves the choice to mmqTileRows.
func tileFromEnv(v string) int {
	switch strings.TrimSpace(v) {
	case "64":
		return tileSmall
	case "128":
		return tileBig
	}
	return tileAuto
}

// hTileFromEnv reads $KERNBENCH_CUDA_HTILE: the tile it names, or the
// zero hTile.
func hTileFromEnv(v string) hTile {
	switch strings.TrimSpace(v) {
	case "128x128":
		return hTile128x128
	case "128x128w4":
		return hTile128x128w4
	case "128x64":
		return hTile128x64
	case "64x64":
		return hTileSmall
	}
	return hTile{}
}

// mmqTileRows returns the weight rows per tile of the integer tensor-core
// product of m rows over colTiles column tiles (of tileN; per batch
// included) on a device of sms multiprocessors: bigTileM where its tiles
// still give every SM a block, else tileM, whose twice as many blocks
// keep more of the GPU busy. force (tileSmall or tileBig) overrides the
// choice.
func mmqTileRows(m, colTiles int64, sms, force int) int64 {
	if force != tileAuto {
		return int64(force)
	}
	if (m+bigTileM-1)/bigTileM*colTiles >= int64(sms) {
		return bigTileM
	}
	return tileM
}

// mmvqStep is kb_mmvq's k step for weights of type wt and ncols columns
// (kb_mmvq_geom): chunks of 32 weights and bytes of a row. Several
// columns: mmvqSeg chunks. One column (kb_mmvq1): the whole blocks that
// fit in mmvq1Bytes, in multiples of the blocks whose bytes are a
// multiple of 16, so that every step of a 16-byte aligned row starts
// 16-byte aligned.
func mmvqStep(wt quant.Type, ncols int64) (seg, step int64) {
	cpb, bytes := wt.BlockSize()/32, wt.TypeSize()
	if ncols > 1 {
		return mmvqSeg, mmvqSeg / cpb * bytes
	}
	align := 16 / min(bytes&-bytes, 16) // bytes&-bytes: the largest power of 2 dividing bytes
	nb := max(mmvq1Bytes/bytes/align*align, align)
	return nb * cpb, nb * bytes
}

// mmvGeometry is a matrix-vector launch over m weight rows of type wt with
// ncols columns per grid row: the grid's x, the block, and the dynamic
// shared memory. kb_mmvq: a warp per row, 4 rows a block, its shared
// memory a step's activation blocks of every column and a step's weight
// bytes per warp. kb_mmvf: W warps per row (threadIdx.x/32) and 4/W rows a
// block (threadIdx.y), W growing as m shrinks so that short matrices
// still fill the device.
func mmvGeometry(wt quant.Type, m, ncols int64) (gx uint32, block dim3, shared int) {
	return mmvGeometryK(wt, m, ncols, math.MaxInt64)
}

// mmvGeometryK is mmvGeometry for rows of k weights: kb_mmvq lays its
// shared memory out for steps no longer than the row (mmvGeometry's,
// for any k, is enough for every row).
func mmvGeometryK(wt quant.Type, m, ncols, k int64) (gx uint32, block dim3, shared int) {
	if q8Acts(wt) {
		seg, step := mmvqStep(wt, ncols)
		if k/32 < seg {
			seg, step = k/32, k/32/(wt.BlockSize()/32)*wt.TypeSize()
		}
		shared = int((ncols*seg*q8aSize+15)/16*16 + mmvRows*((step+15)/16*16+16))
		return uint32((m + mmvRows - 1) / mmvRows), dim3{32 * mmvRows, 1, 1}, shared
	}
	w := int64(1)
	switch {
	case m < 2048:
		w = 4
	case m < 4096:
		w = 2
	}
	rows := mmvRows / w
	return uint32((m + rows - 1) / rows), dim3{uint32(32 * w), uint32(rows), 1}, 0
}

// Scratch slots (see scratchBuffer): one per kind of intermediate data,
// so that one node's kernels never share a slot for two purposes.
const (
	scratchActs    = iota // MUL_MAT(_ID)'s converted activations
	scratchGroups         // MUL_MAT_ID's pairs grouped by expert
	scratchSort           // ARGSORT's keys of long rows
	scratchFAParts        // FLASH_ATTN_EXT's partial results of KV splits
	scratchSplitK         // MUL_MAT's partial products of k splits
)

// intPath reports whether weights of type t take the integer dot products
// against quantized activations.
func intPath(t quant.Type) bool {
	switch t {
	case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return true
	}
	return false
}

// q8Acts reports whether weights of type t take their matrix-vector
// products as integer dot products against activations quantized to q8a
// blocks (kb_mmvq): the intPath types and iqTypes (kernels/mul_mat_iq.cu).
func q8Acts(t quant.Type) bool { return intPath(t) || isIQType(t) }

// typeNum is the kernels' number for an activation or prepared type.
func typeNum(t quant.Type) int32 { return int32(t) }

func supportsMulMat(t *ops.Tensor) error {
	if len(t.Src) != 2 {
		return fmt.Errorf("want 2 sources, got %d", len(t.Src))
	}
	a, x := t.Src[0], t.Src[1]
	want, err := ops.MulMat(a, x)
	if err != nil {
		return err
	}
	if err := supportsMatmulTypes(t, want, a.Type, x.Type); err != nil {
		return err
	}
	if b := x.Ne[2] * x.Ne[3]; b > 65535 {
		return fmt.Errorf("%d batches, more than a grid takes", b)
	}
	if tiles := (x.Ne[1] + tileN - 1) / tileN; tiles > 65535 {
		return fmt.Errorf("%d columns, more than a grid takes", x.Ne[1])
	}
	return nil
}

// supportsMatmulTypes checks what both ops share: the node as its
// constructor builds it (want), with f32 elements packed, and the types.
func supportsMatmulTypes(t, want *ops.Tensor, w, x quant.Type) error {
	if t.Type != want.Type || t.Ne != want.Ne {
		return fmt.Errorf("node is %v %v, its sources give %v %v", t.Type, t.Ne, want.Type, want.Ne)
	}
	if t.Nb[0] != 4 {
		return fmt.Errorf("output elements are not packed (nb[0]=%d)", t.Nb[0])
	}
	if !isWeightType(w) {
		return fmt.Errorf("weight type %v", w)
	}
	if x != quant.F32 && x != quant.F16 && x != quant.BF16 {
		return fmt.Errorf("activation type %v, want f32, f16 or bf16", x)
	}
	return nil
}

// mmArgs builds a kb_mm (kernels/mm.cuh): every field 8 bytes, in order.
type mmArgs struct {
	w                   uint64
	wNb1, wNb2, wNb3    int64
	x                   uint64
	xNb1, xNb2, xNb3    int64
	d                   uint64
	dNb1, dNb2, dNb3    int64
	m, n, k             int64
	b2, r2, r3          int64
	ids                 uint64
	idsNb0, idsNb1      int64
	used, b1, nExpert   int64
	pairs, tiles, ntile uint64
	status              uint64
	part                uint64
	partNb, kspl, nspl  int64
}

func (a *mmArgs) bytes() []byte {
	v := [...]int64{
		int64(a.w), a.wNb1, a.wNb2, a.wNb3,
		int64(a.x), a.xNb1, a.xNb2, a.xNb3,
		int64(a.d), a.dNb1, a.dNb2, a.dNb3,
		a.m, a.n, a.k, a.b2, a.r2, a.r3,
		int64(a.ids), a.idsNb0, a.idsNb1, a.used, a.b1, a.nExpert,
		int64(a.pairs), int64(a.tiles), int64(a.ntile), int64(a.status),
		int64(a.part), a.partNb, a.kspl, a.nspl,
	}
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

// prepared is where the kernels read the activations and how.
type prepared struct {
	x                uint64
	nb1, nb2, nb3    int64
	quantized, halfs bool // q8a blocks; f16/bf16 rows (else f32 rows)
}

// prepare readies activations x (device address px) for weights of type
// wt: q8a blocks for the integer paths, f16/bf16 rows for the tensor-core
// kernels (half), else f32 rows, x itself where it has them.
func (b *Backend) prepare(x *ops.Tensor, px uint64, wt quant.Type, half bool) (prepared, error) {
	k, n1, n2, n3 := x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3]
	rows := n1 * n2 * n3
	if q8Acts(wt) {
		row := k / 32 * 40 // sizeof(kb_q8a)
		buf, err := b.scratchBuffer(scratchActs, rows*row)
		if err != nil {
			return prepared{}, err
		}
		warps := rows * (k / 32)
		blocks := min(max((warps+3)/4, 1), 65535)
		err = b.launch("mul_mat.cu", "kb_quantize_q8a", dim3{uint32(blocks), 1, 1}, dim3{128, 1, 1}, 0,
			u64(px), tensorArg(x), i32(typeNum(x.Type)), u64(buf))
		return prepared{x: buf, nb1: row, nb2: n1 * row, nb3: n2 * n1 * row, quantized: true}, err
	}
	if !half && x.Type == quant.F32 && x.Nb[0] == 4 && px%4 == 0 && x.Nb[1]%4 == 0 && x.Nb[2]%4 == 0 && x.Nb[3]%4 == 0 {
		return prepared{x: px, nb1: x.Nb[1], nb2: x.Nb[2], nb3: x.Nb[3]}, nil
	}
	ot, size := quant.F32, int64(4)
	if half {
		ot, size = wt, 2
	}
	buf, err := b.scratchBuffer(scratchActs, rows*k*size)
	if err != nil {
		return prepared{}, err
	}
	grid, block := elementGrid(x.NumElements())
	err = b.launch("mul_mat.cu", "kb_convert_act", grid, block, 0,
		u64(px), tensorArg(x), i32(typeNum(x.Type)), u64(buf), i32(typeNum(ot)))
	row := k * size
	return prepared{x: buf, nb1: row, nb2: n1 * row, nb3: n2 * n1 * row, halfs: half}, err
}

// A tileLaunch is a tiled kernel and its geometry: weight rows and
// columns per block, threads, dynamic shared memory, and the k splits
// (1: none) of kspl chunks of 32 each.
type tileLaunch struct {
	name            string
	rows, cols      int64
	threads, shared int
	splits, kspl    int64
}

// tileFor picks the tiled kernel for weights of type wt, name being
// tiledKernel's (half: it reads f16/bf16 rows, 16-byte aligned or not),
// for m weight rows over colTiles column tiles of tileN and k of kc
// chunks of 32: the integer tensor-core kernels with the tile
// mmqTileRows picks (kb_mmq128_* for the big one, with its dynamic
// shared memory), but the big one split over k where split allows it
// and the big tiles split fill the SMs better than the small ones
// unsplit; f16/bf16 ones with the tile h (Backend.halfTile's; the zero
// hTile where !half); the others 64x64 tiles. The integer kernels split
// k (kSplits) where split allows.
func (b *Backend) tileFor(wt quant.Type, name string, half bool, h hTile, m, colTiles, kc int64, split bool) tileLaunch {
	blocks := func(rows int64) int64 { return (m + rows - 1) / rows * colTiles }
	tl := tileLaunch{name, tileM, tileN, tileNT, 0, 1, 0}
	switch {
	case half:
		return tileLaunch{h.Name + wt.String(), h.M, h.N, int(h.Threads), 0, 1, 0}
	case !q8Acts(wt):
		return tl
	}
	if b.mmaKernels() {
		rows := mmqTileRows(m, colTiles, b.info.SMs, b.tiles.mmq)
		if split && b.tiles.mmq == tileAuto && rows == tileM && kSplits(blocks(bigTileM), kc, b.info.SMs, b.tiles.split) > 1 {
			rows = bigTileM
		}
		if rows == bigTileM {
			tl = tileLaunch{"kb_mmq128_" + wt.String(), bigTileM, tileN, 2 * bigTileM, mmqShared(bigTileM), 1, 0}
		}
	}
	if split {
		tl.kspl, tl.splits = kRun(kc, kSplits(blocks(tl.rows), kc, b.info.SMs, b.tiles.split))
	}
	return tl
}

// launchTiled launches tl over m rows, colTiles column tiles and batches
// (its k splits too: args' kspl and nspl set, the partials in part).
func (b *Backend) launchTiled(file string, tl tileLaunch, m, colTiles, batches int64, args mmArgs) error {
	grid := dim3{uint32((m + tl.rows - 1) / tl.rows), uint32(colTiles), uint32(batches * args.nspl)}
	if args.nspl <= 1 {
		grid.z = uint32(batches)
	}
	return b.launch(file, tl.name, grid, dim3{uint32(tl.threads), 1, 1}, tl.shared, args.bytes())
}

// launchSplit launches tl as launchTiled does, k split into tl.splits
// runs: the partials into a scratch copy of the output's layout per run
// (its extent: m rows of n columns over b2 x b3 batches at args' d
// strides), then kb_mmq_splitk_sum.
func (b *Backend) launchSplit(file string, tl tileLaunch, colTiles, b2, b3 int64, args mmArgs) error {
	ext := (args.m-1)*4 + (args.n-1)*args.dNb1 + (b2-1)*args.dNb2 + (b3-1)*args.dNb3 + 4
	ext = (ext + 255) / 256 * 256
	part, err := b.scratchBuffer(scratchSplitK, tl.splits*ext)
	if err != nil {
		return err
	}
	args.part, args.partNb, args.kspl, args.nspl = part, ext, tl.kspl, tl.splits
	if err := b.launchTiled(file, tl, args.m, colTiles, b2*b3, args); err != nil {
		return err
	}
	total := args.m * args.n * b2 * b3
	grid, block := elementGrid(total)
	return b.launch("mul_mat_q.cu", "kb_mmq_splitk_sum", grid, block, 0, args.bytes(), i64(total))
}

// mmaKernels reports whether the tensor-core kernels run here.
func (b *Backend) mmaKernels() bool { return useMMA && b.info.Major >= 8 }

// tiledKernel returns the file and name of the tiled kernel for weights
// of type wt, and whether it wants f16/bf16 activation rows.
func (b *Backend) tiledKernel(wt quant.Type) (string, string, bool) {
	switch {
	case isIQType(wt) && b.mmaKernels():
		return "mul_mat_iq.cu", "kb_mmq_" + wt.String(), false
	case isIQType(wt):
		return "mul_mat_iq.cu", "kb_mmq_dp4a_" + wt.String(), false
	case intPath(wt) && b.mmaKernels():
		return "mul_mat_q.cu", "kb_mmq_" + wt.String(), false
	case intPath(wt):
		return "mul_mat_q.cu", "kb_mmq_dp4a_" + wt.String(), false
	case (wt == quant.F16 || wt == quant.BF16) && b.mmaKernels():
		return "mul_mat_f.cu", "kb_mmh_" + wt.String(), true
	}
	return "mul_mat_f.cu", "kb_mmf_" + wt.String(), false
}

// kernelFor returns the file and name of the kernel for weights of type
// wt: tiled, or matrix-vector over cols columns per grid row (the
// one-column variants for 1); and whether it wants f16/bf16 activations.
func (b *Backend) kernelFor(wt quant.Type, tiled bool, cols int64) (string, string, bool) {
	one := ""
	if cols == 1 {
		one = "1"
	}
	switch {
	case tiled:
		return b.tiledKernel(wt)
	case isIQType(wt):
		return "mul_mat_iq.cu", "kb_mmvq" + one + "_" + wt.String(), false
	case intPath(wt):
		return "mul_mat.cu", "kb_mmvq" + one + "_" + wt.String(), false
	}
	return "mul_mat.cu", "kb_mmvf" + one + "_" + wt.String(), false
}

// checkAligned refuses weights the kernels' loads cannot read: 2-byte
// (4-byte for f32) alignment of the data and its strides.
func checkAligned(w *ops.Tensor, pw uint64) error {
	if w.Type == quant.MXFP4 {
		return nil // kb_decode reads its 17-byte blocks a byte at a time
	}
	al := int64(2)
	if w.Type == quant.F32 {
		al = 4
	}
	if int64(pw)%al != 0 || w.Nb[1]%al != 0 || w.Nb[2]%al != 0 || w.Nb[3]%al != 0 {
		return fmt.Errorf("weights %s are not %d-byte aligned", w.Name, al)
	}
	return nil
}

// An hTile is the geometry of a tiled f16/bf16 tensor-core kernel.
type hTile struct {
	Name          string // kernel name less the weight type: kb_mmh_, kb_mmh128x128_ ...
	M, N, Threads int64  // weight rows and columns per block, threads per block
}

// The f16/bf16 tiles: small (the MUL_MAT_ID kernel's, rows of any
// alignment) and the two large ones of MUL_MAT.
var (
	hTileSmall   = hTile{"kb_mmh_", tileM, tileN, tileNT}
	hTile128x64  = hTile{"kb_mmh128x64_", 128, 64, 256}
	hTile128x128 = hTile{"kb_mmh128x128_", 128, 128, 256}
	// hTile128x128w4 is 128x128 over 4 warps of 64x64: half the ldmatrix
	// loads per product of 8 warps of 64x32, at twice the registers.
	hTile128x128w4 = hTile{"kb_mmh128x128w4_", 128, 128, 128}
)

// hTileFor picks MUL_MAT's f16/bf16 tile for an m x n product over
// batches on a device of sms multiprocessors, whose rows are 16-byte
// aligned or not (aligned): 128x128 over 4 warps where that gives every
// SM two blocks or more (8 warps an SM, half the ldmatrix loads per
// product), over 8 warps where it keeps 7/8 of the SMs busy, else 128x64
// where that fills at least half of them, else the small tile, which
// also takes unaligned rows. The backend's tileForce overrides it
// (Backend.halfTile).
func hTileFor(m, n, batches int64, sms int, aligned bool) hTile {
	if !aligned {
		return hTileSmall
	}
	blocks := func(t hTile) int64 { return (m + t.M - 1) / t.M * ((n + t.N - 1) / t.N) * batches }
	switch b, sm := blocks(hTile128x128), int64(sms); {
	case b >= 2*sm:
		return hTile128x128w4
	case 8*b >= 7*sm:
		return hTile128x128
	case 2*blocks(hTile128x64) >= sm:
		return hTile128x64
	}
	return hTileSmall
}

// halfTile is the f16/bf16 tile of an m x n product over batches whose
// rows are 16-byte aligned or not: the backend's forced tile where it has
// one (a large one only for aligned rows), else hTileFor's.
func (b *Backend) halfTile(m, n, batches int64, aligned bool) hTile {
	if f := b.tiles.half; f.Name != "" && (aligned || f == hTileSmall) {
		return f
	}
	return hTileFor(m, n, batches, b.info.SMs, aligned)
}

// rows16 reports whether a MUL_MAT's f16/bf16 weights w (at pw) and
// prepared activations act are read whole as 16-byte chunks: k % 8 == 0
// and every row 16-byte aligned.
func rows16(w *ops.Tensor, pw uint64, act prepared) bool {
	var or uint64
	for _, v := range []int64{int64(pw), w.Nb[1], w.Nb[2], w.Nb[3], int64(act.x), act.nb1, act.nb2, act.nb3} {
		or |= uint64(v)
	}
	return w.Ne[0]%8 == 0 && or%16 == 0
}

func launchMulMat(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	w, x := t.Src[0], t.Src[1]
	if err := checkAligned(w, src[0]); err != nil {
		return err
	}
	m, n := w.Ne[1], x.Ne[1]
	batches := x.Ne[2] * x.Ne[3]
	tiled := n > mmvMaxCols
	file, name, half := b.kernelFor(w.Type, tiled, n)
	act, err := b.prepare(x, src[1], w.Type, half)
	if err != nil {
		return err
	}
	args := mmArgs{
		w: src[0], wNb1: w.Nb[1], wNb2: w.Nb[2], wNb3: w.Nb[3],
		x: act.x, xNb1: act.nb1, xNb2: act.nb2, xNb3: act.nb3,
		d: dst, dNb1: t.Nb[1], dNb2: t.Nb[2], dNb3: t.Nb[3],
		m: m, n: n, k: w.Ne[0], b2: x.Ne[2], r2: x.Ne[2] / w.Ne[2], r3: x.Ne[3] / w.Ne[3],
		used: 1, b1: 1,
	}
	if tiled {
		var h hTile
		if half {
			h = b.halfTile(m, n, batches, rows16(w, src[0], act))
		}
		tl := b.tileFor(w.Type, name, half, h, m, (n+tileN-1)/tileN*batches, w.Ne[0]/32, true)
		if tl.splits > 1 && batches*tl.splits <= 65535 { // grid z: split x batches + batch
			return b.launchSplit(file, tl, (n+tl.cols-1)/tl.cols, x.Ne[2], x.Ne[3], args)
		}
		return b.launchTiled(file, tl, m, (n+tl.cols-1)/tl.cols, batches, args)
	}
	gx, block, shared := mmvGeometryK(w.Type, m, n, w.Ne[0])
	return b.launch(file, name, dim3{gx, uint32(batches), 1}, block, shared, args.bytes())
}
