//go:build amd64 && !purego

package dot

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestWidenF16AVX512 checks the 512-bit f16 and bf16 wideners against
// WidenF16AVX2 and WidenBF16AVX2 bit for bit (NaN payloads included) and
// against quant.FP16ToFP32 and quant.BF16ToFP32 (any NaN for NaN): every
// 16-bit value, at every offset of the 64- and 16-value steps and the
// masked tail, with the elements past the end left alone.
func TestWidenF16AVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	const all = 1 << 16
	src := make([]byte, 2*(all+100))
	for i := range all + 100 {
		binary.LittleEndian.PutUint16(src[2*i:], uint16(i*40503)) // a permutation of all values
	}
	sentinel := math.Float32frombits(0x7fc0dead)
	for _, c := range []struct {
		name      string
		got, want func([]byte, []float32)
		ref       func(uint16) float32
	}{{"f16", WidenF16AVX512, WidenF16AVX2, quant.FP16ToFP32}, {"bf16", WidenBF16AVX512, WidenBF16AVX2, quant.BF16ToFP32}} {
		for _, n := range []int{0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 79, 80, 127, 128, 129, 255, 256, 1000, all} {
			for _, off := range []int{0, 1, 3} {
				s := src[2*off:]
				got := make([]float32, n+16)
				want := make([]float32, n+16)
				for i := range got {
					got[i], want[i] = sentinel, sentinel
				}
				c.got(s, got[:n])
				c.want(s, want[:n])
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s n=%d off=%d: dst[%d] = %#x, AVX2 %#x", c.name, n, off, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
					}
				}
				for i := range n {
					h := binary.LittleEndian.Uint16(s[2*i:])
					if w := c.ref(h); !simdtest.SameFloat(got[i], w) {
						t.Fatalf("%s n=%d off=%d: %#04x widened to %g, Go %g", c.name, n, off, h, got[i], w)
					}
				}
			}
		}
	}
}

// BenchmarkWidenF16 measures the f16 and bf16 wideners on 4096
// L1-resident values.
func BenchmarkWidenF16(b *testing.B) {
	const n = 4096
	src := make([]byte, 2*n)
	dst := make([]float32, n)
	for _, c := range []struct {
		name string
		f    func([]byte, []float32)
		ok   bool
	}{{"avx2", WidenF16AVX2, simdtest.HasAVX2()}, {"avx512", WidenF16AVX512, simdtest.HasAVX512()},
		{"bf16-avx2", WidenBF16AVX2, simdtest.HasAVX2()}, {"bf16-avx512", WidenBF16AVX512, simdtest.HasAVX512()}} {
		b.Run(c.name, func(b *testing.B) {
			if !c.ok {
				b.Skip("CPU lacks the tier")
			}
			b.SetBytes(2 * n)
			for b.Loop() {
				c.f(src, dst)
			}
		})
	}
}
