package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// Helpers shared by the matrix kernel tests (prefixed mx to stay clear of
// other test files in the package).

// mxThreads are the thread counts every matrix kernel test runs with.
var mxThreads = []int{1, 3}

// mxEachBackend runs f once per supported tier and thread count with a
// fresh backend.
func mxEachBackend(t *testing.T, f func(t *testing.T, b *Backend)) {
	t.Helper()
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		for _, n := range mxThreads {
			t.Run(fmt.Sprintf("threads=%d", n), func(t *testing.T) {
				b, err := NewWithOptions(Options{Threads: n, Tier: ks.name})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				f(t, b)
			})
		}
	})
}

// mxAlloc gives t storage in b.
func mxAlloc(t testing.TB, b *Backend, x *ops.Tensor, pad int64) {
	t.Helper()
	if err := ops.AllocTensor(b, x, pad); err != nil {
		t.Fatalf("alloc %s: %v", x.Label(), err)
	}
}

// mxFill writes values (logical order, one row of x.Ne[0] at a time,
// following x's strides for rows) into x, encoding each row as x's type.
// x must have packed rows unless its type has block size 1.
func mxFill(t testing.TB, x *ops.Tensor, vals []float32) {
	t.Helper()
	raw, err := x.HostBytes()
	if err != nil {
		t.Fatal(err)
	}
	ne0 := x.Ne[0]
	rowBytes, err := x.Type.RowSize(ne0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, rowBytes)
	r := int64(0)
	for i3 := range x.Ne[3] {
		for i2 := range x.Ne[2] {
			for i1 := range x.Ne[1] {
				row := vals[r*ne0 : (r+1)*ne0]
				r++
				switch x.Type {
				case quant.I32:
					for i, v := range row {
						copy(buf[4*i:], i32Bytes(int32(v)))
					}
				default:
					if !quant.CanQuantize(x.Type) {
						// The codebook types decode only: random valid
						// blocks, seeded by the row and its first value.
						seed := uint64(r)<<32 ^ uint64(math.Float32bits(row[0]))
						if err := quant.RandomBlocks(x.Type, buf, seed); err != nil {
							t.Fatalf("fill %s: %v", x.Label(), err)
						}
						break
					}
					if err := quant.QuantizeRow(x.Type, row, buf); err != nil {
						t.Fatalf("fill %s: %v", x.Label(), err)
					}
				}
				off := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
				if x.Nb[0] == x.Type.TypeSize() {
					copy(raw[off:], buf)
					continue
				}
				es := x.Type.TypeSize()
				for i := range ne0 {
					copy(raw[off+i*x.Nb[0]:off+i*x.Nb[0]+es], buf[i*es:(i+1)*es])
				}
			}
		}
	}
}

func i32Bytes(v int32) []byte {
	u := uint32(v)
	return []byte{byte(u), byte(u >> 8), byte(u >> 16), byte(u >> 24)}
}

// mxRandom returns n values uniform in [-1, 1).
func mxRandom(rng *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*rng.Float32() - 1
	}
	return v
}

// mxLeaf returns an allocated leaf of type typ and shape ne filled with
// random values in [-1, 1).
func mxLeaf(t testing.TB, b *Backend, rng *rand.Rand, name string, typ quant.Type, ne ...int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	mxAlloc(t, b, x, 0)
	mxFill(t, x, mxRandom(rng, x.NumElements()))
	return x
}

// mxGuard is the number of sentinel bytes placed after every output.
const mxGuard = 64

// mxCompute allocates node with guard bytes, computes it on b and checks
// the guard bytes are untouched. It returns Compute's error.
func mxCompute(t testing.TB, b *Backend, node *ops.Tensor) error {
	t.Helper()
	mxAlloc(t, b, node, mxGuard)
	hb := node.Buffer.(*ops.HostBuffer).Bytes()
	guard := hb[len(hb)-mxGuard:]
	for i := range guard {
		guard[i] = 0xa5
	}
	if err := b.Compute(node); err != nil {
		return err
	}
	for i, g := range guard {
		if g != 0xa5 {
			t.Fatalf("%s: guard byte %d past the output was overwritten", node.Label(), i)
		}
	}
	return nil
}

