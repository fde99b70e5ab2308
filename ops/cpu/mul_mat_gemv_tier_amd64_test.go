//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// gemvK lists the K-format four-row kernels, wrapped as gemvFuncs.
var gemvK = []struct {
	wt  quant.Type
	new gemvFunc
}{
	{quant.Q2_K, gemv.Q2_KAVX2},
	{quant.Q3_K, gemv.Q3_KAVX2},
	{quant.Q4_K, gemv.Q4_KAVX2},
	{quant.Q5_K, gemv.Q5_KAVX2},
	{quant.Q6_K, gemv.Q6_KAVX2},
}

// TestGemvKTwins checks the K-format four-row kernels row by row
// against the generic dot product and the AVX2 one, bit for bit, over
// random lengths, row strides, offsets and contents (NaN, Inf and
// denormal scales included).
func TestGemvKTwins(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(49, 50))
	for _, c := range gemvK {
		dot := avx2Kernels.dots[c.wt].dot
		for trial := range 150 {
			nb := rng.IntN(10)
			n := nb * quant.QKK
			rowBytes := mustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + rng.IntN(60)
			special := []float64{0, 0.01, 0.3}[trial%3]
			x := gemvRows(rng, c.wt, nb, ldx, rng.IntN(64), special, nil)
			y := simdRow(rng, quant.Q8_K, n, rng.IntN(64), special)
			var got [4]float32
			c.new(nb, x, ldx, y, nil, &got)
			for r := range 4 {
				want := dotKernels[c.wt].dot(n, x[r*ldx:], y)
				if d := dot(n, x[r*ldx:], y); !sameFloat(got[r], want) || !sameFloat(got[r], d) {
					t.Fatalf("%v nb=%d ldx=%d row %d: asm %g (%#x), generic %g (%#x), avx2 dot %g", c.wt, nb, ldx, r,
						got[r], math.Float32bits(got[r]), want, math.Float32bits(want), d)
				}
			}
		}
	}
}

// FuzzGemvK is the fuzzing form of TestGemvKTwins: the fuzzer picks the
// kernel, the length, the row gap, the offsets and the bytes.
func FuzzGemvK(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	f.Add(uint8(0), uint8(2), uint8(3), uint8(1), uint8(5), []byte{9, 8, 7, 250, 3})
	f.Add(uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, kind, blocks, gap, xoff, yoff uint8, data []byte) {
		c := gemvK[int(kind)%len(gemvK)]
		nb := int(blocks) % 6
		n := nb * quant.QKK
		rowBytes, _ := c.wt.RowSize(int64(n))
		ldx := int(rowBytes) + int(gap)
		var xd []byte
		if len(data) > 0 {
			xd = data
		}
		x := gemvRows(rand.New(rand.NewPCG(uint64(len(data)), 5)), c.wt, nb, ldx, int(xoff%64), 0, xd)
		y := fillRow(quant.Q8_K, n, int(yoff%64), data[len(data)/2:])
		var got [4]float32
		c.new(nb, x, ldx, y, nil, &got)
		for r := range 4 {
			if want := dotKernels[c.wt].dot(n, x[r*ldx:], y); !sameFloat(got[r], want) {
				t.Fatalf("%v nb=%d row %d: asm %g, generic %g", c.wt, nb, r, got[r], want)
			}
		}
	})
}

// TestGemvNoAllocs checks that MUL_MAT with one to three activation
// rows allocates nothing on the four-row paths the second generation
// added or changed (f32, bf16, q5_0, q4_1, q5_1, q2_K, q3_K, q5_K and q6_K
// had none before).
func TestGemvNoAllocs(t *testing.T) {
	needAVX2(t)
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(53, 54))
	for _, wt := range []quant.Type{quant.F32, quant.BF16, quant.F16, quant.Q4_0, quant.Q5_0, quant.Q4_1, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		if b.kern.gemv[wt] == nil {
			t.Errorf("%v: no four-row kernel installed", wt)
		}
		for n := int64(1); n < 4; n++ {
			a := mxLeaf(t, b, rng, "a", wt, 512, 66)
			x := mxLeaf(t, b, rng, "x", quant.F32, 512, n)
			node := mustNode(t)(ops.MulMat(a, x))
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatalf("%v n=%d: %v", wt, n, err)
			}
			if allocs := testing.AllocsPerRun(10, func() {
				if err := b.Compute(node); err != nil {
					t.Fatalf("%v n=%d: %v", wt, n, err)
				}
			}); allocs != 0 {
				t.Errorf("%v n=%d: %v allocations per Compute", wt, n, allocs)
			}
		}
	}
}

