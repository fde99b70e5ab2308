package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// rng is SplitMix64: a tiny generator whose output is the same on every
// platform and Go version, so inputs (and the golden digests computed from
// them) never drift.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uniform returns a float32 in [-1, 1) on a grid of 2^-23.
func (r *rng) uniform() float32 {
	return float32(int32(r.next()>>40)-(1<<23)) / (1 << 23)
}

// gauss returns an approximately standard normal float32: the sum of four
// uniforms, scaled to unit variance. Only float32 additions and one
// multiplication are involved, so the result is the same everywhere (the
// conversion keeps the product from being fused into a caller's addition).
func (r *rng) gauss() float32 {
	s := r.uniform() + r.uniform() + r.uniform() + r.uniform()
	return float32(s * 0.8660254)
}

// dist is a named input distribution.
type dist struct {
	name string
	gen  func(r *rng, x []float32)
}

// dists are the input distributions the round-trip and golden tests use.
var dists = []dist{
	{"uniform", func(r *rng, x []float32) {
		for i := range x {
			x[i] = r.uniform()
		}
	}},
	{"gauss", func(r *rng, x []float32) {
		for i := range x {
			x[i] = r.gauss()
		}
	}},
	{"outliers", func(r *rng, x []float32) {
		for i := range x {
			x[i] = r.gauss()
			if i%37 == 5 {
				x[i] *= 50
			}
		}
	}},
	{"positive", func(r *rng, x []float32) {
		for i := range x {
			x[i] = abs32(r.uniform()) * 3
		}
	}},
	{"negative", func(r *rng, x []float32) {
		for i := range x {
			x[i] = float32(-abs32(r.gauss())) - 0.5
		}
	}},
	{"sparse", func(r *rng, x []float32) {
		for i := range x {
			if r.next()%4 == 0 {
				x[i] = r.gauss()
			} else {
				x[i] = 0
			}
		}
	}},
	{"steps", func(r *rng, x []float32) {
		for i := range x {
			x[i] = float32(int(r.next()%7)-3) * 0.25
		}
	}},
	{"tiny", func(r *rng, x []float32) {
		for i := range x {
			x[i] = r.gauss() * 1e-3
		}
	}},
	{"huge", func(r *rng, x []float32) {
		for i := range x {
			x[i] = r.gauss() * 300
		}
	}},
	{"subblocks", func(r *rng, x []float32) {
		// Sub-blocks of 16 alternate between zero, near-zero and
		// ordinary values.
		for i := range x {
			switch (i / 16) % 3 {
			case 0:
				x[i] = 0
			case 1:
				x[i] = r.gauss() * 1e-4
			default:
				x[i] = r.gauss()
			}
		}
	}},
	{"zeros", func(r *rng, x []float32) {
		clear(x)
	}},
	{"constant", func(r *rng, x []float32) {
		c := r.gauss()
		for i := range x {
			x[i] = c
		}
	}},
}

// quantTypes are the types QuantizeRow accepts.
var quantTypes = []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K,
	IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, IQ2_S, IQ3_S, IQ3_XXS}

// roundTrip quantizes x as t and decodes it again.
func roundTrip(tb testing.TB, t Type, x []float32) ([]byte, []float32) {
	tb.Helper()
	size, err := t.RowSize(int64(len(x)))
	if err != nil {
		tb.Fatal(err)
	}
	q := make([]byte, size)
	if err := QuantizeRow(t, x, q); err != nil {
		tb.Fatalf("QuantizeRow(%v): %v", t, err)
	}
	y := make([]float32, len(x))
	if err := DequantizeRow(t, q, y); err != nil {
		tb.Fatalf("DequantizeRow(%v): %v", t, err)
	}
	return q, y
}

// h16 returns the little-endian bytes of binary16 bits h.
func h16(h uint16) []byte {
	return binary.LittleEndian.AppendUint16(nil, h)
}

// f32bytes returns the little-endian bytes of f.
func f32bytes(f float32) []byte {
	return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f))
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