// mxCheck computes node on b and compares it with the float64 reference:
// NMSE (sum of squared errors over sum of squares) must not exceed tol, and
// NaN/Inf must match. It returns the NMSE.
func mxCheck(t testing.TB, b *Backend, node *ops.Tensor, tol float64) float64 {
	t.Helper()
	got := mxOutputs(t, b, node)
	want, err := reference.Compute(node)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	e := mxNMSE(t, got, want)
	if e > tol {
		t.Errorf("%s: NMSE %.3g > %.3g", node.Label(), e, tol)
	}
	return e
}

// mxOutputs computes node on b (mxCompute) and returns its outputs.
func mxOutputs(t testing.TB, b *Backend, node *ops.Tensor) []float64 {
	t.Helper()
	if err := mxCompute(t, b, node); err != nil {
		t.Fatalf("compute: %v", err)
	}
	got, err := reference.Read(node)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// mxNMSE returns sum((got-want)^2) / sum(want^2), failing on NaN or Inf
// mismatches. An all-zero want compares the raw squared error.
func mxNMSE(t testing.TB, got, want []float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	var num, den float64
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(g) != math.IsNaN(w) || math.IsInf(g, 0) != math.IsInf(w, 0) {
			t.Fatalf("element %d: got %v, want %v", i, g, w)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			continue
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return num
	}
	return num / den
}

// mxWeightTypes are every weight type MUL_MAT accepts.
var mxWeightTypes = []quant.Type{
	quant.F32, quant.F16, quant.BF16,
	quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q8_1,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K,
	quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0, quant.MXFP4,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M,
}

// mxMatTol is the NMSE a matrix product with weights of type wt may have
// against the float64 reference, which reads the same (already quantized)
// weights but the exact activations. So the error is the rounding of the
// activations to the vec-dot type plus float32 accumulation:
//
//   - f32 weights, and q8_1/q8_K weights (dotted with f32 activations):
//     float32 products and sums only, NMSE ~1e-14; allow 1e-11.
//   - f16: activations rounded to f16 (relative error <= 2^-11, NMSE of a
//     sum of such terms ~ 2^-22/3 ~ 1e-7); allow 1e-6.
//   - bf16: rounding to bf16 (2^-8, NMSE ~ 2^-16/3 ~ 5e-6); allow 5e-5.
//   - q4_0..q5_1, q8_0, K types: activations quantized to 8 bits per block
//     (step amax/127, error variance step^2/12 against a variance of 1/3
//     for uniform data, NMSE ~ 1.5e-5), plus the f16 rounding of the q8_1 s
//     term; allow 2e-4.
func mxMatTol(wt quant.Type) float64 {
	switch wt.VecDotType() {
	case quant.F32:
		return 1e-11
	case quant.F16:
		return 1e-6
	case quant.BF16:
		return 5e-5
	default:
		return 2e-4
	}
}

func TestMulMat(t *testing.T) {
	type shape struct {
		name   string
		blocks int64 // k in blocks of the weight type
		m, n   int64
		a2, a3 int64
		b2, b3 int64
		bType  quant.Type
		permB  bool // b is a transposed view (non-contiguous rows)
	}
	shapes := []shape{
		{name: "vec", blocks: 2, m: 37, n: 1, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F32},
		{name: "m1", blocks: 2, m: 1, n: 7, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F32},
		{name: "oneblock", blocks: 1, m: 5, n: 4, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F32},
		{name: "tiles", blocks: 2, m: 35, n: 19, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F32},
		{name: "broadcast", blocks: 1, m: 6, n: 3, a2: 2, a3: 1, b2: 6, b3: 2, bType: quant.F32},
		{name: "f16act", blocks: 2, m: 9, n: 5, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F16},
		{name: "bf16act", blocks: 1, m: 9, n: 5, a2: 1, a3: 1, b2: 2, b3: 1, bType: quant.BF16},
		{name: "permuted", blocks: 1, m: 7, n: 6, a2: 1, a3: 1, b2: 2, b3: 1, bType: quant.F32, permB: true},
		{name: "permuted-f16", blocks: 1, m: 4, n: 3, a2: 1, a3: 1, b2: 1, b3: 1, bType: quant.F16, permB: true},
	}
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, wt := range mxWeightTypes {
			for _, s := range shapes {
				t.Run(wt.String()+"/"+s.name, func(t *testing.T) {
					k := s.blocks * wt.BlockSize()
					a := mxLeaf(t, b, rng, "a", wt, k, s.m, s.a2, s.a3)
					var x *ops.Tensor
					if s.permB {
						// Store b as [n, k, b2, b3] and view it transposed.
						base := mxLeaf(t, b, rng, "bT", s.bType, s.n, k, s.b2, s.b3)
						v, err := ops.Transpose(base)
						if err != nil {
							t.Fatal(err)
						}
						x = v
					} else {
						x = mxLeaf(t, b, rng, "b", s.bType, k, s.n, s.b2, s.b3)
					}
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("nmse %.3g", mxCheck(t, b, node, mxMatTol(wt)))
				})
			}
		}
	})
}

