//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

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
