// Package rope holds ROPE's kernels: the cache of (cos, sin) pairs of a
// token and the rotation of a token's heads, normal and NeoX, in pure Go
// (Angles, NormHeads, NeoXHeads) and, on amd64, in AVX2+FMA assembly
// (AnglesAVX2, NormHeadsAVX2, NeoXHeadsAVX2) with the twin of its cache
// (AnglesTwin, SinCos); the rotations are their own twins. The backend's
// tier tables (package cpu) pick among them.
package rope

import "math"

// Angles is the generic cache of (cos, sin) pairs, with math.Sincos, for any angle.
func Angles(c, s []float32, w []float64, pos, mscale float64, dup bool) {
	for i, wi := range w {
		sn, cs := math.Sincos(pos * wi)
		cf, sf := float32(cs*mscale), float32(sn*mscale)
		if dup {
			c[2*i], c[2*i+1] = cf, cf
			s[2*i], s[2*i+1] = -sf, sf
		} else {
			c[i], s[i] = cf, sf
		}
	}
}

// headsCheck panics unless nh heads of nd elements at strides ostr
// and xstr lie within out and x, so that the assembly never reads or
// writes outside them.
func headsCheck(out, x []float32, ostr, xstr, nh, nd int) {
	if ostr < 0 || xstr < 0 || nd < 0 || (nh-1)*ostr+nd > len(out) || (nh-1)*xstr+nd > len(x) {
		panic("rope: heads out of range")
	}
}

// NormHeads rotates nh heads of nd elements (normal mode) with normRow.
func NormHeads(out, x []float32, ostr, xstr, nh, nd int, cc, ss []float32) {
	for h := range nh {
		normRow(out[h*ostr:h*ostr+nd], x[h*xstr:h*xstr+nd], cc, ss)
	}
}

// NeoXHeads rotates nh heads of nd elements (NeoX mode) with neoXRow.
func NeoXHeads(out, x []float32, ostr, xstr, nh, nd int, cos, sin []float32) {
	half := nd / 2
	for h := range nh {
		o, xh := out[h*ostr:h*ostr+nd], x[h*xstr:h*xstr+nd]
		neoXRow(o[:half], o[half:], xh[:half], xh[half:], cos, sin)
	}
}

// The rotations of one head. neoXRow rotates the pairs (x0[i],
// x1[i]) by the angles whose cosines and sines are cos[i], sin[i]:
// o0 = x0*c - x1*s, o1 = x0*s + x1*c. normRow rotates the adjacent pairs
// (x[2i], x[2i+1]) given cc (each cosine twice) and ss (each sine as -s,
// s): out = x*cc + swap(x)*ss, where swap exchanges each pair; that is
// x[2i]*c - x[2i+1]*s and x[2i+1]*c + x[2i]*s with each product rounded,
// as the generic loops compute them. Both are exact twins of their
// assembly (no FMA).
func neoXRow(o0, o1, x0, x1, cos, sin []float32) {
	n := len(o0)
	o1, x0, x1, cos, sin = o1[:n], x0[:n], x1[:n], cos[:n], sin[:n]
	for i := range n {
		c, s := cos[i], sin[i]
		a, b := x0[i], x1[i]
		o0[i] = float32(a*c) - float32(b*s)
		o1[i] = float32(a*s) + float32(b*c)
	}
}

func normRow(out, x, cc, ss []float32) {
	n := len(out) &^ 1
	x, cc, ss = x[:n], cc[:n], ss[:n]
	for i := 0; i < n; i += 2 {
		a, b := x[i], x[i+1]
		out[i] = float32(a*cc[i]) + float32(b*ss[i])
		out[i+1] = float32(b*cc[i+1]) + float32(a*ss[i+1])
	}
}
