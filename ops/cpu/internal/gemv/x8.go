package gemv

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The x8 layout (ggml's CPU repack, in the form these kernels read): the
// weight rows of a matrix are taken eight at a time, and a group of eight
// rows is stored block by block, each block holding the eight rows'
// scales (their binary16 bits, 16 bytes) and then their codes
// interleaved four bytes at a time: code vector v (32 bytes) holds bytes
// 4v..4v+3 of each row's codes, row r at bytes 4r..4r+3.
//
//   - q4_0 (X8BytesQ4_0 = 144 bytes a block, as eight plain blocks): four
//     code vectors of the packed nibbles as they are, so a vector's low
//     nibbles are elements 4v..4v+3 of each row and its high nibbles
//     elements 16+4v..16+4v+3.
//   - q8_0 (X8BytesQ8_0 = 272 bytes, as eight plain blocks): eight code
//     vectors, vector v elements 4v..4v+3 of each row (package qgemm's
//     q8_0 panel codes).
//
// A group so takes the bytes its eight plain rows took, and a matrix
// repacked group by group (rows past the last whole group left plain)
// keeps every group and row at its plain byte offset. The kernels read
// one contiguous stream per group, and one broadcast of four activation
// codes multiplies eight rows' codes at once, each row in its own
// int32 lane of the sums: no horizontal sums, and one FMA per block for
// all eight rows. The K formats' x8 layouts (q6_K, q4_K) are in x8k.go.

// Bytes of one x8 block (eight rows by one 32-element block).
const (
	X8BytesQ4_0 = 8 * simd.BytesQ4_0
	X8BytesQ8_0 = 8 * simd.BytesQ8_0
)

// Side data slots per block of the x8 kernels (float32 each): q4_0 takes
// Q4_0Prep's data (the side kernel's), q8_0 d_y alone (X8Q8_0Prep).
const (
	X8SlotsQ4_0 = SideSlots
	X8SlotsQ8_0 = 1
)

// An X8Func sets out[8g+r] to the dot product of nb blocks of row r of
// group g (g < ng; groups nb x8 blocks apart from x) with the q8_0
// activation row y, given its side data (the kernel's Prep). The
// assembly kernels prefetch the weight stream pfd bytes ahead of their
// reads (the CPU backend's tunable X8Prefetch; any value is safe, as a
// prefetch never faults, and none changes the result); the twins ignore
// it.
type X8Func func(nb, ng int, x, y []byte, side []float32, out []float32, pfd int)

// RepackX8Q4_0 writes the x8 form of the eight q4_0 rows in src (nb
// blocks each, rows contiguous) into dst (8*nb*18 bytes).
func RepackX8Q4_0(dst, src []byte, nb int) {
	repackX8(dst, src, nb, simd.BytesQ4_0, 16)
}

// RepackX8Q8_0 writes the x8 form of the eight q8_0 rows in src (nb
// blocks each, rows contiguous) into dst (8*nb*34 bytes).
func RepackX8Q8_0(dst, src []byte, nb int) {
	repackX8(dst, src, nb, simd.BytesQ8_0, 32)
}

// repackX8 interleaves eight rows of nb blocks of bs bytes (a 2-byte
// scale and nq code bytes) into x8 blocks.
func repackX8(dst, src []byte, nb, bs, nq int) {
	if nb <= 0 {
		return
	}
	row := nb * bs
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xb := dst[8*b*bs : 8*(b+1)*bs]
		for r := range 8 {
			blk := src[r*row+b*bs:][:bs]
			xb[2*r], xb[2*r+1] = blk[0], blk[1]
			for v := range nq / 4 {
				copy(xb[16+32*v+4*r:][:4], blk[2+4*v:][:4])
			}
		}
	}
}

// UnpackX8 undoes RepackX8Q4_0 (bs = 18) or RepackX8Q8_0 (bs = 34):
// it writes the eight plain rows of the x8 group src into dst.
func UnpackX8(dst, src []byte, nb, bs int) {
	if nb <= 0 {
		return
	}
	row := nb * bs
	nq := bs - 2
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xb := src[8*b*bs : 8*(b+1)*bs]
		for r := range 8 {
			blk := dst[r*row+b*bs:][:bs]
			blk[0], blk[1] = xb[2*r], xb[2*r+1]
			for v := range nq / 4 {
				copy(blk[2+4*v:][:4], xb[16+32*v+4*r:][:4])
			}
		}
	}
}

// X8Q8_0Prep writes the q8_0 x8 kernel's side data of the q8_0 row y (nb
// blocks) into side: per block d_y.
func X8Q8_0Prep(y []byte, nb int, side []float32) {
	for ib := range nb {
		side[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
	}
}

// The x8 kernels round as the plain layout's four-row kernels do, so a
// product gives the same bits in either layout: each row keeps the same
// lanes, FMAs and final sum, only eight rows share the instructions.

// X8Q4_0Twin is the q4_0 x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: each row as SideQ4_0Twin computes it (four int32 lanes per block,
// lane l the exact sum of (q-8)*y over elements 4l..4l+3 and
// 16+4l..16+4l+3, each FMA'd with d_x*d_y into its own accumulator, the
// four summed as (v0+v1)+(v2+v3)). The side data must be Q4_0Prep's of y.
func X8Q4_0Twin(nb, ng int, x, y []byte, side []float32, out []float32, _ int) {
	x8Twin(nb, ng, x, y, out, simd.BytesQ4_0, SideQ4_0Twin)
}

// X8Q8_0Twin is the q8_0 x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: each row as Q8_0Twin computes it (eight lanes of the sign trick
// per block, each FMA'd with d_x*d_y into its own accumulator, reduced as
// HSUM8). The side data must be X8Q8_0Prep's of y.
func X8Q8_0Twin(nb, ng int, x, y []byte, side []float32, out []float32, _ int) {
	x8Twin(nb, ng, x, y, out, simd.BytesQ8_0, Q8_0Twin)
}

// x8Twin computes every row of ng x8 groups of blocks of bs bytes with
// the plain layout's twin, row by row.
func x8Twin(nb, ng int, x, y []byte, out []float32, bs int, twin func(n int, x, y []byte) float32) {
	rows := make([]byte, 8*nb*bs)
	for g := range ng {
		UnpackX8(rows, x[g*8*nb*bs:(g+1)*8*nb*bs], nb, bs)
		for r := range 8 {
			out[8*g+r] = twin(nb*32, rows[r*nb*bs:(r+1)*nb*bs], y)
		}
	}
}
