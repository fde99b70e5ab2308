package quant

// Helpers shared by the K-quant reference quantizers. Each one reproduces
// the float32 arithmetic of the ggml routine named in its comment, in the
// same order, so that the chosen codes and scales match ggml's bit for bit.

// makeQXQuants picks codes in [-nmax, nmax) for a signed, min-free group
// (ggml's make_qx_quants with rmse_type 1, the only way its quantizers
// call it). The codes, offset by nmax, go to L; it returns the group
// scale. The error weights are qw, or x[i]^2 when qw is nil.
func makeQXQuants(nmax int, x []float32, L []int8, qw []float32) float32 {
	vmax, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	weight := func(i int, v float32) float32 {
		if qw != nil {
			return qw[i]
		}
		return v * v
	}
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := weight(i, v)
		fl := float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / vmax
		sumlx, suml2 = 0, 0
		for i, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			w := weight(i, v)
			fl := float32(l)
			sumlx += float32(w * v * fl)
			suml2 += float32(w * fl * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				L[i] = int8(nmax + clampInt(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants picks codes in [-nmax, nmax) for a signed group and then
// refines them one at a time (ggml's make_q3_quants with do_rmse set, as
// quantize_row_q3_K_ref calls it). The codes, offset by nmax, go to L; it
// returns the group scale.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	vmax, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		fl := float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(w*v*li)
			if slx <= 0 {
				continue
			}
			sl2 := suml2 - float32(w*li*li)
			newL := clampInt(nearestInt(v*sl2/slx), -nmax, nmax-1)
			if newL == int(L[i]) {
				continue
			}
			fn := float32(newL)
			slx += float32(w * v * fn)
			sl2 += float32(w * fn * fn)
			if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
				L[i] = int8(newL)
				sumlx, suml2 = slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants picks codes in [0, nmax] for a group stored as
// scale*code - min, searching nstep+1 candidate scales around the plain
// range fit for the lowest weighted error (ggml's make_qkx2_quants). The
// codes go to L (Laux is scratch of the same length). It returns the scale
// and the offset to subtract, which is never negative.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, negMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:n])
		return 0, -lo
	}
	errOf := func(diff float32) float32 {
		if useMAD {
			return abs32(diff)
		}
		return diff * diff
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var bestErr float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*(v-lo)), 0, nmax)
		L[i] = uint8(l)
		diff := float32(scale*float32(l)) + lo - v
		bestErr += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(iscale*(v-lo)), 0, nmax)
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		det := float32(sumW*sumL2) - float32(sumL*sumL)
		if det <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / det
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / det
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var curErr float32
		for i, v := range x {
			diff := float32(thisScale*float32(Laux[i])) + thisMin - v
			curErr += float32(weights[i] * errOf(diff))
		}
		if curErr < bestErr {
			copy(L[:n], Laux[:n])
			bestErr = curErr
			scale = thisScale
			lo = thisMin
		}
	}
	return scale, -lo
}

// scaleMinK4 unpacks the 6-bit scale and min codes of sub-block j from the
// 12-byte scales field shared by Q4_K and Q5_K (ggml's get_scale_min_k4).
func scaleMinK4(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0x0f | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// putScaleMinK4 packs the 6-bit codes ls and lm of sub-block j into s, in
// the order ggml's quantizers write them: sub-blocks 0..3 first (which
// assigns bytes 0..7), then 4..7 (which assigns bytes 8..11 and fills the
// top bits of bytes 0..7).
func putScaleMinK4(j int, s []byte, ls, lm uint8) {
	if j < 4 {
		s[j] = ls
		s[j+4] = lm
		return
	}
	s[j+4] = ls&0x0f | (lm&0x0f)<<4
	s[j-4] |= (ls >> 4) << 6
	s[j] |= (lm >> 4) << 6
}

// q3Scale returns the signed 6-bit scale of sub-block j from Q3_K's
// 12-byte scales field.
func q3Scale(j int, s []byte) int {
	var lo byte
	if j < 8 {
		lo = s[j] & 0x0f
	} else {
		lo = s[j-8] >> 4
	}
	hi := (s[8+j%4] >> (2 * (j / 4))) & 3
	return int(lo|hi<<4) - 32
}

// packQ2Bits packs 256 2-bit codes into 64 bytes as Q2_K and Q3_K store
// them: in each half of 128 elements, byte l holds elements l, l+32, l+64
// and l+96 in bit pairs 0, 2, 4 and 6.
func packQ2Bits(qs []byte, L []uint8) {
	for j := 0; j < QKK; j += 128 {
		for l := range 32 {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// packNibbles packs 256 4-bit codes into 128 bytes as Q4_K and Q5_K store
// them: in each chunk of 64 elements, byte l holds element l in its low
// nibble and element l+32 in its high nibble.
func packNibbles(qs []byte, L []uint8) {
	for j := 0; j < QKK; j += 64 {
		for l := range 32 {
			qs[j/2+l] = L[j+l] | L[j+l+32]<<4
		}
	}
}