// gemvVariants gives, per weight type, the ways MUL_MAT with one
// activation row can run that the benchmarks compare: "dot" (nil: the
// dot product row by row) and "new" (the four-row kernel).
func gemvVariants() []gemvMatrixCase {
	var cs []gemvMatrixCase
	for _, c := range avx2Gemv {
		cs = append(cs, gemvMatrixCase{c.wt, []string{"dot", "new"}, []gemvFunc{nil, c.asm}})
	}
	// The third generation joins its type's case as "side".
	for wt := range avx2Kernels.gemvSide {
		for i := range cs {
			if cs[i].wt == wt {
				cs[i].names = append(cs[i].names, "side")
				cs[i].f = append(cs[i].f, gemvSided(wt))
			}
		}
	}
	return cs
}

// BenchmarkGemvMulMat measures MUL_MAT m = 4096, k = 4096 and 14336 with
// one activation row on the avx2 tier with each variant of a type's
// four-row kernel (gemvVariants), alternating pass by pass, and reports each
// variant's fastest and median pass (ms-min, ms-med): on a shared
// machine the minimum is the least disturbed estimate. -cpu sets the
// threads. It swaps the tier's kernel for each pass and restores it.
func BenchmarkGemvMulMat(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	const m, n = 4096, 1
	for _, k := range []int64{4096, 14336} {
		for _, c := range gemvVariants() {
			gemvBenchMulMat(b, c, m, n, k)
		}
	}
}

// gemvBenchMulMat runs BenchmarkGemvMulMat's passes for one weight
// type and shape.
func gemvBenchMulMat(b *testing.B, c gemvMatrixCase, m, n, k int64) {
	wt, v := c.wt, c.f
	b.Run(fmt.Sprintf("%v/k%d", wt, k), func(b *testing.B) {
		saved, had := avx2Kernels.gemv[wt]
		side, hadSide := avx2Kernels.gemvSide[wt]
		defer func() {
			if had {
				avx2Kernels.gemv[wt] = saved
			} else {
				delete(avx2Kernels.gemv, wt)
			}
			if hadSide {
				avx2Kernels.gemvSide[wt] = side
			}
		}()
		be, err := NewWithOptions(Options{Tier: "avx2"})
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
		mxAlloc(b, be, node, 0)
		times := make([][]float64, len(v))
		for b.Loop() {
			for i, f := range v {
				// The side kernel runs as MUL_MAT runs it,
				// with its data prepared per call.
				delete(avx2Kernels.gemvSide, wt)
				switch {
				case c.names[i] == "side":
					avx2Kernels.gemvSide[wt] = side
				case f == nil:
					delete(avx2Kernels.gemv, wt)
				default:
					avx2Kernels.gemv[wt] = f
				}
				t0 := time.Now()
				if err := be.Compute(node); err != nil {
					b.Fatal(err)
				}
				times[i] = append(times[i], time.Since(t0).Seconds()*1e3)
			}
		}
		for i, ts := range times {
			slices.Sort(ts)
			b.ReportMetric(ts[0], c.names[i]+"-ms-min")
			b.ReportMetric(ts[len(ts)/2], c.names[i]+"-ms-med")
		}
	})
}

// BenchmarkGemvMatrix runs four-row kernels over all rows of a 4096 x
// 4096 weight matrix (larger than L2, within L3), one thread, as MUL_MAT
// with n = 1 does per worker but without the pool: it shows how the
// kernels cope with rows streaming from L3 (L3 passes) or not at all (L1
// passes: the same four rows again and again). The variants of a type
// alternate pass by pass and each reports its fastest and median pass
// (ms-min, ms-med): on a shared machine the minimum is the least
// disturbed estimate.
func BenchmarkGemvMatrix(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	const m, k = 4096, 4096
	rng := rand.New(rand.NewPCG(47, 48))
	for _, c := range gemvVariants() {
		run := int(gemvRun(c.wt))
		nb := k / run
		rowBytes, _ := c.wt.RowSize(k)
		ldx := int(rowBytes)
		x := alignedBytes(int64(m * ldx))
		for r := range 16 {
			if err := quant.QuantizeRow(c.wt, mxRandom(rng, k), x[r*ldx:(r+1)*ldx]); err != nil {
				b.Fatal(err)
			}
		}
		for r := 16; r < m; r++ {
			copy(x[r*ldx:(r+1)*ldx], x[(r%16)*ldx:])
		}
		act := c.wt.VecDotType()
		ysize, _ := act.RowSize(k)
		y := alignedBytes(ysize)
		if err := avx2Kernels.convertRow(act, mxRandom(rng, k), y); err != nil {
			b.Fatal(err)
		}
		var dy []float32
		if act == quant.Q8_0 {
			dy = make([]float32, nb)
			for i := range dy {
				dy[i] = simd.HalfAt(y, i*simd.BytesQ8_0)
			}
		}
		for _, where := range []string{"L3", "L1"} {
			// rowMask keeps the rows of L1 passes among the first four.
			rowMask := m - 1
			if where == "L1" {
				rowMask = 3
			}
			b.Run(c.wt.String()+"/"+where, func(b *testing.B) {
				var out [4]float32
				times := make([][]float64, len(c.f))
				for b.Loop() {
					for v, f := range c.f {
						t0 := time.Now()
						if f == nil {
							dot := avx2Kernels.dots[c.wt].dot
							for i := range m {
								out[i%4] = dot(k, x[(i&rowMask)*ldx:], y)
							}
						} else {
							for i := 0; i < m; i += 4 {
								f(nb, x[(i&rowMask)*ldx:], ldx, y, dy, &out)
							}
						}
						times[v] = append(times[v], time.Since(t0).Seconds()*1e3)
					}
				}
				for v, ts := range times {
					slices.Sort(ts)
					b.ReportMetric(ts[0], c.names[v]+"-ms-min")
					b.ReportMetric(ts[len(ts)/2], c.names[v]+"-ms-med")
				}
			})
		}
	}
}

