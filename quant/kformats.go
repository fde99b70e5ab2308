package quant

import (
	"encoding/binary"
	"math"
)

// Codecs for the 256-element K formats. Like the legacy codecs they take
// whole rows whose lengths the caller has checked. The quantizers follow
// ggml's quantize_row_qN_K_ref; the dequantizers its dequantize_row_qN_K.

func quantizeQ2_K(x []float32, y []byte) {
	var (
		L       [QKK]uint8
		laux    [16]uint8
		weights [16]float32
		mins    [QKK / 16]float32
		scales  [QKK / 16]float32
	)
	const q4scale = float32(15)
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ2_K]
		sc, qs := b[0:16], b[16:80]

		var maxScale, maxMin float32
		for j := range QKK / 16 {
			xs := xb[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}

		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(b[80:], maxScale/q4scale)
		} else {
			clear(sc)
			putF16(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(b[82:], maxMin/q4scale)
		} else {
			putF16(b[82:], 0)
		}

		// Requantize against the scales as stored.
		d, dmin := getF16(b[80:]), getF16(b[82:])
		for j := range QKK / 16 {
			dj := d * float32(sc[j]&0x0f)
			if dj == 0 {
				continue
			}
			dm := float32(dmin * float32(sc[j]>>4))
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = uint8(clampInt(nearestInt((xb[i]+dm)/dj), 0, 3))
			}
		}
		packQ2Bits(qs, L[:])
		x, y = x[QKK:], y[sizeQ2_K:]
	}
}

func dequantizeQ2_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ2_K], y[:QKK]
		sc, qs := b[0:16], b[16:80]
		d, dmin := getF16(b[80:]), getF16(b[82:])
		for e := range yb {
			h, r := e/128, e%128
			q := (qs[32*h+r%32] >> (2 * (r / 32))) & 3
			s := sc[e/16]
			dl := d * float32(s&0x0f)
			ml := float32(dmin * float32(s>>4))
			yb[e] = float32(dl*float32(q)) - ml
		}
		x, y = x[sizeQ2_K:], y[QKK:]
	}
}

func quantizeQ3_K(x []float32, y []byte) {
	var (
		L      [QKK]int8
		scales [QKK / 16]float32
	)
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ3_K]
		sc := b[96:108]

		var maxScale, amax float32
		for j := range QKK / 16 {
			scales[j] = makeQ3Quants(4, xb[16*j:16*j+16], L[16*j:16*j+16])
			if s := abs32(scales[j]); s > amax {
				amax = s
				maxScale = scales[j]
			}
		}

		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range QKK / 16 {
				// ggml stores nearest_int's result in an int8 before
				// clamping it.
				l := int(int8(nearestInt(iscale * scales[j])))
				l = clampInt(l, -32, 31) + 32
				if j < 8 {
					sc[j] = uint8(l & 0x0f)
				} else {
					sc[j-8] |= uint8((l & 0x0f) << 4)
				}
				sc[8+j%4] |= uint8((l >> 4) << (2 * (j / 4)))
			}
			putF16(b[108:], 1/iscale)
		} else {
			putF16(b[108:], 0)
		}

		finishQ3K(xb, b, &L)
		x, y = x[QKK:], y[sizeQ3_K:]
	}
}

// finishQ3K requantizes the super-block xb against the scales stored in
// b (codes whose sub-block scale is zero keep their value in L) and packs
// the codes.
func finishQ3K(xb []float32, b []byte, L *[QKK]int8) {
	hmask, qs, sc := b[0:32], b[32:96], b[96:108]
	dAll := getF16(b[108:])
	for j := range QKK / 16 {
		d := dAll * float32(int8(q3Scale(j, sc)))
		if d == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(clampInt(nearestInt(xb[i]/d), -4, 3) + 4)
		}
	}
	packQ3K(hmask, qs, L)
}

// packQ3K stores Q3_K's 3-bit codes L: the high bit of element e in bit
// e/32 of hmask[e%32], the low two bits as Q2_K packs them.
func packQ3K(hmask, qs []byte, L *[QKK]int8) {
	clear(hmask)
	var low [QKK]uint8
	for e, l := range L {
		if l > 3 {
			hmask[e%32] |= 1 << (e / 32)
			l -= 4
		}
		low[e] = uint8(l)
	}
	packQ2Bits(qs, low[:])
}

