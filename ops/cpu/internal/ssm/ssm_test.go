package ssm

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
)

// TestSSMSoftplus checks SoftplusTwin against float64 log1p(exp(x))
// rounded to float32 (as Softplus computes it) over the range dt takes and
// beyond: within one float32 rounding step, and equal at the edges.
func TestSSMSoftplus(t *testing.T) {
	for x := float32(-110); x < 30; x += 0.00731 {
		got, want := SoftplusTwin(x), Softplus(x)
		if d := math.Abs(float64(got) - float64(want)); d > 1.2e-7*float64(want) {
			t.Fatalf("softplus(%v) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 20, 20.000002, -104, -1e30, 1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		if got, want := SoftplusTwin(x), Softplus(x); !simdtest.SameFloat(got, want) {
			t.Errorf("softplus(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestSSMExpMul checks ExpMulTwin against ExpMul (float64 exp of the
// float32 product, rounded to float32) over the products Mamba-2's dA
// takes (d·A from -110 to 0) and past them both ways: within one float32
// rounding step everywhere and equal almost everywhere (they differ only
// where e^v lies within the twin's 1e-14 of a rounding boundary), and
// equal at the edges: underflow to 0 and denormals, overflow to +Inf,
// infinities, zeros and NaN.
func TestSSMExpMul(t *testing.T) {
	n, differ := 0, 0
	for v := float32(-120); v < 95; v += 0.000731 {
		got, want := ExpMulTwin(v, 1), float32(math.Exp(float64(v)))
		n++
		if got != want {
			differ++
			if d := math.Abs(float64(got) - float64(want)); d > 1.2e-7*float64(want) && d > 1.5e-45 {
				t.Fatalf("e^%v = %v, want %v", v, got, want)
			}
		}
	}
	t.Logf("ExpMulTwin differs from ExpMul at %d of %d points", differ, n)
	if differ > n/100000 {
		t.Errorf("ExpMulTwin differs from ExpMul at %d of %d points, want at most %d", differ, n, n/100000)
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range [][2]float32{
		{0, 5}, {float32(math.Copysign(0, -1)), 1}, {1, 0}, {-1, 1}, {-104, 1}, {-103.9, 1}, {-87.5, 1}, {88.7, 1}, {88.73, 1},
		{89, 1}, {1e30, 1}, {-1e30, 1}, {1e30, 1e30}, {1e30, -1e30}, {inf, 1}, {inf, -1}, {inf, 0}, {nan, 1}, {1, nan},
	} {
		var want [1]float32
		ExpMul(want[:], c[:1], c[1:])
		if got := ExpMulTwin(c[0], c[1]); !simdtest.SameFloat(got, want[0]) {
			t.Errorf("e^(%v·%v) = %v, want %v", c[0], c[1], got, want[0])
		}
	}
}

// TestSSMScaleTile checks that the scaled scan of ScaleTile and
// ScanSTileTwin stays close to the plain recurrence of
// ScanSTok, including across rescaling tokens.
func TestSSMScaleTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const ds, nRows, nTok = 32, 3, 40
	init := make([]float32, nRows*ds)
	x, b, c := make([]float32, nTok*nRows), make([]float32, nTok*ds), make([]float32, nTok*ds)
	for _, v := range [][]float32{init, x, b, c} {
		for i := range v {
			v[i] = 2*rng.Float32() - 1
		}
	}
	ed := make([]float32, 2*nTok)
	for k := range nTok {
		ed[2*k], ed[2*k+1] = 0.2+0.8*rng.Float32(), rng.Float32()
		if k%9 == 4 {
			ed[2*k] = 1e-13 // forces a rescale within a few tokens
		}
	}
	ed4 := make([]float32, 4*nTok)
	ScaleTile(ed4, ed, nTok)
	st0, st1 := append([]float32(nil), init...), append([]float32(nil), init...)
	y0, y1 := make([]float32, nTok*nRows), make([]float32, nTok*nRows)
	ScanSTok(st0, ds, nRows, ds, x, 1, nRows, y0, 1, nRows, b, ds, c, ds, ed, nTok)
	ScanSTileTwin(st1, ds, nRows, ds, x, 1, nRows, y1, 1, nRows, b, ds, c, ds, ed4, nTok)
	for _, v := range [][2][]float32{{st0, st1}, {y0, y1}} {
		for i := range v[0] {
			if d := math.Abs(float64(v[0][i] - v[1][i])); d > 1e-5*(1+math.Abs(float64(v[0][i]))) {
				t.Fatalf("[%d]: scaled %v, plain %v", i, v[1][i], v[0][i])
			}
		}
	}
}

// TestExpHeaderCopy checks that this package's exp_amd64.h is the same as
// internal/vec's: Go assembly includes only from its own directory, so
// both packages hold a copy.
func TestExpHeaderCopy(t *testing.T) {
	a, err := os.ReadFile("exp_amd64.h")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "vec", "exp_amd64.h"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("internal/ssm/exp_amd64.h and internal/vec/exp_amd64.h differ")
	}
}