// gemvMatrixCase is one weight type's variants for BenchmarkGemvMatrix
// (a nil kernel: the dot product row by row).
type gemvMatrixCase struct {
	wt    quant.Type
	names []string
	f     []gemvFunc
}

// BenchmarkGemvThreads measures MUL_MAT with one activation row on the
// avx2 tier with one and with two worker threads (with and without home
// parts: gemvHomeRows), passes alternating, for
// m = 4096 (k = 4096: the weights fit in L3) and m = 64 (the call's fixed
// cost: activation conversion, pool wake-up), reporting each thread
// count's fastest and median pass.
func BenchmarkGemvThreads(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q8_0, quant.Q6_K} {
		for _, m := range []int64{4096, 64} {
			const k = 4096
			b.Run(fmt.Sprintf("%v/m%d", wt, m), func(b *testing.B) {
				var nodes []*ops.Tensor
				var bes []*Backend
				for _, th := range []int{1, 2} {
					be, err := NewWithOptions(Options{Tier: "avx2", Threads: th})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(1, 1))
					a := benchLeaf(b, be, rng, wt, k, m)
					x := benchLeaf(b, be, rng, quant.F32, k, 1)
					node, err := ops.MulMat(a, x)
					if err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, node, 0)
					nodes, bes = append(nodes, node), append(bes, be)
				}
				// Passes: one thread, two threads with home parts, two
				// threads sharing the pool's counter (gemvHomeRows off).
				names := []string{"t1", "t2", "t2shared"}
				times := make([][]float64, len(names))
				defer func(on bool) { gemvHomeRows = on }(gemvHomeRows)
				for b.Loop() {
					for i := range names {
						be, node := bes[min(i, 1)], nodes[min(i, 1)]
						gemvHomeRows = i == 1
						t0 := time.Now()
						if err := be.Compute(node); err != nil {
							b.Fatal(err)
						}
						times[i] = append(times[i], time.Since(t0).Seconds()*1e6)
					}
				}
				for i, ts := range times {
					slices.Sort(ts)
					b.ReportMetric(ts[0], names[i]+"-us-min")
					b.ReportMetric(ts[len(ts)/2], names[i]+"-us-med")
				}
			})
		}
	}
}

// gemvSided returns the avx2 side kernel of wt as a plain gemvFunc for
// the benchmarks: it prepares the side data of y on its first call and
// reuses it while y stays the same row (the benchmarks pass one).
func gemvSided(wt quant.Type) gemvFunc {
	sk := avx2Kernels.gemvSide[wt]
	var side []float32
	var last *byte
	return func(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
		if last != &y[0] || len(side) != nb*sk.per {
			side = make([]float32, nb*sk.per)
			sk.prep(y, nb, side)
			last = &y[0]
		}
		sk.f(nb, x, ldx, y, side, out)
	}
}