// TestMulMatRowLength checks that rows that do not fill whole blocks are
// refused when the weights are built, before any kernel runs.
func TestMulMatRowLength(t *testing.T) {
	for _, wt := range mxWeightTypes {
		if wt.BlockSize() == 1 {
			continue
		}
		_, err := ops.NewTensor("a", wt, wt.BlockSize()+1, 4)
		if !errors.Is(err, quant.ErrRowLength) {
			t.Errorf("%v: NewTensor with a partial block: err = %v, want ErrRowLength", wt, err)
		}
	}
}

// TestMulMatEmpty checks that empty products compute nothing and succeed.
func TestMulMatEmpty(t *testing.T) {
	b := newTestBackend(t, 2)
	defer b.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	a := mxLeaf(t, b, rng, "a", quant.Q4_0, 32, 4)
	x := mxLeaf(t, b, rng, "b", quant.F32, 32, 0)
	node, err := ops.MulMat(a, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := mxCompute(t, b, node); err != nil {
		t.Fatal(err)
	}
}

// TestMulMatSupports checks that a node whose shape does not follow from
// its sources is refused, not computed out of bounds.
func TestMulMatSupports(t *testing.T) {
	b := newTestBackend(t, 1)
	defer b.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	a := mxLeaf(t, b, rng, "a", quant.F32, 8, 4)
	x := mxLeaf(t, b, rng, "b", quant.F32, 8, 3)
	node, err := ops.MulMat(a, x)
	if err != nil {
		t.Fatal(err)
	}
	node.Ne[0] = 9
	node.Nb = ops.ContiguousStrides(node.Type, node.Ne)
	if err := b.Supports(node); err == nil {
		t.Error("Supports accepted a node of the wrong shape")
	}
	node.Src = node.Src[:1]
	if err := b.Supports(node); err == nil {
		t.Error("Supports accepted a node with one source")
	}
}

func TestTileSizes(t *testing.T) {
	for _, c := range []struct {
		m, n, batches int64
		threads       int
	}{
		{4096, 1, 1, 8}, {4096, 512, 1, 8}, {64, 512, 1, 16}, {3, 2, 1, 4}, {1, 1, 1, 1}, {16, 16, 32, 2},
	} {
		tm, tn := tileSizes(c.m, c.n, c.batches, c.threads)
		tiles := c.batches * ceilDiv(c.m, tm) * ceilDiv(c.n, tn)
		if tm < 1 || tn < 1 || tm > tileRows || tn > tileCols {
			t.Errorf("%+v: tile %dx%d out of range", c, tm, tn)
		}
		if c.n == 1 && tn != 1 {
			t.Errorf("%+v: matrix-vector tile has %d columns", c, tn)
		}
		if tiles < 4*int64(c.threads) && (tm > 1 || tn > 1) {
			t.Errorf("%+v: %d tiles of %dx%d for %d threads", c, tiles, tm, tn, c.threads)
		}
	}
}
