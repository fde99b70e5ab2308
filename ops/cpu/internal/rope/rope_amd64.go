//go:build amd64 && !purego

package rope

// AVX2+FMA ROPE kernels (rope_amd64.s). The wrappers hand the assembly
// whole runs (four pairs of the cache, eight elements of a head) and finish
// the rest as the twins do, so each wrapper equals its twin bit for bit.

//go:noescape
func ropeAnglesAVX2(c, s *float32, w *float64, n int, pos, mscale float64, dup int)

//go:noescape
func ropeNormHeadsAVX2(out, x *float32, ostr, xstr, nh, n int, cc, ss *float32)

//go:noescape
func ropeNeoXHeadsAVX2(out, x *float32, ostr, xstr, nh, n, half int, cos, sin *float32)

// AnglesAVX2 is Angles with SinCos (twin: AnglesTwin).
func AnglesAVX2(c, s []float32, w []float64, pos, mscale float64, dup bool) {
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
	AnglesTwin(c, s, w[n4:], pos, mscale, dup)
}

// NormHeadsAVX2 is NormHeads (twin: normRow on
// each head).
func NormHeadsAVX2(out, x []float32, ostr, xstr, nh, nd int, cc, ss []float32) {
	if nh <= 0 {
		return
	}
	headsCheck(out, x, ostr, xstr, nh, nd)
	cc, ss = cc[:nd], ss[:nd]
	n8 := nd &^ 7
	if n8 > 0 {
		ropeNormHeadsAVX2(&out[0], &x[0], 4*ostr, 4*xstr, nh, n8, &cc[0], &ss[0])
	}
	if n8 < nd {
		for h := range nh {
			normRow(out[h*ostr+n8:h*ostr+nd], x[h*xstr+n8:h*xstr+nd], cc[n8:], ss[n8:])
		}
	}
}

// NeoXHeadsAVX2 is NeoXHeads (twin: neoXRow on
// each head).
func NeoXHeadsAVX2(out, x []float32, ostr, xstr, nh, nd int, cos, sin []float32) {
	if nh <= 0 {
		return
	}
	headsCheck(out, x, ostr, xstr, nh, nd)
	half := nd / 2
	cos, sin = cos[:half], sin[:half]
	n8 := half &^ 7
	if n8 > 0 {
		ropeNeoXHeadsAVX2(&out[0], &x[0], 4*ostr, 4*xstr, nh, n8, half, &cos[0], &sin[0])
	}
	if n8 < half {
		for h := range nh {
			o, xh := out[h*ostr:], x[h*xstr:]
			neoXRow(o[n8:half], o[half+n8:nd], xh[n8:half], xh[half+n8:nd], cos[n8:], sin[n8:])
		}
	}
}
