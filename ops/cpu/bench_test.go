package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// Kernel-level benchmarks, one sub-benchmark per tier the host supports.
// Compare tiers as ratios taken in the same run: the machine is shared and
// absolute timings are noisy. Threads follow GOMAXPROCS (-cpu 1,2).
//
// Besides wall-clock GFLOP/s, the MUL_MAT benchmarks report cpu-GFLOP/s:
// the FLOPs over the CPU time the process used (all threads together).
// With one thread it is the speed while the thread ran, which other
// processes competing for the cores disturb much less than wall-clock
// time; with several it measures efficiency, not parallel speedup.

// reportCPU is simdtest.ReportCPU.
func reportCPU(b *testing.B, flops, cpu float64) { simdtest.ReportCPU(b, flops, cpu) }

// processCPUSeconds is simdtest.ProcessCPUSeconds.
func processCPUSeconds() float64 { return simdtest.ProcessCPUSeconds() }

// benchCompute allocates node on be, computes it once (warm-up), then
// times b.N computations, reporting GFLOP/s of wall time and of process
// CPU time for flops per op.
func benchCompute(b *testing.B, be *Backend, node *ops.Tensor, flops float64) {
	b.Helper()
	mxAlloc(b, be, node, 0)
	if err := be.Compute(node); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPUSeconds()
	for b.Loop() {
		if err := be.Compute(node); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, flops, processCPUSeconds()-cpu0)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// benchTypes are the weight types the benchmarks cover.
var benchTypes = []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K}

// benchTiers returns the supported tiers' kernel sets.
func benchTiers() []*kernelSet { return kernelSets() }

// vecDotTypes are the weight types BenchmarkVecDot covers: benchTypes
// and the formats whose dot products have AVX2 kernels but no tiled
// MUL_MAT path yet.
var vecDotTypes = append(benchTypes[:len(benchTypes):len(benchTypes)],
	quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4, quant.TQ1_0, quant.TQ2_0, quant.IQ2_XXS,
	quant.IQ3_XXS, quant.IQ3_S, quant.IQ2_XS, quant.IQ2_S, quant.IQ1_S, quant.IQ1_M)

// BenchmarkVecDot measures one dot product of k = 4096 elements: a weight
// row of each type against an activation row of its vec-dot type, both in
// cache. GFLOP/s counts 2k per dot; bytes are both rows.
func BenchmarkVecDot(b *testing.B) {
	const k = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	for _, wt := range vecDotTypes {
		x := vdRandomRow(b, rng, wt, k)
		for _, ks := range benchTiers() {
			kern, err := ks.dot(wt)
			if err != nil {
				b.Fatal(err)
			}
			ysize, _ := kern.actType.RowSize(k)
			y := alignedBytes(ysize)
			if err := ks.convertRow(kern.actType, mxRandom(rng, k), y); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%v/%s", wt, ks.name), func(b *testing.B) {
				b.SetBytes(int64(len(x)) + ysize)
				var s float32
				cpu0 := processCPUSeconds()
				for b.Loop() {
					s += kern.dot(k, x, y)
				}
				reportCPU(b, 2*k, processCPUSeconds()-cpu0)
				b.ReportMetric(2*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				benchSink = s
			})
		}
	}
}

var benchSink float32

// benchShapes are the MUL_MAT shapes: m weight rows of k elements times n
// activation rows; k = 14336, m = 4096 is Llama-3-8B's ffn_down.
var benchShapes = []struct{ m, n, k int64 }{
	{4096, 1, 4096}, {4096, 512, 4096}, {4096, 1, 14336}, {4096, 512, 14336},
}

// BenchmarkMulMat measures whole MUL_MAT nodes through Compute, f32
// activations, the same weights reused every run (so they may stay in
// cache, as in ggml's op benchmark). GFLOP/s counts 2*m*n*k; bytes are the
// weights.
func BenchmarkMulMat(b *testing.B) {
	for _, wt := range benchTypes {
		for _, s := range benchShapes {
			for _, ks := range benchTiers() {
				name := fmt.Sprintf("%v/m%d_n%d_k%d/%s", wt, s.m, s.n, s.k, ks.name)
				b.Run(name, func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(1, 1))
					a := benchLeaf(b, be, rng, wt, s.k, s.m)
					x := benchLeaf(b, be, rng, quant.F32, s.k, s.n)
					node, err := ops.MulMat(a, x)
					if err != nil {
						b.Fatal(err)
					}
					wbytes, _ := wt.RowSize(s.k)
					b.SetBytes(wbytes * s.m)
					benchCompute(b, be, node, float64(2*s.m*s.n*s.k))
				})
			}
		}
	}
}

