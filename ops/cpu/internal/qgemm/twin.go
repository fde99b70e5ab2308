package qgemm

import (
	"encoding/binary"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Twin is the twin of the panel kernels (qgemmQ4_0AVX2,
// qgemmQ5_0AVX2, qgemmQ8_0AVX2) computed from the weights as stored: it
// returns out[8c+r], the dot product of nb blocks of the weight row
// rows[r] of type wt with column c of the packed group grp, whose codes
// are biased by 128 for q4_0 and q5_0 (see qTile); for q4_1 and q5_1
// grp is a packed q8_1 group.
//
// Per block, row and column the kernel's integer sum is exact: for q4_0
// and q5_0 sum(w*u) - 128*sum(w) with w the signed weight codes and u
// the biased activation codes, so sum(w*(u-128)) (its int16 partial
// sums stay within range for every input); for q8_0 the sign trick
// sum(|w| * (y*sign(w))), where |-128| is 128 and y*sign(w) wraps like
// VPSIGNB (-(-128) is -128), its pair sums never saturating. The sum,
// converted to float32, is then added to the output's accumulator by one
// FMA with d_x*d_y (float32 product), blocks in order from zero; for
// q4_1 and q5_1 (isum = sum(q*y), exact) a second FMA then adds
// m_x*s_y.
func Twin(wt quant.Type, rows *[8][]byte, grp []byte, nb int) [32]float32 {
	var acc [32]float32
	for b := range nb {
		blk, codes := grp[b*dot.PackQ8Block:], 16
		if wt == quant.Q4_1 || wt == quant.Q5_1 {
			blk, codes = grp[b*dot.PackQ81Block:], 32
		}
		for r, row := range rows {
			w, dx := twinCodes(wt, row, b)
			for c := range 4 {
				y := blk[codes+32*c : codes+32+32*c]
				if wt == quant.Q4_1 || wt == quant.Q5_1 {
					var isum int32
					for e, q := range w {
						isum += int32(uint8(q)) * int32(int8(y[e]))
					}
					dx, mx := twinMin(wt, row, b)
					a := simd.FMA32(float32(isum), dx*simd.Float32At(blk, 4*c), acc[8*c+r])
					acc[8*c+r] = simd.FMA32(mx, simd.Float32At(blk, 16+4*c), a)
					continue
				}
				var isum int32
				for e, we := range w {
					if wt == quant.Q8_0 {
						s, a := int8(y[e]), uint8(we)
						switch {
						case we < 0:
							s, a = -s, uint8(-int16(we))
						case we == 0:
							s = 0
						}
						isum += int32(a) * int32(s)
						continue
					}
					isum += int32(we) * (int32(y[e]) - 128)
				}
				d := dx * simd.Float32At(blk, 4*c)
				acc[8*c+r] = simd.FMA32(float32(isum), d, acc[8*c+r])
			}
		}
	}
	return acc
}

// twinCodes returns the 32 signed codes of block b of a weight row of
// type wt as the panel holds them (q-8, q-16, or the q8_0 codes) and
// the block's scale.
func twinCodes(wt quant.Type, row []byte, b int) (w [32]int8, d float32) {
	switch wt {
	case quant.Q4_0:
		bx := row[b*simd.BytesQ4_0:]
		for e, q := range simd.Nibbles(bx[2:18]) {
			w[e] = int8(q) - 8
		}
		return w, simd.HalfAt(bx, 0)
	case quant.Q5_0:
		bx := row[b*simd.BytesQ5_0:]
		qh := binary.LittleEndian.Uint32(bx[2:6])
		for e, q := range simd.Nibbles(bx[6:22]) {
			w[e] = int8(q|uint8(qh>>uint(e)&1)<<4) - 16
		}
		return w, simd.HalfAt(bx, 0)
	case quant.Q4_1, quant.Q5_1:
		d, _ := twinMin(wt, row, b)
		return twinUnsigned(wt, row, b), d
	default: // q8_0
		bx := row[b*simd.BytesQ8_0:]
		return simd.Codes8(bx[2:34]), simd.HalfAt(bx, 0)
	}
}

// twinMin returns d and m of block b of a q4_1 or q5_1 row.
func twinMin(wt quant.Type, row []byte, b int) (d, m float32) {
	bs := simd.BytesQ4_1
	if wt == quant.Q5_1 {
		bs = simd.BytesQ5_1
	}
	bx := row[b*bs:]
	return simd.HalfAt(bx, 0), simd.HalfAt(bx, 2)
}

// twinUnsigned returns the 32 unsigned codes (0..15 or 0..31) of block
// b of a q4_1 or q5_1 row, as int8 bit patterns.
func twinUnsigned(wt quant.Type, row []byte, b int) (w [32]int8) {
	if wt == quant.Q4_1 {
		for e, q := range simd.Nibbles(row[b*simd.BytesQ4_1+4 : b*simd.BytesQ4_1+20]) {
			w[e] = int8(q)
		}
		return w
	}
	bx := row[b*simd.BytesQ5_1:]
	qh := binary.LittleEndian.Uint32(bx[4:8])
	for e, q := range simd.Nibbles(bx[8:24]) {
		w[e] = int8(q | uint8(qh>>uint(e)&1)<<4)
	}
	return w
}
