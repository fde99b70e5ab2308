package gemv

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// The x8 layouts of the K formats (256-element super-blocks, q8_K
// activations). An x8 block holds one super-block of eight rows in the
// bytes their eight plain blocks took, as the 32-element layouts do, but
// the 6-bit codes are regrouped so that the kernels unpack them with
// fewer instructions than the plain layout needs; each row's integer
// sums are still exact, so the outputs equal the dot product's bit for
// bit.
//
// Three bytes a, b, c hold four 6-bit values v0..v3 as a = v0 | (v3 &
// 3) << 6, b = v1 | (v3 >> 2 & 3) << 6, c = v2 | (v3 >> 4) << 6: three
// values come out with one AND each, the fourth with three ANDs, three
// shifts and two ORs (a "6-bit triple" below).
//
//   - q6_K (X8BytesQ6_K = 1680 bytes): the eight rows' d (binary16, 16
//     bytes); their 16 signed scales in eight chunks of 16 bytes, chunk
//     t = 4h+2k+u holding sub-blocks j = 8h+k+4u and j+2 as [rows 0-3 of
//     j, rows 0-3 of j+2, rows 4-7 of j, rows 4-7 of j+2] (so one
//     VPMOVSXBW and two word unpacks give each row's scale in both words
//     of its int32 lane); then the codes, for half h and chunk c (0..7)
//     a 6-bit triple of three 32-byte vectors (96 bytes at 144 +
//     96(8h+c)) whose values v_i hold element 128h + 32i + 4c + e of row
//     r at byte 4r+e: four consecutive elements of each row per vector,
//     as the 32-element layouts interleave them.
//   - q4_K (X8BytesQ4_K = 1152 bytes): the eight rows' d (16 bytes) and
//     dmin (16 bytes); their 6-bit scales and mins as one 6-bit triple of
//     three 32-byte vectors (at 32), v0 the scales of sub-blocks 0-3, v1
//     those of 4-7, v2 the mins of 0-3, v3 those of 4-7, sub-block q (of
//     the vector's four) of row r at byte 16(r/4) + 4q + r%4 (so one
//     VPSHUFB spreads a sub-block's eight values to word pairs); then the
//     codes as q4_0's x8 codes, 32 vectors of bytes 4v..4v+3 of each
//     row's 128 code bytes (row r at 4r).
//
// Their side data is X8Q8_KPrep's: d_y per block.

// Bytes of one x8 block of the K formats (eight rows by one 256-element
// super-block).
const (
	X8BytesQ4_K = 8 * simd.BytesQ4_K
	X8BytesQ6_K = 8 * simd.BytesQ6_K
)

// X8SlotsK is the side data slots per block of the K formats' x8
// kernels: d_y (X8Q8_KPrep).
const X8SlotsK = 1

// X8Q8_KPrep writes the K formats' x8 side data of the q8_K row y (nb
// blocks) into side: per block d_y.
func X8Q8_KPrep(y []byte, nb int, side []float32) {
	for ib := range nb {
		side[ib] = simd.Float32At(y, ib*simd.BytesQ8_K)
	}
}

// pack6 returns the 6-bit triple of v0..v3.
func pack6(v0, v1, v2, v3 byte) (a, b, c byte) {
	return v0&63 | (v3&3)<<6, v1&63 | (v3>>2&3)<<6, v2&63 | (v3>>4&3)<<6
}

// unpack6 undoes pack6.
func unpack6(a, b, c byte) (v0, v1, v2, v3 byte) {
	return a & 63, b & 63, c & 63, a>>6 | (b>>6)<<2 | (c>>6)<<4
}

// setQ6KCode sets the 6-bit code of element e of the plain q6_K block
// blk (whose code bytes must start zeroed).
func setQ6KCode(blk []byte, e int, q byte) {
	h, i, l := e/128, e%128/32, e%32
	blk[64*h+32*(i%2)+l] |= (q & 15) << (4 * uint(i/2))
	blk[128+32*h+l] |= (q >> 4 & 3) << (2 * uint(i))
}