// TestGemvSideMulMat checks that MUL_MAT with one to three activation rows
// runs the avx2 side kernels with the right side data for every
// activation row (and batch): each output of a whole group of four
// weight rows equals the kernel's twin applied to the weight row and the
// q8_0 activation row, bit for bit, and the rows left over (m % 4) equal
// the dot product. With one batch it alternates between the pool's
// counter and home parts (gemvHomeRows).
func TestGemvSideMulMat(t *testing.T) {
	needAVX2(t)
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(63, 64))
	for _, c := range []struct {
		wt   quant.Type
		twin vecDotFunc
	}{{quant.Q4_0, gemv.SideQ4_0Twin}} {
		if avx2Kernels.gemvSide[c.wt] == nil {
			t.Fatalf("%v: no side kernel installed", c.wt)
		}
		// 66 rows: tiles of 16 rows (see tileSizes, homeRowTiles) and
		// two left; one batch takes the home parts, two the pool's
		// counter.
		const m, k = 66, 7 * quant.QK
		defer func(on bool) { gemvHomeRows = on }(gemvHomeRows)
		for b2, n := int64(1), int64(1); n < 4 || b2 < 2; n++ {
			if n == 4 {
				b2, n = 2, 1
			}
			gemvHomeRows = n%2 == 1 // home parts with one batch, n = 1 and 3
			a := mxLeaf(t, b, rng, "a", c.wt, k, m)
			x := mxLeaf(t, b, rng, "x", quant.F32, k, n, b2)
			node := mustNode(t)(ops.MulMat(a, x))
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			araw, _ := a.HostBytes()
			xraw, _ := x.HostBytes()
			oraw, _ := node.HostBytes()
			out := f32s(oraw, 0, node.NumElements())
			ybytes := mustRowSize(t, quant.Q8_0, k)
			y := make([]byte, ybytes)
			for i2 := range b2 {
				for col := range n {
					if err := avx2Kernels.convertRow(quant.Q8_0, f32s(xraw, at(x, 0, col, i2, 0), k), y); err != nil {
						t.Fatal(err)
					}
					for i := range int64(m) {
						w := araw[at(a, 0, i, 0, 0):]
						want := c.twin(k, w, y)
						if i >= m/4*4 {
							want = avx2Kernels.dots[c.wt].dot(k, w, y)
						}
						if got := out[i+m*(col+n*i2)]; !sameFloat(got, want) {
							t.Errorf("%v n=%d batch %d: out[%d, %d] = %g, want %g", c.wt, n, i2, i, col, got, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkGemvSideMulMatID measures MUL_MAT_ID with one token (128 experts
// of 768 x 2048 q4_0 weights, 8 used) on the avx2 tier with the side
// kernel ("side") and without it ("gemv": the tier's gemv kernel), passes
// alternating, reporting each one's fastest and median pass. -cpu sets
// the threads.
func BenchmarkGemvSideMulMatID(b *testing.B) {
	if !hasAVX2() {
		b.Skip("CPU lacks AVX2/FMA/F16C")
	}
	const k, m, nExpert, nUsed = 2048, 768, 128, 8
	wt := quant.Q4_0
	side := avx2Kernels.gemvSide[wt]
	defer func() { avx2Kernels.gemvSide[wt] = side }()
	be, err := NewWithOptions(Options{Tier: "avx2"})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	w, err := ops.NewTensor("experts", wt, k, m, nExpert)
	if err != nil {
		b.Fatal(err)
	}
	mxAlloc(b, be, w, 0)
	raw, _ := w.HostBytes()
	rowBytes, _ := wt.RowSize(k)
	for r := range int64(16) {
		if err := quant.QuantizeRow(wt, mxRandom(rng, k), raw[r*rowBytes:(r+1)*rowBytes]); err != nil {
			b.Fatal(err)
		}
	}
	for r := int64(16); r < m*nExpert; r++ {
		copy(raw[r*rowBytes:(r+1)*rowBytes], raw[(r%16)*rowBytes:])
	}
	x := benchLeaf(b, be, rng, quant.F32, k, 1)
	vals := make([]int32, nUsed)
	for i := range vals {
		vals[i] = int32((i*37 + 11) % nExpert)
	}
	ids := mxIDs(b, be, "ids", vals, nUsed, 1)
	node, err := ops.MulMatID(w, x, ids)
	if err != nil {
		b.Fatal(err)
	}
	mxAlloc(b, be, node, 0)
	names := []string{"gemv", "side"}
	times := make([][]float64, 2)
	for b.Loop() {
		for i := range names {
			if i == 0 {
				delete(avx2Kernels.gemvSide, wt)
			} else {
				avx2Kernels.gemvSide[wt] = side
			}
			t0 := time.Now()
			if err := be.Compute(node); err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], time.Since(t0).Seconds()*1e6)
		}
	}
	for i, ts := range times {
		slices.Sort(ts)
		b.ReportMetric(ts[0], names[i]+"-us-min")
		b.ReportMetric(ts[len(ts)/2], names[i]+"-us-med")
	}
}
