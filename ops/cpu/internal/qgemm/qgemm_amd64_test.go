//go:build amd64 && !purego

package qgemm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// tile is a panel kernel with its repacking, as package cpu's qTile holds
// them.
type tile struct {
	block, gblock int64
	repack        func(panel, w []byte, ld, nb int64)
	kernel        func(nb int, panel, grp []byte, out *[32]float32)
}

// avx2Tiles are the AVX2 panel kernels by weight type.
var avx2Tiles = map[quant.Type]*tile{
	quant.Q4_0: {PanelBlock, dot.PackQ8Block, RepackQ4_0AVX2, Q4_0AVX2},
	quant.Q5_0: {PanelBlock, dot.PackQ8Block, RepackQ5_0AVX2, Q5_0AVX2},
	quant.Q8_0: {PanelBlock8, dot.PackQ8Block, RepackQ8_0AVX2, Q8_0AVX2},
	quant.Q4_1: {PanelBlock, dot.PackQ81Block, RepackQ4_1AVX2, Q4_1AVX2},
	quant.Q5_1: {PanelBlock, dot.PackQ81Block, RepackQ5_1AVX2, Q5_1AVX2},
}

// qTileInputs returns eight random weight rows of nb blocks of type wt
// (random bytes: NaN, Inf and denormal scales included), their panel, and
// a packed group of random codes whose scales are random bytes too or,
// when sane, finite float32 values as the packing writes them.
func qTileInputs(rng *rand.Rand, wt quant.Type, t *tile, nb int, sane bool) (*[8][]byte, []byte, []byte) {
	rows, w, ld := qTileRows(rng, wt, nb)
	panel := simdtest.Row(rng, quant.I8, nb*int(t.block), rng.IntN(64), 0)
	t.repack(panel, w, ld, int64(nb))
	grp := simdtest.Row(rng, quant.I8, nb*int(t.gblock), rng.IntN(64), 0)
	if sane {
		for b := range nb {
			for s := range (t.gblock - 128) / 4 {
				simd.F32s(grp[b*int(t.gblock):], 4*s, 1)[0] = float32(rng.NormFloat64())
			}
		}
	}
	return rows, panel, grp
}

// qTileRows returns eight random weight rows of nb blocks of type wt in
// one buffer w, ld bytes apart (row bytes plus a random gap), and the
// rows as slices.
func qTileRows(rng *rand.Rand, wt quant.Type, nb int) (*[8][]byte, []byte, int64) {
	rowBytes, _ := wt.RowSize(int64(nb * quant.QK))
	ld := rowBytes + int64(rng.IntN(40))
	w := simdtest.Row(rng, quant.I8, int(7*ld+rowBytes), rng.IntN(64), 0)
	var rows [8][]byte
	for r := range rows {
		rows[r] = w[int64(r)*ld : int64(r)*ld+rowBytes]
		simdtest.FixBsums(wt, rows[r])
	}
	return &rows, w, ld
}

// qGoRepack is the Go repacking of each panel layout, which the
// assembly repacking must match byte for byte.
var qGoRepack = map[quant.Type]func(panel, w []byte, ld, nb int64){
	quant.Q4_0: RepackQ4_0, quant.Q5_0: RepackQ5_0, quant.Q8_0: RepackQ8_0,
	quant.Q4_1: RepackQ4_1, quant.Q5_1: RepackQ5_1,
}

// TestQTileRepack checks the tiles' repacking against the Go repacking
// byte for byte (random rows, random strides).
func TestQTileRepack(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(71, 72))
	for wt, tile := range avx2Tiles {
		for range 50 {
			nb := rng.IntN(9)
			_, w, ld := qTileRows(rng, wt, nb)
			got := make([]byte, nb*int(tile.block))
			want := make([]byte, nb*int(tile.block))
			tile.repack(got, w, ld, int64(nb))
			qGoRepack[wt](want, w, ld, int64(nb))
			if !bytes.Equal(got, want) {
				t.Fatalf("%v nb=%d ld=%d: repacked panels differ", wt, nb, ld)
			}
		}
	}
}