// q6KScaleChunk returns the offset in a q6_K x8 block of the scale of
// sub-block j of row r.
func q6KScaleChunk(j, r int) int {
	h, k, u, hi := j/8, j%2, j%8/4, j%4/2
	return 16 + 16*(4*h+2*k+u) + 8*(r/4) + 4*hi + r%4
}

// RepackX8Q6_K writes the x8 form of the eight q6_K rows in src (nb
// super-blocks each, rows contiguous) into dst (8*nb*210 bytes).
func RepackX8Q6_K(dst, src []byte, nb int) {
	const bs, xb = simd.BytesQ6_K, X8BytesQ6_K
	if nb <= 0 {
		return
	}
	row := nb * bs
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xbk := dst[b*xb : (b+1)*xb]
		for r := range 8 {
			blk := src[r*row+b*bs:][:bs]
			xbk[2*r], xbk[2*r+1] = blk[208], blk[209]
			for j := range 16 {
				xbk[q6KScaleChunk(j, r)] = blk[192+j]
			}
			for h := range 2 {
				ql0, ql1, qh := blk[64*h:][:32], blk[64*h+32:][:32], blk[128+32*h:][:32]
				for l := range 32 {
					// Elements 128h+l, +32, +64, +96 (q6KCode's).
					lo, hi, q := ql0[l], ql1[l], qh[l]
					a, bb, c := pack6(lo&15|(q&3)<<4, hi&15|(q>>2&3)<<4, lo>>4|(q>>4&3)<<4, hi>>4|(q>>6)<<4)
					o := 144 + 96*(8*h+l/4) + 4*r + l%4
					xbk[o], xbk[o+32], xbk[o+64] = a, bb, c
				}
			}
		}
	}
}

// UnpackX8Q6_K undoes RepackX8Q6_K: it writes the eight plain rows of
// the x8 group src (nb super-blocks) into dst.
func UnpackX8Q6_K(dst, src []byte, nb int) {
	const bs, xb = simd.BytesQ6_K, X8BytesQ6_K
	if nb <= 0 {
		return
	}
	row := nb * bs
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xbk := src[b*xb : (b+1)*xb]
		for r := range 8 {
			blk := dst[r*row+b*bs:][:bs]
			clear(blk[:192])
			blk[208], blk[209] = xbk[2*r], xbk[2*r+1]
			for j := range 16 {
				blk[192+j] = xbk[q6KScaleChunk(j, r)]
			}
			for h := range 2 {
				for l := range 32 {
					o := 144 + 96*(8*h+l/4) + 4*r + l%4
					v0, v1, v2, v3 := unpack6(xbk[o], xbk[o+32], xbk[o+64])
					e := 128*h + l
					setQ6KCode(blk, e, v0)
					setQ6KCode(blk, e+32, v1)
					setQ6KCode(blk, e+64, v2)
					setQ6KCode(blk, e+96, v3)
				}
			}
		}
	}
}

