//go:build amd64 && !purego

package ssm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// BenchmarkSSMScanAVX512 compares the AVX2 and avx512 tiers' scan
// kernels on one thread: scanS over 256 rows (one decode token of a
// Mamba-2 head group, the state in L2) and scanSTok over 64 rows and 16
// tokens (a prompt block, the state in L1), at d_state 16 and 128.
func BenchmarkSSMScanAVX512(b *testing.B) {
	simdtest.NeedAVX512(b)
	rng := rand.New(rand.NewPCG(31, 32))
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	for _, ds := range []int{16, 128} {
		const rows, tokRows, nTok = 256, 64, 16
		st, src := vals(rows*ds), vals(rows*ds)
		x, y := vals(nTok*rows), make([]float32, nTok*rows)
		bb, cc := vals(nTok*ds), vals(nTok*ds)
		a, dsp := vals(rows*ds), vals(rows)
		ed := make([]float32, 2*nTok)
		for k := range nTok {
			ed[2*k], ed[2*k+1] = 0.5+0.4*rng.Float32(), rng.Float32()
		}
		for _, tier := range []struct {
			name string
			sk   ssmSet
		}{{"avx2", avx2}, {"avx512", avx512}} {
			sk := tier.sk
			b.Run(fmt.Sprintf("scanS/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanS(st, src, ds, ds, x, 1, y, 1, bb, cc, rows, ds, 0.9, 0.1)
				}
			})
			b.Run(fmt.Sprintf("scanA/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanA(st, src, ds, ds, a, ds, dsp, 1, x, 1, y, 1, bb, cc, rows, ds)
				}
			})
			b.Run(fmt.Sprintf("scanSTok/ds=%d/%s", ds, tier.name), func(b *testing.B) {
				for b.Loop() {
					sk.scanSTok(st, ds, tokRows, ds, x, 1, tokRows, y, 1, tokRows, bb, ds, cc, ds, ed, nTok)
				}
			})
		}
	}
}
