package quant

import (
	"encoding/binary"
	"fmt"
)

// The importance-weighted quantizers: what ggml's quantize_<type>
// functions (ggml_quantize_chunk, which llama-quantize calls per tensor)
// do when they are given quant_weights, an importance matrix's weights for
// the row's columns. They search differently from the _ref functions, so
// each one here mirrors its ggml _impl routine's float32 arithmetic step
// for step (see scalar.go on products and fusion).

// weightedCodecs holds the row quantizers that take importance weights
// (one per element of the row; never nil).
var weightedCodecs = map[Type]func(x []float32, y []byte, qw []float32){
	Q4_0:   quantizeQ4_0W,
	Q4_1:   quantizeQ4_1W,
	Q5_0:   quantizeQ5_0W,
	Q5_1:   quantizeQ5_1W,
	Q2_K:   quantizeQ2_KW,
	Q3_K:   quantizeQ3_KW,
	Q4_K:   quantizeQ4_KW,
	Q5_K:   quantizeQ5_KW,
	Q6_K:   quantizeQ6_KWith,
	IQ4_NL: func(x []float32, y []byte, qw []float32) { quantizeIQ4_NLWith(x, y, qw, 7) },
	IQ4_XS: quantizeIQ4_XSWith,
	// The codebook formats (iq2xxs.go, iq2s.go, iq3s.go, iq1s.go,
	// iq1m.go), pinned to ggml's quantize_iq* by TestGoldenGridWeighted.
	IQ2_XXS: quantizeIQ2_XXSWith,
	IQ2_XS:  quantizeIQ2_XSWith,
	IQ2_S:   quantizeIQ2_SWith,
	IQ3_XXS: quantizeIQ3_XXSWith,
	IQ3_S:   quantizeIQ3_SWith,
	IQ1_S:   quantizeIQ1_SWith,
	IQ1_M:   quantizeIQ1_MWith,
}

// unweighted lists the types whose ggml quantizer ignores importance
// weights.
var unweighted = map[Type]bool{F32: true, F16: true, BF16: true, Q8_0: true, Q8_1: true, Q8_K: true, MXFP4: true, TQ1_0: true, TQ2_0: true}

// TakesWeights reports whether quantizing to t uses importance weights
// (QuantizeRowWeighted with weights differs from it without).
func TakesWeights(t Type) bool {
	_, ok := weightedCodecs[t]
	return ok
}

// QuantizeRowWeighted encodes one row as llama-quantize does, through
// ggml's quantize_<type> for a tensor row: with importance weights qw (one
// per element of src, as Matrix.Weights gives them for the row's
// columns) the types that take them (TakesWeights) use ggml's weighted
// search; with qw nil, or for a type that ignores them (q8_0, MXFP4,
// TQ1_0, TQ2_0, the float types), the bytes are QuantizeRow's, except
// IQ4_NL, which llama-quantize always quantizes with its 15-scale search.
// Weighted quantization depends on the whole row (legacy types take a
// scale from the row's mean square), so src must be one tensor row.
// Lengths are checked as QuantizeRow checks them; a type with no weighted
// quantizer here is an error when qw is given.
func QuantizeRowWeighted(t Type, src []float32, dst []byte, qw []float32) error {
	if qw == nil {
		if t == IQ4_NL {
			if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
				return err
			}
			quantizeIQ4_NLWith(src, dst, nil, 7)
			return nil
		}
		return QuantizeRow(t, src, dst)
	}
	if len(qw) != len(src) {
		return fmt.Errorf("quant: quantize: %d importance weights for a row of %d", len(qw), len(src))
	}
	q, ok := weightedCodecs[t]
	if !ok {
		if unweighted[t] {
			return QuantizeRow(t, src, dst)
		}
		return fmt.Errorf("quant: quantize: no importance-weighted quantizer for %v", t)
	}
	if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	q(src, dst, qw)
	return nil
}

// rowSigma2 returns the mean square of a row: ggml's sum_x2/n_per_row.
func rowSigma2(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s / float32(len(x))
}

// importance fills w with the weights ggml's _impl routines derive from
// the imatrix weights qw: qw[i] * sqrt(sigma2 + x[i]^2).
func importance(w, x, qw []float32, sigma2 float32) {
	for i, v := range x {
		w[i] = qw[i] * sqrt32(sigma2+float32(v*v))
	}
}

