//go:build amd64 && !purego

package sgemm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// TestTranspose16Twin checks Transpose16AVX512 against TransposeTwin on
// lengths around the 16-line tiles, rows at unrelated addresses and of
// unequal lengths, and that it writes nothing past its n lines.
func TestTranspose16Twin(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(16, 16))
	for _, c := range []struct{ n, ld int }{{0, 16}, {1, 16}, {7, 16}, {8, 16}, {15, 16}, {16, 16}, {17, 16}, {31, 16}, {32, 16}, {33, 16}, {48, 16}, {100, 16}, {256, 16}, {257, 16}, {33, 17}, {48, 40}, {100, 768}} {
		n, ld := c.n, c.ld
		var rows [16][]uint32
		for c := range rows {
			rows[c] = make([]uint32, n+rng.IntN(20))
			for i := range rows[c] {
				rows[c][i] = rng.Uint32()
			}
		}
		got := make([]uint32, n*ld+16)
		for i := range got {
			got[i] = 0xdeadbeef
		}
		want := slices.Clone(got)
		Transpose16AVX512(got, ld, &rows, n)
		TransposeTwin(want, ld, &rows, n)
		if i := slices.Compare(got, want); i != 0 {
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("n=%d ld=%d: dst[%d] = %#x, twin %#x", n, ld, j, got[j], want[j])
				}
			}
		}
	}
}

// TestTranspose16Bounds checks that a short row or destination panics
// rather than reading or writing past it.
func TestTranspose16Bounds(t *testing.T) {
	simdtest.NeedAVX512(t)
	const n = 32
	make16 := func() *[16][]uint32 {
		var rows [16][]uint32
		for c := range rows {
			rows[c] = make([]uint32, n)
		}
		return &rows
	}
	for name, f := range map[string]func(){
		"short dst": func() { Transpose16AVX512(make([]uint32, 16*n-1), 16, make16(), n) },
		"short row": func() { r := make16(); r[5] = r[5][:n-1]; Transpose16AVX512(make([]uint32, 16*n), 16, r, n) },
		"ld < 16":   func() { Transpose16AVX512(make([]uint32, 16*n), 15, make16(), n) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkTranspose16 measures a panel's worth of lines (256) from L1.
func BenchmarkTranspose16(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("CPU lacks AVX-512 F/BW/VL")
	}
	const n = 256
	var rows [16][]uint32
	for c := range rows {
		rows[c] = make([]uint32, n)
	}
	dst := make([]uint32, 16*n)
	b.Run("avx512", func(b *testing.B) {
		for b.Loop() {
			Transpose16AVX512(dst, 16, &rows, n)
		}
	})
	b.Run("twin", func(b *testing.B) {
		for b.Loop() {
			TransposeTwin(dst, 16, &rows, n)
		}
	})
}
