package gemv

import (
	"math"

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
// all eight rows.

// Bytes of one x8 block (eight rows by one 32-element block).
const (
	X8BytesQ4_0 = 8 * simd.BytesQ4_0
	X8BytesQ8_0 = 8 * simd.BytesQ8_0
)

// Side data slots per block of the x8 kernels (float32 each): q4_0 takes
// d_y and the int32 8*sum(y) (as its bits), q8_0 d_y alone.
const (
	X8SlotsQ4_0 = 2
	X8SlotsQ8_0 = 1
)

// An X8Func sets out[8g+r] to the dot product of nb blocks of row r of
// group g (g < ng; groups nb x8 blocks apart from x) with the q8_0
// activation row y, given its side data (the kernel's Prep).
type X8Func func(nb, ng int, x, y []byte, side []float32, out []float32)

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

// X8Q4_0Prep writes the q4_0 x8 kernel's side data of the q8_0 row y (nb
// blocks) into side: per block d_y and 8*sum(y) as int32 bits.
func X8Q4_0Prep(y []byte, nb int, side []float32) {
	for ib := range nb {
		by, s := y[ib*simd.BytesQ8_0:][:simd.BytesQ8_0], side[ib*X8SlotsQ4_0:][:X8SlotsQ4_0]
		var sum int32
		for _, c := range by[2:] {
			sum += int32(int8(c))
		}
		s[0] = simd.HalfAt(by, 0)
		s[1] = math.Float32frombits(uint32(8 * sum))
	}
}

// X8Q8_0Prep writes the q8_0 x8 kernel's side data of the q8_0 row y (nb
// blocks) into side: per block d_y.
func X8Q8_0Prep(y []byte, nb int, side []float32) {
	for ib := range nb {
		side[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
	}
}

// X8Q4_0Twin is the q4_0 x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: per block and row the exact integer sum(q*y) - 8*sum(y) (that is,
// sum((q-8)*y), for every code, -128 included), converted to float32
// and added by one FMA with d_x*d_y (a float32 product) into the row's
// accumulator, blocks in order.
func X8Q4_0Twin(nb, ng int, x, y []byte, side []float32, out []float32) {
	for g := range ng {
		var acc [8]float32
		for ib := range nb {
			xb := x[(g*nb+ib)*X8BytesQ4_0:][:X8BytesQ4_0]
			by := y[ib*simd.BytesQ8_0:][:simd.BytesQ8_0]
			dy := side[ib*X8SlotsQ4_0]
			s8 := int32(math.Float32bits(side[ib*X8SlotsQ4_0+1]))
			for r := range 8 {
				var sum int32
				for v := range 4 {
					for i := range 4 {
						q := xb[16+32*v+4*r+i]
						sum += int32(q&15)*int32(int8(by[2+4*v+i])) + int32(q>>4)*int32(int8(by[18+4*v+i]))
					}
				}
				d := simd.HalfAt(xb, 2*r) * dy
				acc[r] = simd.FMA32(float32(sum-s8), d, acc[r])
			}
		}
		copy(out[8*g:8*g+8], acc[:])
	}
}

// X8Q8_0Twin is the q8_0 x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: per block and row the lanes of the sign trick (simd.SignedLanes:
// |x| times y with x's sign, exact for activation codes in [-127, 127])
// summed as int32, converted to float32 and added by one FMA with
// d_x*d_y into the row's accumulator, blocks in order.
func X8Q8_0Twin(nb, ng int, x, y []byte, side []float32, out []float32) {
	for g := range ng {
		var acc [8]float32
		for ib := range nb {
			xb := x[(g*nb+ib)*X8BytesQ8_0:][:X8BytesQ8_0]
			ys := simd.Codes8(y[ib*simd.BytesQ8_0+2:][:32])
			for r := range 8 {
				var xs [32]int8
				for v := range 8 {
					for i := range 4 {
						xs[4*v+i] = int8(xb[16+32*v+4*r+i])
					}
				}
				var sum int32
				for _, l := range simd.SignedLanes(&xs, &ys) {
					sum += l
				}
				d := simd.HalfAt(xb, 2*r) * side[ib]
				acc[r] = simd.FMA32(float32(sum), d, acc[r])
			}
		}
		copy(out[8*g:8*g+8], acc[:])
	}
}

// x8Check panics unless the slices hold what an x8 kernel reads: ng
// groups of nb blocks of xb bytes, nb q8_0 blocks, nb*per side slots and
// 8*ng outputs (the wrappers call it before the assembly).
func x8Check(nb, ng, xb, per int, x, y []byte, side, out []float32) {
	_, _, _, _ = x[ng*nb*xb-1], y[nb*simd.BytesQ8_0-1], side[nb*per-1], out[8*ng-1]
}