// makeQKX3Quants is ggml's make_qkx3_quants with weights and the squared
// error: codes in [0, nmax] for a group stored as scale*code - min, the
// scale from the range refined over nstep+1 candidates by weighted least
// squares with a free offset. Laux is scratch. It returns the scale and
// the offset to subtract (never negative).
func makeQKX3Quants(nmax int, x, w []float32, L, Laux []uint8, rmin, rdelta float32, nstep int) (scale, negMin float32) {
	lo, hi := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi <= lo {
		clear(L[:len(x)])
		return 0, -lo
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var best float32
	for i, v := range x {
		l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
		L[i] = uint8(l)
		diff := float32(float32(scale*float32(l))+lo) - v
		best += float32(w[i] * float32(diff*diff))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(rmin+float32(rdelta*float32(is))+float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
			Laux[i] = uint8(l)
			fl := float32(l)
			wl := float32(w[i] * fl)
			sumL += wl
			sumL2 += float32(wl * fl)
			sumXL += float32(wl * v)
		}
		det := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(det > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / det
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / det
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var cur float32
		for i, v := range x {
			diff := float32(float32(thisScale*float32(Laux[i]))+thisMin) - v
			cur += float32(w[i] * float32(diff*diff))
		}
		if cur < best {
			copy(L[:len(x)], Laux[:len(x)])
			best = cur
			scale = thisScale
			lo = thisMin
		}
	}
	return scale, -lo
}

// makeQPQuants is ggml's make_qp_quants: codes in [0, nmax] for the
// non-negative group x (sub-block scales or mins) with weights qw, the
// scale chosen from nine candidates by weighted error, then the codes
// refined one at a time. L is uint8 as in ggml, so a negative code wraps
// exactly as ggml's does. It returns the group scale.
func makeQPQuants(nmax int, x []float32, L []uint8, qw []float32) float32 {
	var vmax float32
	for _, v := range x {
		if !(vmax > v) {
			vmax = v
		}
	}
	if vmax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := float32(nmax) / vmax
	for i, v := range x {
		L[i] = uint8(nearestInt(float32(iscale * v)))
	}
	scale := 1 / iscale
	var best float32
	for i, v := range x {
		diff := v - float32(scale*float32(L[i]))
		best += float32(float32(qw[i]*diff) * diff)
	}
	for is := -4; is <= 4; is++ {
		if is == 0 {
			continue
		}
		iscaleIs := float32(float32(0.1*float32(is))+float32(nmax)) / vmax
		scaleIs := 1 / iscaleIs
		var mse float32
		for i, v := range x {
			l := min(nmax, nearestInt(float32(iscaleIs*v)))
			diff := v - float32(scaleIs*float32(l))
			mse += float32(float32(qw[i]*diff) * diff)
		}
		if mse < best {
			best = mse
			iscale = iscaleIs
		}
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := min(nmax, nearestInt(float32(iscale*v)))
		L[i] = uint8(l)
		fl := float32(l)
		sumlx += float32(float32(qw[i]*v) * fl)
		suml2 += float32(float32(qw[i]*fl) * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := qw[i]
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			sl2 := suml2 - float32(float32(w*li)*li)
			if !(slx > 0 && sl2 > 0) {
				continue
			}
			newL := min(nmax, nearestInt(float32(v*sl2)/slx))
			if newL == int(L[i]) {
				continue
			}
			fn := float32(newL)
			slx += float32(float32(w*v) * fn)
			sl2 += float32(float32(w*fn) * fn)
			if float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
				L[i] = uint8(newL)
				sumlx, suml2 = slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// legacyWeights fills w with block ib's weights for the legacy _impl
// routines: the row's mean square sigma2 and the imatrix weights.
func legacyWeights(w *[QK]float32, x, qw []float32, ib int, sigma2 float32) []float32 {
	importance(w[:], x[QK*ib:QK*ib+QK], qw[QK*ib:QK*ib+QK], sigma2)
	return w[:]
}

// packNibbles32 packs 32 4-bit codes: element j low, j+16 high.
func packNibbles32(qs []byte, L []uint8) {
	for j := range QK / 2 {
		qs[j] = L[j] | L[j+16]<<4
	}
}

// pack5 packs 32 5-bit codes as Q5_0 and Q5_1 store them: the low
// nibbles as packNibbles32, the fifth bits in the little-endian qh.
func pack5(qh, qs []byte, L []uint8) {
	var h uint32
	for j := range QK / 2 {
		qs[j] = L[j]&0x0f | (L[j+16]&0x0f)<<4
		h |= uint32(L[j]&0x10) >> 4 << j
		h |= uint32(L[j+16]&0x10) >> 4 << (j + QK/2)
	}
	binary.LittleEndian.PutUint32(qh, h)
}

// quantizeQX0W is quantize_row_q4_0_impl (nmax 8) and q5_0's (nmax 16):
// make_qx_quants per block with the row's weights.
func quantizeQX0W(x []float32, y []byte, qw []float32, nmax int, size int) {
	sigma2 := rowSigma2(x)
	var w [QK]float32
	var L [QK]int8
	var u [QK]uint8
	for ib := range len(x) / QK {
		b := y[size*ib : size*(ib+1)]
		d := makeQXQuants(nmax, x[QK*ib:QK*ib+QK], L[:], legacyWeights(&w, x, qw, ib, sigma2))
		putF16(b, d)
		for j, l := range L {
			u[j] = uint8(l)
		}
		if nmax == 8 {
			packNibbles32(b[2:], u[:])
		} else {
			pack5(b[2:6], b[6:], u[:])
		}
	}
}

func quantizeQ4_0W(x []float32, y []byte, qw []float32) { quantizeQX0W(x, y, qw, 8, sizeQ4_0) }
func quantizeQ5_0W(x []float32, y []byte, qw []float32) { quantizeQX0W(x, y, qw, 16, sizeQ5_0) }

// quantizeQX1W is quantize_row_q4_1_impl (nmax 15) and q5_1's (nmax 31):
// make_qkx3_quants per block with the row's weights.
func quantizeQX1W(x []float32, y []byte, qw []float32, nmax int, size int) {
	sigma2 := rowSigma2(x)
	var w [QK]float32
	var L, Laux [QK]uint8
	for ib := range len(x) / QK {
		b := y[size*ib : size*(ib+1)]
		d, m := makeQKX3Quants(nmax, x[QK*ib:QK*ib+QK], legacyWeights(&w, x, qw, ib, sigma2), L[:], Laux[:], -0.9, 0.05, 36)
		putF16(b[0:], d)
		putF16(b[2:], -m)
		if nmax == 15 {
			packNibbles32(b[4:], L[:])
		} else {
			pack5(b[4:8], b[8:], L[:])
		}
	}
}

func quantizeQ4_1W(x []float32, y []byte, qw []float32) { quantizeQX1W(x, y, qw, 15, sizeQ4_1) }
func quantizeQ5_1W(x []float32, y []byte, qw []float32) { quantizeQX1W(x, y, qw, 31, sizeQ5_1) }

// superSigma2 returns a super-block's mean square times k: ggml's
// k*sum_x2/QK_K (k is 1 for Q2_K, 2 for the others).
func superSigma2(xb []float32, k float32) float32 {
	var s float32
	for _, v := range xb {
		s += float32(v * v)
	}
	return float32(k*s) / QKK
}

// quantizeQ2_KW is quantize_row_q2_K_impl.
func quantizeQ2_KW(x []float32, y []byte, qw []float32) {
	var (
		L, Laux             [QKK]uint8
		w, sw, scales, mins [QKK / 16]float32
		Ls, Lm              [QKK / 16]uint8
	)
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ2_K]
		sigma2 := superSigma2(xb, 1)
		for j := range QKK / 16 {
			importance(w[:], xb[16*j:16*j+16], qw[16*j:16*j+16], sigma2)
			var s float32
			for _, v := range w {
				s += v
			}
			sw[j] = s
			scales[j], mins[j] = makeQKX3Quants(3, xb[16*j:16*j+16], w[:], L[16*j:16*j+16], Laux[:16], -0.9, 0.05, 36)
		}
		dm := makeQPQuants(15, scales[:], Ls[:], sw[:])
		mm := makeQPQuants(15, mins[:], Lm[:], sw[:])
		putF16(b[80:], dm)
		putF16(b[82:], mm)
		dm, mm = getF16(b[80:]), getF16(b[82:])
		sc := b[0:16]
		for j := range sc {
			sc[j] = Ls[j] | Lm[j]<<4
		}
		for j := range QKK / 16 {
			d := dm * float32(sc[j]&0x0f)
			if d == 0 {
				continue
			}
			m := mm * float32(sc[j]>>4)
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = uint8(clampInt(nearestInt((xb[i]+m)/d), 0, 3))
			}
		}
		packQ2Bits(b[16:80], L[:])
		x, y, qw = x[QKK:], y[sizeQ2_K:], qw[QKK:]
	}
}

// quantizeQ3_KW is quantize_row_q3_K_impl with weights.
func quantizeQ3_KW(x []float32, y []byte, qw []float32) {
	var (
		L             [QKK]int8
		w, sw, scales [QKK / 16]float32
		Ls            [QKK / 16]int8
	)
	for len(x) > 0 {
		xb, b := x[:QKK], y[:sizeQ3_K]
		sigma2 := superSigma2(xb, 2)
		for j := range QKK / 16 {
			importance(w[:], xb[16*j:16*j+16], qw[16*j:16*j+16], sigma2)
			var s float32
			for _, v := range w {
				s += v
			}
			sw[j] = s
			scales[j] = makeQXQuants(4, xb[16*j:16*j+16], L[16*j:16*j+16], w[:])
		}
		sc := b[96:108]
		clear(sc)
		dBlock := makeQXQuants(32, scales[:], Ls[:], sw[:])
		for j := range QKK / 16 {
			l := int(Ls[j])
			if j < 8 {
				sc[j] = uint8(l & 0x0f)
			} else {
				sc[j-8] |= uint8((l & 0x0f) << 4)
			}
			sc[8+j%4] |= uint8((l >> 4) << (2 * (j / 4)))
		}
		putF16(b[108:], dBlock)
		finishQ3K(xb, b, &L)
		x, y, qw = x[QKK:], y[sizeQ3_K:], qw[QKK:]
	}
}

// quantizeQ45KW is quantize_row_q4_K_impl (nmax 15) and q5_K's (nmax 31)
// up to the codes: sub-block fits with the imatrix weights, then the
// 6-bit scales and mins by make_qp_quants; q5 clamps them to 63 first.
func quantizeQ45KW(xb []float32, b []byte, qw []float32, L *[QKK]uint8, nmax int) {
	var (
		Laux             [32]uint8
		w                [32]float32
		sw, scales, mins [QKK / 32]float32
		Ls, Lm           [QKK / 32]uint8
	)
	sigma2 := superSigma2(xb, 2)
	for j := range QKK / 32 {
		importance(w[:], xb[32*j:32*j+32], qw[32*j:32*j+32], sigma2)
		var s float32
		for _, v := range w {
			s += v
		}
		sw[j] = s
		scales[j], mins[j] = makeQKX3Quants(nmax, xb[32*j:32*j+32], w[:], L[32*j:32*j+32], Laux[:], -0.9, 0.05, 36)
	}
	dBlock := makeQPQuants(63, scales[:], Ls[:], sw[:])
	mBlock := makeQPQuants(63, mins[:], Lm[:], sw[:])
	sc := b[4:16]
	for j := range QKK / 32 {
		ls, lm := Ls[j], Lm[j]
		if nmax == 31 {
			ls, lm = min(63, ls), min(63, lm)
		}
		putScaleMinK4(j, sc, ls, lm)
	}
	putF16(b[0:], dBlock)
	putF16(b[2:], mBlock)
	requantQ45K(xb, b, L, nmax)
}

func quantizeQ4_KW(x []float32, y []byte, qw []float32) {
	var L [QKK]uint8
	for len(x) > 0 {
		b := y[:sizeQ4_K]
		quantizeQ45KW(x[:QKK], b, qw, &L, 15)
		packNibbles(b[16:144], L[:])
		x, y, qw = x[QKK:], y[sizeQ4_K:], qw[QKK:]
	}
}

func quantizeQ5_KW(x []float32, y []byte, qw []float32) {
	var L [QKK]uint8
	for len(x) > 0 {
		b := y[:sizeQ5_K]
		quantizeQ45KW(x[:QKK], b, qw, &L, 31)
		packQ5K(b, &L)
		x, y, qw = x[QKK:], y[sizeQ5_K:], qw[QKK:]
	}
}
