//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

func init() {
	if hasAVX2() {
		fma32Ref = dot.FMA32AVX2
	}
}

// hasAVX2 reports whether the host runs the avx2 tier.
func hasAVX2() bool { return simdtest.HasAVX2() }

// needAVX2 skips t on hosts without the avx2 tier.
func needAVX2(t testing.TB) {
	t.Helper()
	if !hasAVX2() {
		t.Skip("CPU lacks AVX2/FMA/F16C")
	}
}

// fillRow is simdtest.FillRow.
func fillRow(t quant.Type, n, off int, data []byte) []byte { return simdtest.FillRow(t, n, off, data) }

// TestQuantizersMatchReference checks that the AVX2 activation
// converters write exactly quant.QuantizeRow's bytes for finite inputs of
// every magnitude: uniform, huge, tiny (denormal), with zeros, ties and
// all-zero blocks.
func TestQuantizersMatchReference(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16} {
		conv := avx2Kernels.act[typ]
		if conv == nil {
			t.Fatalf("no AVX2 converter for %v", typ)
		}
		for trial := range 700 {
			bs := int(typ.BlockSize())
			if bs == 1 {
				bs = 1 + rng.IntN(40)
			}
			n := bs * (1 + rng.IntN(6))
			src := quantTestRow(rng, n, trial)
			want := make([]byte, mustRowSize(t, typ, n))
			if err := quant.QuantizeRow(typ, src, want); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want))
			conv(src, got)
			if string(got) != string(want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%v trial %d n=%d: byte %d = %#x, reference %#x (input %v)", typ, trial, n, i, got[i], want[i], src)
					}
				}
			}
		}
	}
}

// quantTestRow returns n finite floats whose kind depends on trial.
func quantTestRow(rng *rand.Rand, n, trial int) []float32 {
	src := make([]float32, n)
	scale := float32(math.Ldexp(1, rng.IntN(80)-40))
	for i := range src {
		switch trial % 7 {
		case 0, 1:
			src[i] = (2*rng.Float32() - 1) * scale
		case 2: // ties after scaling: halves of small integers
			src[i] = float32(rng.IntN(255)-127) / 2
		case 3: // denormals and zeros
			src[i] = math.Float32frombits(rng.Uint32() & 0x807fffff)
			if rng.IntN(3) == 0 {
				src[i] = 0
			}
		case 4: // extremes, with equal magnitudes of both signs
			src[i] = []float32{math.MaxFloat32, -math.MaxFloat32, 1e38, -3e-39, 65504, 65520}[rng.IntN(6)]
		case 5: // mostly zero blocks
			if rng.IntN(50) == 0 {
				src[i] = rng.Float32() - 0.5
			}
		case 6: // tiny normals, where 1/d or 127/vmax overflows
			src[i] = (2*rng.Float32() - 1) * float32(math.Ldexp(1, -rng.IntN(8)-120))
		}
	}
	return src
}

func mustRowSize(t *testing.T, typ quant.Type, n int) int64 { return simdtest.MustRowSize(t, typ, n) }

// FuzzQuantizers is the fuzzing form of TestQuantizersMatchReference: the
// fuzzer supplies the float bits (non-finite values are replaced, being
// outside the contract) and the converter.
func FuzzQuantizers(f *testing.F) {
	if !hasAVX2() {
		f.Skip("CPU lacks AVX2/FMA/F16C")
	}
	types := []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16}
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 8 {
		data := make([]byte, 4*300)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		f.Add(uint8(i), data)
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		typ := types[int(kind)%len(types)]
		bs := int(typ.BlockSize())
		n := len(data) / 4 / bs * bs
		if n == 0 {
			return
		}
		src := make([]float32, n)
		for i := range src {
			v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				v = float32(i)
			}
			src[i] = v
		}
		want := make([]byte, mustRowSize(t, typ, n))
		if err := quant.QuantizeRow(typ, src, want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		avx2Kernels.act[typ](src, got)
		if string(got) != string(want) {
			t.Fatalf("%v: bytes differ from quant.QuantizeRow for %v", typ, src)
		}
	})
}

// TestAVX2TierDetection checks the avx2 tier against cpuid and that a
// tier the CPU lacks can be named but not chosen, by Options.Tier or
// $KERNBENCH_CPU.
func TestAVX2TierDetection(t *testing.T) {
	for _, tr := range Tiers() {
		switch {
		case tr.Name == "avx2" && tr.Supported != hasAVX2():
			t.Errorf("avx2 supported = %v, cpuid says %v (%s)", tr.Supported, hasAVX2(), tr.Reason)
		case !tr.Supported:
			_, err := NewWithOptions(Options{Tier: tr.Name})
			if err == nil || !strings.Contains(err.Error(), tr.Reason) {
				t.Errorf("forcing unsupported tier %s: err %v, want the reason %q", tr.Name, err, tr.Reason)
			}
			t.Setenv(EnvTier, tr.Name)
			if b, err := New(1); err == nil {
				t.Errorf("%s=%s on a CPU without it gave tier %s, want an error", EnvTier, tr.Name, b.Tier().Name)
				b.Close()
			}
		}
	}
	if hasAVX2() {
		t.Setenv(EnvTier, "")
		b := newTestBackend(t, 1)
		if b.Tier().Name != "avx2" {
			t.Errorf("default tier %s, want avx2 (the fastest supported here)", b.Tier().Name)
		}
		if b.kern != avx2Kernels {
			t.Error("backend does not use the avx2 kernel set")
		}
	}
}

// TestGemvTwins checks the four-row kernels row by row against their
// twins, bit for bit, with rows ldx bytes apart (ldx larger than a row,
// as for views) and random contents.
func TestGemvTwins(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		wt   quant.Type
		twin vecDotFunc
	}{{quant.Q4_0, gemv.Q4_0Twin}, {quant.Q8_0, gemv.Q8_0Twin}} {
		gv := avx2Kernels.gemv[c.wt]
		for range 100 {
			nb := rng.IntN(20)
			n := nb * quant.QK
			rowBytes := mustRowSize(t, c.wt, n)
			ldx := int(rowBytes) + rng.IntN(40)
			x := simdRow(rng, quant.I8, 3*ldx+int(rowBytes), rng.IntN(64), 0)
			y := simdRow(rng, quant.Q8_0, n, rng.IntN(64), 0)
			dy := make([]float32, nb)
			for ib := range dy {
				dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
			}
			var out [4]float32
			gv(nb, x, ldx, y, dy, &out)
			for r := range 4 {
				want := c.twin(n, x[r*ldx:], y)
				if !sameFloat(out[r], want) {
					t.Fatalf("%v nb=%d row %d: asm %g, twin %g", c.wt, nb, r, out[r], want)
				}
			}
		}
	}
}
