package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
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
// (and lists the column tiles: 64 pairs of one expert each), and the tiled
// kernels run over that list, so each expert's weights are read once per
// 64 of its pairs. Both check the ids: one out of range is Compute's error.

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
	q8aSize = 40 // sizeof(kb_q8a)
)

// mmvGeometry is a matrix-vector launch over m weight rows of type wt with
// ncols columns per grid row: the grid's x, the block, and the dynamic
// shared memory. kb_mmvq: a warp per row, 4 rows a block, its shared
// memory a step's activation blocks of every column and a step's weight
// bytes per warp. kb_mmvf: W warps per row (threadIdx.x/32) and 4/W rows a
// block (threadIdx.y), W growing as m shrinks so that short matrices
// still fill the device.
func mmvGeometry(wt quant.Type, m, ncols int64) (gx uint32, block dim3, shared int) {
	if intPath(wt) {
		step := mmvqSeg * 32 / wt.BlockSize() * wt.TypeSize()
		shared = int(ncols*mmvqSeg*q8aSize + mmvRows*((step+15)/16*16+16))
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
}

func (a *mmArgs) bytes() []byte {
	var s gpu.CStruct
	for _, v := range []int64{
		int64(a.w), a.wNb1, a.wNb2, a.wNb3,
		int64(a.x), a.xNb1, a.xNb2, a.xNb3,
		int64(a.d), a.dNb1, a.dNb2, a.dNb3,
		a.m, a.n, a.k, a.b2, a.r2, a.r3,
		int64(a.ids), a.idsNb0, a.idsNb1, a.used, a.b1, a.nExpert,
		int64(a.pairs), int64(a.tiles), int64(a.ntile), int64(a.status),
	} {
		s.I64(v)
	}
	return s.Bytes()
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
	if intPath(wt) {
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

// mmaKernels reports whether the tensor-core kernels run here.
func (b *Backend) mmaKernels() bool { return useMMA && b.info.Major >= 8 }

// tiledKernel returns the file and name of the tiled kernel for weights
// of type wt, and whether it wants f16/bf16 activation rows.
func (b *Backend) tiledKernel(wt quant.Type) (string, string, bool) {
	switch {
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
	case intPath(wt):
		return "mul_mat.cu", "kb_mmvq" + one + "_" + wt.String(), false
	}
	return "mul_mat.cu", "kb_mmvf" + one + "_" + wt.String(), false
}

// checkAligned refuses weights the kernels' loads cannot read: 2-byte
// (4-byte for f32) alignment of the data and its strides.
func checkAligned(w *ops.Tensor, pw uint64) error {
	al := int64(2)
	if w.Type == quant.F32 {
		al = 4
	}
	if int64(pw)%al != 0 || w.Nb[1]%al != 0 || w.Nb[2]%al != 0 || w.Nb[3]%al != 0 {
		return fmt.Errorf("weights %s are not %d-byte aligned", w.Name, al)
	}
	return nil
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
		grid := dim3{uint32((m + tileM - 1) / tileM), uint32((n + tileN - 1) / tileN), uint32(batches)}
		return b.launch(file, name, grid, dim3{tileNT, 1, 1}, 0, args.bytes())
	}
	gx, block, shared := mmvGeometry(w.Type, m, n)
	return b.launch(file, name, dim3{gx, uint32(batches), 1}, block, shared, args.bytes())
}
