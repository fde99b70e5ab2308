//go:build amd64 && !purego

package flashattn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// BenchmarkFAKernels measures the f16 block kernels alone on an
// L1-resident tile (head size 128, 64 keys): GFLOP/s counts 2 per FMA
// lane, so the AVX2 FMA peak is 32 per cycle.
func BenchmarkFAKernels(b *testing.B) {
	simdtest.NeedAVX2(b)
	const n, nk = 128, 64
	rng := rand.New(rand.NewPCG(3, 4))
	k := make([]byte, 2*n*nk)
	for i := 0; i+1 < len(k); i += 2 {
		h := faRandHalf(rng, false)
		k[i], k[i+1] = byte(h), byte(h>>8)
	}
	var q, out, acc, p [3][]float32
	for r := range 3 {
		q[r], out[r], acc[r], p[r] = make([]float32, n), make([]float32, nk), make([]float32, n), make([]float32, nk)
		for i := range q[r] {
			q[r][i] = rng.Float32()
		}
		for i := range p[r] {
			p[r][i] = rng.Float32() * 1e-3
		}
	}
	flops := float64(2 * 3 * n * nk)
	for _, pf := range []bool{false, true} {
		b.Run(fmt.Sprintf("scores3x4/pf=%v", pf), func(b *testing.B) {
			for b.Loop() {
				ScoresAVX2(q, k, 2*n, nk, out, pf)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("scores4x2", func(b *testing.B) {
		q4 := [4][]float32{q[0], q[1], q[2], q[0]}
		o4 := [4][]float32{out[0], out[1], out[2], make([]float32, nk)}
		for b.Loop() {
			Scores4AVX2(q4, k, 2*n, nk, o4, false)
		}
		b.ReportMetric(flops*4/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("values3", func(b *testing.B) {
		for b.Loop() {
			ValuesAVX2(acc, p, k, 2*n, nk)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("scores1", func(b *testing.B) {
		for b.Loop() {
			Scores1AVX2(q[0], k, 2*n, 63, out[0], false)
		}
		b.ReportMetric(flops/3*63/64*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
