package harness

import "math"

// metrics compares a backend's output with the reference's.
type metrics struct {
	n           int64
	nmse        float64
	maxErr      float64
	worst       int64 // index of the largest error, -1 if none
	refMax      float64
	nanMismatch int64
	firstNaN    int64 // index of the first NaN/Inf mismatch, -1 if none
}

// class sorts a value into finite (0), NaN (1), +Inf (2) and -Inf (3).
func class(x float64) int {
	switch {
	case math.IsNaN(x):
		return 1
	case math.IsInf(x, 1):
		return 2
	case math.IsInf(x, -1):
		return 3
	}
	return 0
}

// compare computes the error metrics of got against want (same length).
// NMSE is sum((got-want)²)/sum(want²) as ggml's test-backend-ops computes
// it, over the elements where both are finite; elements where both are the
// same non-finite value match and count nowhere; elements that disagree on
// being NaN or infinite are counted as mismatches.
func compare(got, want []float64) metrics {
	m := metrics{n: int64(len(want)), worst: -1, firstNaN: -1}
	var errSq, refSq float64
	for i, w := range want {
		g := got[i]
		cg, cw := class(g), class(w)
		if cg != cw {
			if m.firstNaN < 0 {
				m.firstNaN = int64(i)
			}
			m.nanMismatch++
			continue
		}
		if cw != 0 {
			continue
		}
		d := g - w
		errSq += d * d
		refSq += w * w
		if a := math.Abs(d); a > m.maxErr || m.worst < 0 && a == m.maxErr {
			m.maxErr, m.worst = a, int64(i)
		}
		m.refMax = max(m.refMax, math.Abs(w))
	}
	switch {
	case errSq == 0:
		m.nmse = 0
	case refSq == 0:
		m.nmse = math.Inf(1)
	default:
		m.nmse = errSq / refSq
	}
	return m
}

// coords returns the logical coordinates [i0 i1 i2 i3] of flat index i in
// a tensor of shape ne.
func coords(i int64, ne [4]int64) [4]int64 {
	var c [4]int64
	for d := 0; d < 4; d++ {
		if ne[d] > 0 {
			c[d] = i % ne[d]
			i /= ne[d]
		}
	}
	return c
}
