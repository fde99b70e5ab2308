//go:build amd64 && !purego

package cpu

// AVX2+FMA ROPE kernels (rope_amd64.s). The wrappers hand the assembly
// whole runs (four pairs of the cache, eight elements of a head) and finish
// the rest as the twins do, so each wrapper equals its twin bit for bit.

//go:noescape
func ropeAnglesAVX2(c, s *float32, w *float64, n int, pos, mscale float64, dup int)

//go:noescape
func ropeNormHeadsAVX2(out, x *float32, ostr, xstr, nh, n int, cc, ss *float32)

//go:noescape
func ropeNeoXHeadsAVX2(out, x *float32, ostr, xstr, nh, n, half int, cos, sin *float32)

// ropeAnglesVecAVX2 is ropeKernels.angles (twin: ropeAnglesTwin).
func ropeAnglesVecAVX2(c, s []float32, w []float64, pos, mscale float64, dup bool) {
	n4 := len(w) &^ 3
	if n4 > 0 {
		k := 1
		if dup {
			k = 2
		}
		_, _ = c[k*n4-1], s[k*n4-1]
		d := 0
		if dup {
			d = 1
		}
		ropeAnglesAVX2(&c[0], &s[0], &w[0], n4, pos, mscale, d)
		c, s = c[k*n4:], s[k*n4:]
	}
	ropeAnglesTwin(c, s, w[n4:], pos, mscale, dup)
}

// ropeNormHeadsVecAVX2 is ropeKernels.norm (twin: ropeNormGeneric on
// each head).
func ropeNormHeadsVecAVX2(out, x []float32, ostr, xstr, nh, nd int, cc, ss []float32) {
	if nh <= 0 {
		return
	}
	ropeHeadsCheck(out, x, ostr, xstr, nh, nd)
	cc, ss = cc[:nd], ss[:nd]
	n8 := nd &^ 7
	if n8 > 0 {
		ropeNormHeadsAVX2(&out[0], &x[0], 4*ostr, 4*xstr, nh, n8, &cc[0], &ss[0])
	}
	if n8 < nd {
		for h := range nh {
			ropeNormGeneric(out[h*ostr+n8:h*ostr+nd], x[h*xstr+n8:h*xstr+nd], cc[n8:], ss[n8:])
		}
	}
}

// ropeNeoXHeadsVecAVX2 is ropeKernels.neox (twin: ropeNeoXGeneric on
// each head).
func ropeNeoXHeadsVecAVX2(out, x []float32, ostr, xstr, nh, nd int, cos, sin []float32) {
	if nh <= 0 {
		return
	}
	ropeHeadsCheck(out, x, ostr, xstr, nh, nd)
	half := nd / 2
	cos, sin = cos[:half], sin[:half]
	n8 := half &^ 7
	if n8 > 0 {
		ropeNeoXHeadsAVX2(&out[0], &x[0], 4*ostr, 4*xstr, nh, n8, half, &cos[0], &sin[0])
	}
	if n8 < half {
		for h := range nh {
			o, xh := out[h*ostr:], x[h*xstr:]
			ropeNeoXGeneric(o[n8:half], o[half+n8:nd], xh[n8:half], xh[half+n8:nd], cos[n8:], sin[n8:])
		}
	}
}