// deqBenchTypes are the new block formats BenchmarkMulMatDeq covers, one
// of each family: E8M0 scales, a non-linear table, ternary codes, a
// codebook.
var deqBenchTypes = []quant.Type{quant.MXFP4, quant.IQ4_XS, quant.TQ2_0, quant.IQ2_XXS}

// BenchmarkMulMatDeq measures MUL_MAT of the new block formats at m = k
// = 4096 through Compute, as BenchmarkMulMat does: n = 512 takes the
// packed float path with decoded weights (gemmDeq), n = 1 the dot
// product.
func BenchmarkMulMatDeq(b *testing.B) {
	for _, wt := range deqBenchTypes {
		for _, n := range []int64{1, 512} {
			for _, ks := range benchTiers() {
				const m, k = 4096, 4096
				b.Run(fmt.Sprintf("%v/m%d_n%d_k%d/%s", wt, m, n, k, ks.name), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(1, 1))
					a := benchLeaf(b, be, rng, wt, k, m)
					x := benchLeaf(b, be, rng, quant.F32, k, n)
					node, err := ops.MulMat(a, x)
					if err != nil {
						b.Fatal(err)
					}
					wbytes, _ := wt.RowSize(k)
					b.SetBytes(wbytes * m)
					benchCompute(b, be, node, float64(2*m*n*k))
				})
			}
		}
	}
}