func dequantizeQ3_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ3_K], y[:QKK]
		hmask, qs, sc := b[0:32], b[32:96], b[96:108]
		dAll := getF16(b[108:])
		for e := range yb {
			h, r := e/128, e%128
			q := int((qs[32*h+r%32] >> (2 * (r / 32))) & 3)
			if hmask[e%32]&(1<<(e/32)) == 0 {
				q -= 4
			}
			dl := dAll * float32(q3Scale(e/16, sc))
			yb[e] = dl * float32(q)
		}
		x, y = x[sizeQ3_K:], y[QKK:]
	}
}

// quantizeQ45K holds what Q4_K and Q5_K share: sub-block fitting, the
// packed scales and d/dmin at the start of b, and the final codes in L.
// nmax is 15 for Q4_K and 31 for Q5_K; rmin and nstep are the search
// parameters ggml uses for each.
func quantizeQ45K(xb []float32, b []byte, L *[QKK]uint8, nmax int, rmin float32, nstep int) {
	var (
		laux    [32]uint8
		weights [32]float32
		mins    [QKK / 32]float32
		scales  [QKK / 32]float32
	)
	var maxScale, maxMin float32
	for j := range QKK / 32 {
		xs := xb[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}

	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := b[4:16]
	for j := range QKK / 32 {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		putScaleMinK4(j, sc, ls, lm)
	}
	putF16(b[0:], maxScale/63)
	putF16(b[2:], maxMin/63)
	requantQ45K(xb, b, L, nmax)
}

// requantQ45K requantizes the Q4_K or Q5_K super-block xb to codes in
// [0, nmax] against the scales and mins stored in b; codes of a sub-block
// whose scale is zero keep their value in L.
func requantQ45K(xb []float32, b []byte, L *[QKK]uint8, nmax int) {
	sc := b[4:16]
	d0, dmin0 := getF16(b[0:]), getF16(b[2:])
	for j := range QKK / 32 {
		s, m := scaleMinK4(j, sc)
		d := d0 * float32(s)
		if d == 0 {
			continue
		}
		dm := float32(dmin0 * float32(m))
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(clampInt(nearestInt((xb[i]+dm)/d), 0, nmax))
		}
	}
}

func quantizeQ4_K(x []float32, y []byte) {
	var L [QKK]uint8
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ4_K]
		quantizeQ45K(xb, b, &L, 15, -1, 20)
		packNibbles(b[16:144], L[:])
		x, y = x[QKK:], y[sizeQ4_K:]
	}
}

// packQ5K stores Q5_K's 5-bit codes L into super-block b: the fifth bit
// of element e in bit e/32 of qh[e%32], the low four as Q4_K's nibbles.
func packQ5K(b []byte, L *[QKK]uint8) {
	qh, qs := b[16:48], b[48:176]
	clear(qh)
	var low [QKK]uint8
	for e, l := range L {
		if l > 15 {
			qh[e%32] |= 1 << (e / 32)
			l -= 16
		}
		low[e] = l
	}
	packNibbles(qs, low[:])
}

// dequantizeQ45K expands one Q4_K or Q5_K super-block; qh is nil for Q4_K.
func dequantizeQ45K(d, dmin float32, sc, qh, qs []byte, yb []float32) {
	for j := range QKK / 32 {
		s, m := scaleMinK4(j, sc)
		dj := d * float32(s)
		mj := float32(dmin * float32(m))
		for e := 32 * j; e < 32*j+32; e++ {
			q := qs[32*(e/64)+e%32]
			if e%64 < 32 {
				q &= 0x0f
			} else {
				q >>= 4
			}
			if qh != nil && qh[e%32]&(1<<(e/32)) != 0 {
				q += 16
			}
			yb[e] = float32(dj*float32(q)) - mj
		}
	}
}

func dequantizeQ4_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ4_K], y[:QKK]
		dequantizeQ45K(getF16(b[0:]), getF16(b[2:]), b[4:16], nil, b[16:144], yb)
		x, y = x[sizeQ4_K:], y[QKK:]
	}
}

func quantizeQ5_K(x []float32, y []byte) {
	var L [QKK]uint8
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ5_K]
		quantizeQ45K(xb, b, &L, 31, -0.5, 15)
		packQ5K(b, &L)
		x, y = x[QKK:], y[sizeQ5_K:]
	}
}

