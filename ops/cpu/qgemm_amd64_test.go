//go:build amd64 && !purego

package cpu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// qTileInputs returns eight random weight rows of nb blocks of type wt
// (random bytes: NaN, Inf and denormal scales included), their panel, and
// a packed group of random codes whose scales are random bytes too or,
// when sane, finite float32 values as the packing writes them.
func qTileInputs(rng *rand.Rand, wt quant.Type, t *qTile, nb int, sane bool) (*[8][]byte, []byte, []byte) {
	rows, w, ld := qTileRows(rng, wt, nb)
	panel := simdRow(rng, quant.I8, nb*int(t.block), rng.IntN(64), 0)
	t.repack(panel, w, ld, int64(nb))
	grp := simdRow(rng, quant.I8, nb*int(t.gblock), rng.IntN(64), 0)
	if sane {
		for b := range nb {
			for s := range (t.gblock - 128) / 4 {
				f32s(grp[b*int(t.gblock):], 4*s, 1)[0] = float32(rng.NormFloat64())
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
	w := simdRow(rng, quant.I8, int(7*ld+rowBytes), rng.IntN(64), 0)
	var rows [8][]byte
	for r := range rows {
		rows[r] = w[int64(r)*ld : int64(r)*ld+rowBytes]
		fixBsums(wt, rows[r])
	}
	return &rows, w, ld
}

// qGoRepack is the Go repacking of each panel layout, which the
// assembly repacking must match byte for byte.
var qGoRepack = map[quant.Type]func(panel, w []byte, ld, nb int64){
	quant.Q4_0: repackQ4_0, quant.Q5_0: repackQ5_0, quant.Q8_0: repackQ8_0,
	quant.Q4_1: repackQ4_1, quant.Q5_1: repackQ5_1,
}

// TestQTileRepack checks the tiles' repacking against the Go repacking
// byte for byte (random rows, random strides).
func TestQTileRepack(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(71, 72))
	for wt, tile := range avx2QTiles() {
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
// qgemmTwin bit for bit.
func checkQTile(t *testing.T, wt quant.Type, nb int, rows *[8][]byte, panel, grp []byte) {
	t.Helper()
	var got [32]float32
	tile := avx2Kernels.gemm[wt].qtile
	if h := nb / 2; nb > 1 {
		// In two chunks, as qTileBlock runs long rows.
		tile.kernel(h, panel, grp, &got)
		tile.kernel(nb-h, panel[h*int(tile.block):], grp[h*int(tile.gblock):], &got)
	} else {
		tile.kernel(nb, panel, grp, &got)
	}
	want := qgemmTwin(wt, rows, grp, nb)
	for i := range got {
		if !sameFloat(got[i], want[i]) {
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
	needAVX2(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for wt, tile := range avx2QTiles() {
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
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	f.Add(uint8(0), uint8(3), []byte{1, 2, 3, 200, 17})
	f.Add(uint8(1), uint8(5), []byte{255, 128})
	f.Add(uint8(2), uint8(7), []byte{60, 0, 1})
	types := []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.Q4_1, quant.Q5_1}
	f.Fuzz(func(t *testing.T, kind, blocks uint8, data []byte) {
		wt := types[int(kind)%len(types)]
		tile := avx2Kernels.gemm[wt].qtile
		nb := int(blocks) % 20
		rowBytes, _ := wt.RowSize(int64(nb * quant.QK))
		w := fillRow(quant.I8, int(8*rowBytes), 5, data)
		var rows [8][]byte
		for r := range rows {
			rows[r] = w[int64(r)*rowBytes : int64(r+1)*rowBytes]
		}
		panel := make([]byte, nb*int(tile.block))
		tile.repack(panel, w, rowBytes, int64(nb))
		grp := fillRow(quant.I8, nb*int(tile.gblock), 3, data[len(data)/3:])
		checkQTile(t, wt, nb, &rows, panel, grp)
	})
}

// TestQTileFreshWeights checks that panels repacked in one MUL_MAT call
// are not reused by the next: the weights' bytes change in place between
// two calls of the same shapes on the same backend, weights of another
// type with the same shapes come in between, and the workers' scratch is
// resliced short between calls as other kernels do; every result must
// match the reference and the dot product.
func TestQTileFreshWeights(t *testing.T) {
	needAVX2(t)
	// One thread and one row block (m = gemmMC) of several column
	// blocks: every work item asks for the same panels, so any stale
	// panel would be used.
	b, err := NewWithOptions(Options{Threads: 1, Tier: avx2Kernels.name})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(63, 64))
	x := mxLeaf(t, b, rng, "x", quant.F32, 128, 4*gemmNCQ)
	if xn := x.Ne[1]; xn < avx2Kernels.gemm[quant.Q8_0].qtile.minN {
		t.Fatalf("n = %d takes no panel path", xn)
	}
	var nodes []*ops.Tensor
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.Q4_1, quant.Q5_1} {
		node, err := ops.MulMat(mxLeaf(t, b, rng, "a", wt, 128, gemmMC), x)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node)
	}
	for round := range 3 {
		for _, node := range nodes {
			a := node.Src[0]
			mxCheck(t, b, node, mxMatTol(a.Type))
			gemmCompareDots(t, avx2Kernels, node, false)
			mxFill(t, a, mxRandom(rng, a.NumElements()))
			if round == 1 {
				for w := range b.scratch.workers {
					wb := &b.scratch.workers[w]
					wb.bytes = wb.bytes[:min(len(wb.bytes), 8)]
				}
			}
		}
	}
}

// qBenchBig switches BenchmarkQTile to the shape of a large FFN weight
// (k = 14336, m = 4096): KERNBENCH_QTILE_BIG=1 go test -bench QTile.
var qBenchBig = os.Getenv("KERNBENCH_QTILE_BIG") != ""

// qBenchShapes returns the weight types and activation counts
// BenchmarkQTile runs: n = 512 for each type, and small n for q4_0 and
// q8_0, where repacking the panels weighs most.
func qBenchShapes(quant.Type) []struct {
	wt quant.Type
	n  int64
} {
	var s []struct {
		wt quant.Type
		n  int64
	}
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q5_0, quant.Q4_1, quant.Q5_1} {
		s = append(s, struct {
			wt quant.Type
			n  int64
		}{wt, 512})
	}
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0} {
		for _, n := range []int64{4, 8, 16, 32, 64} {
			s = append(s, struct {
				wt quant.Type
				n  int64
			}{wt, n})
		}
	}
	return s
}

// BenchmarkQTile compares the panel kernels with the one-row quad
// kernels they replace on the same MUL_MAT (k = 4096, m = 1024, n = 512,
// two threads), so old and new run under the same machine load. GFLOP/s
// counts 2k per output.
func BenchmarkQTile(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	k, m := int64(4096), int64(1024)
	var wt0 quant.Type
	if qBenchBig {
		k, m = 14336, 4096
	}
	be, err := NewWithOptions(Options{Threads: 2, Tier: avx2Kernels.name})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	rng := rand.New(rand.NewPCG(65, 66))
	for _, sh := range qBenchShapes(wt0) {
		wt, n := sh.wt, sh.n
		a := mxLeaf(b, be, rng, "a", wt, k, m)
		x := mxLeaf(b, be, rng, "x", quant.F32, k, n)
		node, err := ops.MulMat(a, x)
		if err != nil {
			b.Fatal(err)
		}
		mxAlloc(b, be, node, 0)
		g := avx2Kernels.gemm[wt]
		tile := g.qtile
		for _, kc := range []int64{0, 1 << 30, 32} {
			name := "quad"
			if kc > 0 {
				name = fmt.Sprintf("tile/kc=%d", min(kc, k/quant.QK))
			}
			b.Run(fmt.Sprintf("%v/n=%d/%s", wt, n, name), func(b *testing.B) {
				if kc == 0 {
					g.qtile = nil
					defer func() { g.qtile = tile }()
				}
				defer func(old int64) { qTileKC = old }(qTileKC)
				qTileKC = kc
				cpu0 := processCPUSeconds()
				for b.Loop() {
					if err := be.Compute(node); err != nil {
						b.Fatal(err)
					}
				}
				flops := float64(2 * k * m * n)
				_ = wt0
				reportCPU(b, flops, processCPUSeconds()-cpu0)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkQTileKernel measures the panel kernels alone on one panel and
// one packed group of nb blocks (nb = 32: both in L1; nb = 448, k =
// 14336: in L2). GFLOP/s counts 2k per output, 32 outputs per call.
func BenchmarkQTileKernel(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	rng := rand.New(rand.NewPCG(67, 68))
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q5_0, quant.Q4_1, quant.Q5_1} {
		for _, nb := range []int{32, 448} {
			tile := avx2Kernels.gemm[wt].qtile
			_, panel, grp := qTileInputs(rng, wt, tile, nb, true)
			b.Run(fmt.Sprintf("%v/k=%d", wt, nb*quant.QK), func(b *testing.B) {
				var out [32]float32
				cpu0 := processCPUSeconds()
				for b.Loop() {
					tile.kernel(nb, panel, grp, &out)
				}
				flops := 2 * float64(nb*quant.QK) * 32
				reportCPU(b, flops, processCPUSeconds()-cpu0)
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
		tile := avx2Kernels.gemm[wt].qtile
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

// avx2QTiles returns the avx2 tier's panel kernels by weight type.
func avx2QTiles() map[quant.Type]*qTile {
	m := map[quant.Type]*qTile{}
	for wt, g := range avx2Kernels.gemm {
		if g.qtile != nil {
			m[wt] = g.qtile
		}
	}
	return m
}
