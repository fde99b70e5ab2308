//go:build amd64 && !purego

package qgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// vnniTiles are the VNNI panel kernels by weight type, with the AVX2
// repacking (the panels are the same).
var vnniTiles = map[quant.Type]*tile{
	quant.Q4_0: {PanelBlock, dot.PackQ8Block, RepackQ4_0AVX2, Q4_0VNNI},
	quant.Q5_0: {PanelBlock, dot.PackQ8Block, RepackQ5_0AVX2, Q5_0VNNI},
	quant.Q8_0: {PanelBlock8, dot.PackQ8Block, RepackQ8_0AVX2, Q8_0VNNI},
	quant.Q4_1: {PanelBlock, dot.PackQ81Block, RepackQ4_1AVX2, Q4_1VNNI},
	quant.Q5_1: {PanelBlock, dot.PackQ81Block, RepackQ5_1AVX2, Q5_1VNNI},
}

// checkTile runs tile's kernel on a panel of wt (in two chunks where nb
// > 1, as checkQTile) and compares it with Twin bit for bit; when also
// is set, the AVX2 kernel must agree too.
func checkTile(t *testing.T, tile *tile, wt quant.Type, nb int, rows *[8][]byte, panel, grp []byte) {
	t.Helper()
	var got [32]float32
	if h := nb / 2; nb > 1 {
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

// TestQTileVNNITwins checks the VNNI panel kernels against Twin bit for
// bit, as TestQTileTwins the AVX2 ones: random weights and codes (NaN,
// Inf and denormal scales among the random bytes; extreme codes, the
// q8_0 weight -128 and activation -128 included), lengths 0 to 20
// blocks, and blocks filled with each pair of extreme codes.
func TestQTileVNNITwins(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(81, 82))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.Q4_1, quant.Q5_1} {
		tile := vnniTiles[wt]
		for i := range 300 {
			nb := i % 21
			rows, panel, grp := qTileInputs(rng, wt, tile, nb, i%2 == 0)
			checkTile(t, tile, wt, nb, rows, panel, grp)
		}
		fills := [][2]byte{{0xff, 0x00}, {0x00, 0x80}, {0x88, 0x7f}, {0x80, 0xff},
			{0x00, 0xff}, {0xff, 0xff}, {0x80, 0x80}, {0x81, 0x7f}, {0x7f, 0x81},
			{0x80, 0x7f}, {0x7f, 0x80}, {0x77, 0x00}, {0xf0, 0xff}}
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
			checkTile(t, tile, wt, nb, rows, panel, grp)
		}
	}
}

// FuzzQTileVNNI is the fuzzing form of TestQTileVNNITwins.
func FuzzQTileVNNI(f *testing.F) {
	simdtest.NeedVNNI(f)
	f.Add(uint8(0), uint8(3), []byte{1, 2, 3, 200, 17})
	f.Add(uint8(1), uint8(5), []byte{255, 128})
	f.Add(uint8(2), uint8(7), []byte{60, 0, 1})
	types := []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.Q4_1, quant.Q5_1}
	f.Fuzz(func(t *testing.T, kind, blocks uint8, data []byte) {
		wt := types[int(kind)%len(types)]
		tile := vnniTiles[wt]
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
		checkTile(t, tile, wt, nb, &rows, panel, grp)
	})
}

// BenchmarkQTileKernelVNNI measures the VNNI panel kernels as
// BenchmarkQTileKernel the AVX2 ones (tier=avx2 runs those beside them).
func BenchmarkQTileKernelVNNI(b *testing.B) {
	if !simdtest.HasVNNI() {
		b.Skip("CPU lacks AVX512_VNNI")
	}
	rng := rand.New(rand.NewPCG(67, 68))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q5_0, quant.Q4_1, quant.Q5_1} {
		for _, nb := range []int{32, 448} {
			_, panel, grp := qTileInputs(rng, wt, avx2Tiles[wt], nb, true)
			if wt == quant.Q8_0 {
				// Codes as quantized activations have them: no -128.
				for b := range nb {
					for i := 16; i < dot.PackQ8Block; i++ {
						if grp[b*dot.PackQ8Block+i] == 0x80 {
							grp[b*dot.PackQ8Block+i] = 0x81
						}
					}
				}
			}
			for _, tier := range []struct {
				name  string
				tiles map[quant.Type]*tile
			}{{"avx2", avx2Tiles}, {"vnni", vnniTiles}} {
				tile := tier.tiles[wt]
				b.Run(fmt.Sprintf("%v/k=%d/%s", wt, nb*quant.QK, tier.name), func(b *testing.B) {
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
}