func dequantizeQ5_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ5_K], y[:QKK]
		dequantizeQ45K(getF16(b[0:]), getF16(b[2:]), b[4:16], b[16:48], b[48:176], yb)
		x, y = x[sizeQ5_K:], y[QKK:]
	}
}

func quantizeQ6_K(x []float32, y []byte) { quantizeQ6_KWith(x, y, nil) }

// quantizeQ6_KWith is quantize_row_q6_K_ref with qw nil, and
// quantize_row_q6_K_impl with importance weights qw (one per element):
// they only change the error weights of each 16-element group's search.
func quantizeQ6_KWith(x []float32, y []byte, qw []float32) {
	var (
		L      [QKK]int8
		scales [QKK / 16]float32
	)
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ6_K]
		ql, qh, sc := b[0:128], b[128:192], b[192:208]

		var maxScale, maxAbsScale float32
		for j := range QKK / 16 {
			var w []float32
			if qw != nil {
				w = qw[16*j : 16*j+16]
			}
			scales[j] = makeQXQuants(32, xb[16*j:16*j+16], L[16*j:16*j+16], w)
			if a := abs32(scales[j]); a > maxAbsScale {
				maxAbsScale = a
				maxScale = scales[j]
			}
		}
		if qw != nil {
			qw = qw[QKK:]
		}
		if maxAbsScale < groupMaxEps {
			clear(b)
			x, y = x[QKK:], y[sizeQ6_K:]
			continue
		}

		iscale := -128 / maxScale
		putF16(b[208:], 1/iscale)
		for j := range sc {
			sc[j] = uint8(int8(min(127, nearestInt(iscale*scales[j]))))
		}

		// Requantize against the scales as stored.
		d0 := getF16(b[208:])
		for j := range QKK / 16 {
			d := d0 * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = int8(clampInt(nearestInt(xb[i]/d), -32, 31) + 32)
			}
		}

		for e, l := range L {
			h, r := e/128, e%128
			lo, g := r%32, r/32
			k := 64*h + lo + 32*(g%2)
			if g < 2 {
				ql[k] = ql[k]&0xf0 | uint8(l)&0x0f
			} else {
				ql[k] = ql[k]&0x0f | (uint8(l)&0x0f)<<4
			}
			if g == 0 {
				qh[32*h+lo] = 0
			}
			qh[32*h+lo] |= (uint8(l) >> 4 & 3) << (2 * g)
		}
		x, y = x[QKK:], y[sizeQ6_K:]
	}
}

func dequantizeQ6_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ6_K], y[:QKK]
		ql, qh, sc := b[0:128], b[128:192], b[192:208]
		d := getF16(b[208:])
		for e := range yb {
			h, r := e/128, e%128
			lo, g := r%32, r/32
			low := ql[64*h+lo+32*(g%2)]
			if g < 2 {
				low &= 0x0f
			} else {
				low >>= 4
			}
			high := (qh[32*h+lo] >> (2 * g)) & 3
			q := int(low|high<<4) - 32
			yb[e] = d * float32(int8(sc[e/16])) * float32(q)
		}
		x, y = x[sizeQ6_K:], y[QKK:]
	}
}

func quantizeQ8_K(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ8_K]
		qs, bsums := b[4:260], b[260:292]
		vmax, amax := absMaxSigned(xb)
		if amax == 0 {
			// ggml leaves bsums unwritten here; zero them so the
			// output is deterministic.
			clear(b)
			x, y = x[QKK:], y[sizeQ8_K:]
			continue
		}
		iscale := -127 / vmax
		for j, v := range xb {
			qs[j] = uint8(int8(min(127, nearestInt(iscale*v))))
		}
		for j := range QKK / 16 {
			sum := 0
			for _, q := range qs[16*j : 16*j+16] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(bsums[2*j:], uint16(int16(sum)))
		}
		binary.LittleEndian.PutUint32(b[0:], math.Float32bits(1/iscale))
		x, y = x[QKK:], y[sizeQ8_K:]
	}
}

func dequantizeQ8_K(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ8_K], y[:QKK]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b[0:]))
		for j := range yb {
			yb[j] = d * float32(int8(b[4+j]))
		}
		x, y = x[sizeQ8_K:], y[QKK:]
	}
}