// checkQTile runs the panel kernel of wt and compares it with
// Twin bit for bit.
func checkQTile(t *testing.T, wt quant.Type, nb int, rows *[8][]byte, panel, grp []byte) {
	t.Helper()
	var got [32]float32
	tile := avx2Tiles[wt]
	if h := nb / 2; nb > 1 {
		// In two chunks, as qTileBlock runs long rows.
		tile.kernel(h, panel, grp, &got)
		tile.kernel(nb-h, panel[h*int(tile.block):], grp[h*int(tile.gblock):], &got)
	} else {
		tile.kernel(nb, panel, grp, &got)
	}
	want := Twin(wt, rows, grp, nb)
	for i := range got {
		if !simdtest.SameFloat(got[i], want[i]) {
			t.Fatalf("%v panel nb=%d row %d column %d: asm %g (%#x), twin %g (%#x)", wt, nb, i%8, i/8,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestQTileTwins checks every panel kernel against its twin bit for bit
// on random weights repacked by the tile's repack function, so the
// repacking is checked with it (the twin reads the weights as stored).
// Extreme activation codes (-128, 127 and their biased forms) and the
// q8_0 weight code -128 come up among the random bytes; one case per
// type sets every code to an extreme.
func TestQTileTwins(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for wt, tile := range avx2Tiles {
		for i := range 200 {
			nb := rng.IntN(12)
			rows, panel, grp := qTileInputs(rng, wt, tile, nb, i%2 == 0)
			checkQTile(t, wt, nb, rows, panel, grp)
		}
		// All extremes: the int16 partial sums at their bounds.
		// (q4_0 w = -8 or q5_0 w = -16 with u = 255; q8_0 w = -128 with
		// y = -128, whose sign flip wraps.)
		fills := [][2]byte{{0xff, 0x00}, {0x00, 0x80}, {0x88, 0x7f}, {0x80, 0xff},
			{0x00, 0xff}, {0xff, 0xff}, {0x80, 0x80}, {0x81, 0x7f}, {0x7f, 0x81}}
		for _, fill := range fills {
			nb := 3
			rows, w, ld := qTileRows(rng, wt, nb)
			for r := range rows {
				for b := range nb {
					bs := int(wt.TypeSize())
					blk := rows[r][b*bs : (b+1)*bs]
					for i := 2; i < len(blk); i++ {
						blk[i] = fill[0]
					}
				}
			}
			_, _, grp := qTileInputs(rng, wt, tile, nb, true)
			for b := range nb {
				gs := int(tile.gblock)
				blk := grp[b*gs+gs-128 : (b+1)*gs]
				for i := range blk {
					blk[i] = fill[1]
				}
			}
			panel := make([]byte, nb*int(tile.block))
			tile.repack(panel, w, ld, int64(nb))
			checkQTile(t, wt, nb, rows, panel, grp)
		}
	}
}

// FuzzQTile is the fuzzing form of TestQTileTwins.
func FuzzQTile(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint8(0), uint8(3), []byte{1, 2, 3, 200, 17})
	f.Add(uint8(1), uint8(5), []byte{255, 128})
	f.Add(uint8(2), uint8(7), []byte{60, 0, 1})
	types := []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.Q4_1, quant.Q5_1}
	f.Fuzz(func(t *testing.T, kind, blocks uint8, data []byte) {
		wt := types[int(kind)%len(types)]
		tile := avx2Tiles[wt]
		nb := int(blocks) % 20
		rowBytes, _ := wt.RowSize(int64(nb * quant.QK))
		w := simdtest.FillRow(quant.I8, int(8*rowBytes), 5, data)
		var rows [8][]byte
		for r := range rows {
			rows[r] = w[int64(r)*rowBytes : int64(r+1)*rowBytes]
		}
		panel := make([]byte, nb*int(tile.block))
		tile.repack(panel, w, rowBytes, int64(nb))
		grp := simdtest.FillRow(quant.I8, nb*int(tile.gblock), 3, data[len(data)/3:])
		checkQTile(t, wt, nb, &rows, panel, grp)
	})
}

// BenchmarkQTileKernel measures the panel kernels alone on one panel and
// one packed group of nb blocks (nb = 32: both in L1; nb = 448, k =
// 14336: in L2). GFLOP/s counts 2k per output, 32 outputs per call.
func BenchmarkQTileKernel(b *testing.B) {
	if !simdtest.HasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	rng := rand.New(rand.NewPCG(67, 68))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q5_0, quant.Q4_1, quant.Q5_1} {
		for _, nb := range []int{32, 448} {
			tile := avx2Tiles[wt]
			_, panel, grp := qTileInputs(rng, wt, tile, nb, true)
			b.Run(fmt.Sprintf("%v/k=%d", wt, nb*quant.QK), func(b *testing.B) {
				var out [32]float32
				cpu0 := simdtest.ProcessCPUSeconds()
				for b.Loop() {
					tile.kernel(nb, panel, grp, &out)
				}
				flops := 2 * float64(nb*quant.QK) * 32
				simdtest.ReportCPU(b, flops, simdtest.ProcessCPUSeconds()-cpu0)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkQTileRepack measures repacking eight weight rows of k = 4096
// into a panel; ns per element is the cost the panel path pays once per
// weight element and call.
func BenchmarkQTileRepack(b *testing.B) {
	rng := rand.New(rand.NewPCG(69, 70))
	const nb = 128
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q5_0, quant.Q4_1, quant.Q5_1} {
		tile := avx2Tiles[wt]
		_, w, ld := qTileRows(rng, wt, nb)
		panel := make([]byte, nb*int(tile.block))
		b.Run(fmt.Sprint(wt), func(b *testing.B) {
			for b.Loop() {
				tile.repack(panel, w, ld, nb)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(8*nb*quant.QK), "ns/element")
		})
	}
}
