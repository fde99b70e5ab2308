package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// forEachTier runs f once per tier the host CPU supports (generic first),
// each as a subtest named after the tier, and logs the tiers it skips with
// the reason, as crypto/internal/cryptotest runs every implementation.
func forEachTier(t *testing.T, f func(t *testing.T, ks *kernelSet)) {
	t.Helper()
	for _, st := range detectTiers() {
		if !st.Supported {
			t.Logf("tier %s skipped on this CPU: %s", st.Name, st.Reason)
			continue
		}
		t.Run(st.Name, func(t *testing.T) { f(t, st.kernels) })
	}
}

// sameFloat reports whether a and b have the same bits or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// simdSpecial are float32 values the differential tests mix into float
// inputs: zeros, denormals, the extremes, infinities and NaNs.
var simdSpecial = []float32{
	0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	math.Float32frombits(0x007fffff), 1e-39, math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, -1, 3e38, 1e-30,
}

// simdRow returns a row of n elements of type wt at byte offset off of a
// fresh buffer (so the row is misaligned when off is not a multiple of
// 32): random bytes for block types, random values for float types,
// a fraction special of them replaced by simdSpecial values.
func simdRow(rng *rand.Rand, wt quant.Type, n, off int, special float64) []byte {
	size, err := wt.RowSize(int64(n))
	if err != nil {
		panic(err)
	}
	buf := alignedBytes(size + int64(off) + 1)[off : int64(off)+size]
	if !wt.IsFloat() {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		fixBsums(wt, buf)
		return buf
	}
	vals := make([]float32, n)
	scale := float32(1)
	if rng.IntN(4) == 0 {
		scale = float32(math.Ldexp(1, rng.IntN(200)-100))
	}
	for i := range vals {
		vals[i] = (2*rng.Float32() - 1) * scale
		if rng.Float64() < special {
			vals[i] = simdSpecial[rng.IntN(len(simdSpecial))]
		}
	}
	switch wt {
	case quant.F32:
		copy(f32s(buf, 0, int64(n)), vals)
	case quant.F16:
		h := u16s(buf, 0, int64(n))
		for i, v := range vals {
			h[i] = quant.FP32ToFP16(v)
		}
	case quant.BF16:
		h := u16s(buf, 0, int64(n))
		for i, v := range vals {
			h[i] = quant.FP32ToBF16(v)
		}
	}
	return buf
}

func TestFMA32(t *testing.T) {
	cases := [][3]float32{
		{1, 1, 1},
		// x*y = 1 + 2^-23 + 2^-24 + 2^-47 needs one rounding: the naive
		// float64 sum lands on a float32 midpoint.
		{1 + 0x1p-23, 1 + 0x1p-24, 0},
		{1 + 0x1p-23, 1 + 0x1p-24, -0x1p-60},
		{0x1p-149, 0.5, 0}, {0x1p-149, 1.5, 0}, {0x1p-149, 2.5, 0},
		{3, 5, float32(math.Inf(-1))}, {float32(math.Inf(1)), 0, 1},
		{math.MaxFloat32, 2, -math.MaxFloat32}, {math.MaxFloat32, 1 + 0x1p-23, 0},
		{-0.0, 1, 0}, {-0.0, 1, float32(math.Copysign(0, -1))},
	}
	for _, c := range cases {
		got, want := fma32(c[0], c[1], c[2]), fma32Ref(c[0], c[1], c[2])
		if !sameFloat(got, want) {
			t.Errorf("fma32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
		}
	}
}

// fma32Ref is the hardware FMA where the host has it, else fma32 itself
// checked against exact big-float arithmetic in TestFMA32Exact.
var fma32Ref = fma32

// fixBsums rewrites the bsums of every q8_K block of row as the sums of
// its codes, which every q8_K quantizer guarantees and the AVX2 K-format
// dot products rely on; other types are left alone.
func fixBsums(t quant.Type, row []byte) {
	if t != quant.Q8_K {
		return
	}
	for b := 0; b+bytesQ8_K <= len(row); b += bytesQ8_K {
		for j := range 16 {
			var s int16
			for _, q := range row[b+4+16*j : b+4+16*j+16] {
				s += int16(int8(q))
			}
			binary.LittleEndian.PutUint16(row[b+260+2*j:], uint16(s))
		}
	}
}
