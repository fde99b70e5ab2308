//go:build amd64 && !purego

package qgemm

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// TestPanelFromX8 checks that the panel written from an x8 group equals,
// byte for byte, the panel repacked from the group's plain rows (any
// bytes: every code, NaN, Inf and denormal scales). The AVX2 repacking
// matches the Go one (TestQTileRepack), so the Go repacking of the
// unpacked rows is this conversion's twin.
func TestPanelFromX8(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(91, 92))
	for _, c := range []struct {
		wt     quant.Type
		bs     int
		block  int64
		fromX8 func(panel, x8 []byte, nb int64)
		repack func(panel, w []byte, ld, nb int64)
	}{
		{quant.Q4_0, simd.BytesQ4_0, PanelBlock, PanelQ4_0FromX8AVX2, RepackQ4_0AVX2},
		{quant.Q8_0, simd.BytesQ8_0, PanelBlock8, PanelQ8_0FromX8AVX2, RepackQ8_0AVX2},
	} {
		for trial := range 100 {
			nb := 1 + rng.IntN(12)
			row := nb * c.bs
			x8 := simdtest.Row(rng, quant.I8, 8*row, rng.IntN(64), 0)
			rows := make([]byte, 8*row)
			gemv.UnpackX8(rows, x8, nb, c.bs)
			got := simdtest.Row(rng, quant.I8, nb*int(c.block), rng.IntN(64), 0)
			want := make([]byte, len(got))
			c.fromX8(got, x8, int64(nb))
			c.repack(want, rows, int64(row), int64(nb))
			if !bytes.Equal(got, want) {
				t.Fatalf("%v nb=%d trial %d: the panel from the x8 group differs from the rows' panel", c.wt, nb, trial)
			}
		}
	}
}