// q4KScaleMin returns the 6-bit scale and min codes of sub-block j
// (0..7) of a q4_K block from its 12 packed scale bytes s.
func q4KScaleMin(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// setQ4KScaleMin sets the 6-bit scale and min codes of sub-block j of a
// q4_K block's 12 scale bytes s (which must start zeroed).
func setQ4KScaleMin(s []byte, j int, sc, m byte) {
	if j < 4 {
		s[j] |= sc & 63
		s[j+4] |= m & 63
		return
	}
	s[j+4] |= sc&15 | (m&15)<<4
	s[j-4] |= (sc >> 4) << 6
	s[j] |= (m >> 4) << 6
}

// q4KScalePos returns the byte of value vector v (0..3: scales 0-3,
// scales 4-7, mins 0-3, mins 4-7) of sub-block j (its index within the
// vector's four) and row r in a q4_K x8 block's scale triple.
func q4KScalePos(j, r int) int {
	return 16*(r/4) + 4*(j%4) + r%4
}

// RepackX8Q4_K writes the x8 form of the eight q4_K rows in src (nb
// super-blocks each, rows contiguous) into dst (8*nb*144 bytes).
func RepackX8Q4_K(dst, src []byte, nb int) {
	const bs, xb = simd.BytesQ4_K, X8BytesQ4_K
	if nb <= 0 {
		return
	}
	row := nb * bs
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xbk := dst[b*xb : (b+1)*xb]
		var v [4][32]byte
		for r := range 8 {
			blk := src[r*row+b*bs:][:bs]
			xbk[2*r], xbk[2*r+1] = blk[0], blk[1]
			xbk[16+2*r], xbk[16+2*r+1] = blk[2], blk[3]
			for j := range 8 {
				sc, m := q4KScaleMin(blk[4:16], j)
				p := q4KScalePos(j, r)
				v[j/4][p], v[2+j/4][p] = sc, m
			}
			for c := range 32 {
				copy(xbk[128+32*c+4*r:][:4], blk[16+4*c:][:4])
			}
		}
		for i := range 32 {
			xbk[32+i], xbk[64+i], xbk[96+i] = pack6(v[0][i], v[1][i], v[2][i], v[3][i])
		}
	}
}

// UnpackX8Q4_K undoes RepackX8Q4_K: it writes the eight plain rows of
// the x8 group src (nb super-blocks) into dst.
func UnpackX8Q4_K(dst, src []byte, nb int) {
	const bs, xb = simd.BytesQ4_K, X8BytesQ4_K
	if nb <= 0 {
		return
	}
	row := nb * bs
	_, _ = dst[8*row-1], src[8*row-1]
	for b := range nb {
		xbk := src[b*xb : (b+1)*xb]
		var v [4][32]byte
		for i := range 32 {
			v[0][i], v[1][i], v[2][i], v[3][i] = unpack6(xbk[32+i], xbk[64+i], xbk[96+i])
		}
		for r := range 8 {
			blk := dst[r*row+b*bs:][:bs]
			blk[0], blk[1] = xbk[2*r], xbk[2*r+1]
			blk[2], blk[3] = xbk[16+2*r], xbk[16+2*r+1]
			clear(blk[4:16])
			for j := range 8 {
				p := q4KScalePos(j, r)
				setQ4KScaleMin(blk[4:16], j, v[j/4][p], v[2+j/4][p])
			}
			for c := range 32 {
				copy(blk[16+4*c:][:4], xbk[128+32*c+4*r:][:4])
			}
		}
	}
}

// X8Q6_KTwin is the q6_K x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: each row as the q6_K dot product computes it (integer sums per
// super-block, exact in any order, then (d_x*d_y)*isum added in
// float32), so the outputs also equal the plain layout's four-row
// kernel's. The side data must be X8Q8_KPrep's of y.
func X8Q6_KTwin(nb, ng int, x, y []byte, _ []float32, out []float32, _ int) {
	x8KTwin(nb, ng, x, y, out, simd.BytesQ6_K, UnpackX8Q6_K, dot.Q6_K)
}

// X8Q4_KTwin is the q4_K x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: each row as the q4_K dot product computes it. The side data must
// be X8Q8_KPrep's of y.
func X8Q4_KTwin(nb, ng int, x, y []byte, _ []float32, out []float32, _ int) {
	x8KTwin(nb, ng, x, y, out, simd.BytesQ4_K, UnpackX8Q4_K, dot.Q4_K)
}

// x8KTwin computes every row of ng x8 groups of K-format super-blocks
// of bs bytes with the dot product, row by row, after unpacking each
// group.
func x8KTwin(nb, ng int, x, y []byte, out []float32, bs int, unpack func(dst, src []byte, nb int), twin func(n int, x, y []byte) float32) {
	rows := make([]byte, 8*nb*bs)
	for g := range ng {
		unpack(rows, x[g*8*nb*bs:(g+1)*8*nb*bs], nb)
		for r := range 8 {
			out[8*g+r] = twin(nb*quant.QKK, rows[r*nb*bs:(r+1)*nb*bs], y)
		}
	}
}