// benchLeaf returns an allocated [ne0, ne1] leaf of type typ with random
// contents, quantized row by row (fast enough for large weights).
func benchLeaf(b *testing.B, be *Backend, rng *rand.Rand, typ quant.Type, ne0, ne1 int64) *ops.Tensor {
	b.Helper()
	x, err := ops.NewTensor("w", typ, ne0, ne1)
	if err != nil {
		b.Fatal(err)
	}
	mxAlloc(b, be, x, 0)
	raw, err := x.HostBytes()
	if err != nil {
		b.Fatal(err)
	}
	rowBytes, _ := typ.RowSize(ne0)
	// Quantize a few distinct rows and repeat them: quantizing 4096 K
	// rows one by one takes seconds.
	const distinct = 16
	rows := make([][]byte, distinct)
	for i := range rows {
		rows[i] = make([]byte, rowBytes)
		if !quant.CanQuantize(typ) {
			// The codebook types without a quantizer: random valid
			// blocks.
			if err := quant.RandomBlocks(typ, rows[i], rng.Uint64()); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err := quant.QuantizeRow(typ, mxRandom(rng, ne0), rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	for r := range ne1 {
		copy(raw[r*rowBytes:], rows[(r*7+r/distinct)%distinct])
	}
	return x
}

// BenchmarkGemmTile measures the tiled kernels on cache-resident panels
// of k = 1024: the 4x3 float tile and the 1x4 quantized quads. GFLOP/s
// counts 2k per output.
func BenchmarkGemmTile(b *testing.B) {
	const k = 1024
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ks := range benchTiers() {
		for _, wt := range benchTypes {
			g := ks.gemm[wt]
			if g == nil {
				continue
			}
			b.Run(fmt.Sprintf("%v/%s", wt, ks.name), func(b *testing.B) {
				var outputs int
				var run func()
				switch g.kind {
				case gemmFloat:
					a, bb := mxRandom(rng, 4*k), mxRandom(rng, 3*k)
					c := make([]float32, 12)
					run = func() { g.tile(k, a, k, bb, k, c, 4) }
					outputs = 12
				case gemmQ8Quad, gemmKQuad:
					x := vdRandomRow(b, rng, wt, k)
					ysize, _ := wt.VecDotType().RowSize(k)
					y := alignedBytes(max(4*ysize, int64(k/32*dot.PackQ8Block)))
					for c := range 4 {
						if err := ks.convertRow(wt.VecDotType(), mxRandom(rng, k), y[int64(c)*ysize:int64(c+1)*ysize]); err != nil {
							b.Fatal(err)
						}
					}
					var o [4]float32
					nb := k / int(wt.BlockSize())
					run = func() { g.quad(nb, x, y, int(ysize), &o) }
					if g.kind == gemmQ8Quad {
						// A packed group: sane float32 scales, random codes.
						p := alignedBytes(int64(nb * dot.PackQ8Block))
						for i := range p {
							p[i] = byte(rng.Uint32())
						}
						for blk := range nb {
							copy(f32s(p, int64(blk*dot.PackQ8Block), 4), []float32{0.01, 0.02, 0.03, 0.04})
						}
						run = func() { g.quad(nb, x, p, 0, &o) }
					}
					outputs = 4
				}
				cpu0 := processCPUSeconds()
				for b.Loop() {
					run()
				}
				reportCPU(b, 2*k*float64(outputs), processCPUSeconds()-cpu0)
				b.ReportMetric(2*k*float64(outputs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkCpy measures the copies of a decoded Mamba token (d_inner
// 1536, d_conv 4, d_state 16): the conv state into the rows' first three
// columns of a [4, 1536] scratch, the new input into its last column, and
// the 96 KiB scan state back into the cache; and a K cache row write
// (f32 to f16, 4096 elements). Bytes are the destination's.
func BenchmarkCpy(b *testing.B) {
	cases := []struct {
		name     string
		from, to quant.Type
		srcNe    []int64
		// dstRow, dstCols: the destination is columns [dstFirst,
		// dstFirst+srcNe[0]) of a [dstRow, srcNe[1]] leaf; dstRow 0 is a
		// leaf of the source's shape.
		dstRow, dstFirst int64
	}{
		{"conv-state-load", quant.F32, quant.F32, []int64{3, 1536}, 4, 0},
		{"conv-input-store", quant.F32, quant.F32, []int64{1, 1536}, 4, 3},
		{"scan-state-store", quant.F32, quant.F32, []int64{24576}, 0, 0},
		{"k-cache-row", quant.F32, quant.F16, []int64{4096, 1}, 0, 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			be, err := NewWithOptions(Options{Threads: 2})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			src := benchLeaf(b, be, rng, c.from, c.srcNe[0], ne1(c.srcNe))
			var dst *ops.Tensor
			if c.dstRow == 0 {
				dst = benchLeaf(b, be, rng, c.to, c.srcNe[0], ne1(c.srcNe))
			} else {
				base := benchLeaf(b, be, rng, c.to, c.dstRow, c.srcNe[1])
				if dst, err = ops.View(base, []int64{c.srcNe[0], c.srcNe[1]}, []int64{base.Nb[0], base.Nb[1]}, c.dstFirst*base.Nb[0]); err != nil {
					b.Fatal(err)
				}
			}
			node, err := ops.Cpy(src, dst)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(dst.NumElements() * int64(c.to.TypeSize()))
			benchCompute(b, be, node, 0)
		})
	}
}

// ne1 is a shape's second dimension, 1 when it has one.
func ne1(ne []int64) int64 {
	if len(ne) < 2 {
		return 1
	}
	return ne[1]
}

// BenchmarkMulMatX8 compares the matrix-vector product (n = 1, m = k =
// 4096) on weights in the plain layout (the four-row kernels) and on
// their x8 copy, per type with an x8 kernel, on the default tier:
// alternate the two with -count and take the ratio of medians.
func BenchmarkMulMatX8(b *testing.B) {
	const m, k = 4096, 4096
	for _, wt := range x8Types {
		for _, layout := range []string{"plain", "x8"} {
			b.Run(fmt.Sprintf("%v/%s", wt, layout), func(b *testing.B) {
				be, err := NewWithOptions(Options{NoRepack: layout == "plain"})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				if be.kern.x8[wt] == nil {
					b.Skipf("tier %s has no x8 kernel for %v", be.kern.name, wt)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				a := mxLeaf(b, be, rng, "w", wt, k, m)
				a.Buffer.(*ops.HostBuffer).MarkWeights()
				x := mxLeaf(b, be, rng, "x", quant.F32, k, 1)
				node, err := ops.MulMat(a, x)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(a.Bytes())
				benchCompute(b, be, node, 2*m*k)
			})
		}
	}
}

// coldShapes are decode-sized products (one activation row) of the
// issue-25 models: gpt-oss-100m's attention and output matrices and
// 100m's feed-forward.
var coldShapes = []struct{ m, k int64 }{{768, 768}, {256, 768}, {2048, 768}, {768, 2048}, {32000, 768}}

// BenchmarkMulMatCold measures one-row MUL_MAT nodes whose weights come
// from DRAM, as in decoding: it cycles through enough distinct weight
// tensors (at least 128 MiB together, four times a 32 MiB L3) that none is
// in cache when read again. Bytes are one weight tensor's, so MB/s is the
// weight stream's bandwidth including each node's start-up and hand-off
// costs, which small matrices expose.
func BenchmarkMulMatCold(b *testing.B) {
	const total = 128 << 20
	for _, wt := range []quant.Type{quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		for _, s := range coldShapes {
			name := fmt.Sprintf("%v/m%d_k%d", wt, s.m, s.k)
			b.Run(name, func(b *testing.B) {
				be, err := NewWithOptions(Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				rowBytes, err := wt.RowSize(s.k)
				if err != nil {
					b.Skip(err)
				}
				copies := max(2, total/(rowBytes*s.m))
				rng := rand.New(rand.NewPCG(1, 3))
				x := benchLeaf(b, be, rng, quant.F32, s.k, 1)
				nodes := make([]*ops.Tensor, copies)
				for i := range nodes {
					a := benchLeaf(b, be, rng, wt, s.k, s.m)
					a.Buffer.(*ops.HostBuffer).MarkWeights()
					if nodes[i], err = ops.MulMat(a, x); err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, nodes[i], 0)
					if err := be.Compute(nodes[i]); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(rowBytes * s.m)
				benchRotate(b, be, nodes)
			})
		}
	}
}

// BenchmarkMulBroadcast measures MUL of [768, 2, 512] by one value per
// row ([1, 2, 512]: a MoE layer weighting its two experts' outputs for a
// 512-token batch).
func BenchmarkMulBroadcast(b *testing.B) {
	be, err := NewWithOptions(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	rng := rand.New(rand.NewPCG(1, 4))
	x := benchLeaf(b, be, rng, quant.F32, 768, 2*512)
	w := benchLeaf(b, be, rng, quant.F32, 1, 2*512)
	node, err := ops.Mul(x, w)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * 4 * 768 * 2 * 512)
	benchCompute(b, be, node, 768*2*512)
}

// benchRotate times Compute of nodes in turn, one per iteration, so that
// each finds its weights where the previous ones left the caches.
func benchRotate(b *testing.B, be *Backend, nodes []*ops.Tensor) {
	b.Helper()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := be.Compute(nodes[i]); err != nil {
			b.Fatal(err)
		}
		i = (i + 1) % len(nodes)
	}
}

// BenchmarkSmallNode measures the fixed cost of computing a decode-sized
// node: ADD of two 768-float rows (a residual add of a 100M model's
// token), whose arithmetic takes tens of nanoseconds, so the time is
// the backend's per-node work (checks, dispatch).
func BenchmarkSmallNode(b *testing.B) {
	be, err := NewWithOptions(Options{Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	rng := rand.New(rand.NewPCG(1, 5))
	node, err := ops.Add(benchLeaf(b, be, rng, quant.F32, 768, 1), benchLeaf(b, be, rng, quant.F32, 768, 1))
	if err != nil {
		b.Fatal(err)
	}
	benchCompute(b, be, node, 768)
}

// BenchmarkEltLarge measures the elementwise ops at prefill sizes whose
// three streams outgrow the caches: ADD of [4096, 512] (24 MiB, about the
// L3) and MUL and SWIGLU of [14336, 512] (88 MiB), ggml-side's points.
func BenchmarkEltLarge(b *testing.B) {
	for _, c := range []struct {
		op   ops.Op
		k, n int64
	}{{ops.OpAdd, 4096, 512}, {ops.OpMul, 14336, 512}, {ops.OpSwiGLU, 14336, 512}} {
		b.Run(fmt.Sprintf("%v/k=%d,n=%d", c.op, c.k, c.n), func(b *testing.B) {
			be, err := NewWithOptions(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			rng := rand.New(rand.NewPCG(1, 5))
			x := benchLeaf(b, be, rng, quant.F32, c.k, c.n)
			y := benchLeaf(b, be, rng, quant.F32, c.k, c.n)
			var node *ops.Tensor
			switch c.op {
			case ops.OpAdd:
				node, err = ops.Add(x, y)
			case ops.OpMul:
				node, err = ops.Mul(x, y)
			default:
				node, err = ops.SwiGLU(x, y, false)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(3 * 4 * c.k * c.n)
			benchCompute(b, be, node, float64(c.k*c.n))
		})
	}
}
