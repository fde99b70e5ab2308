//go:build amd64 && !purego

package quantize

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// avx2Act are the converters by activation type.
var avx2Act = map[quant.Type]func([]float32, []byte){
	quant.Q8_0: Q8_0AVX2, quant.Q8_1: Q8_1AVX2, quant.Q8_K: Q8_KAVX2, quant.F16: F16AVX2,
}

// TestQuantizersMatchReference checks that the AVX2 activation
// converters write exactly quant.QuantizeRow's bytes for finite inputs of
// every magnitude: uniform, huge, tiny (denormal), with zeros, ties and
// all-zero blocks.
func TestQuantizersMatchReference(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16} {
		conv := avx2Act[typ]
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
			want := make([]byte, simdtest.MustRowSize(t, typ, n))
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

// FuzzQuantizers is the fuzzing form of TestQuantizersMatchReference: the
// fuzzer supplies the float bits (non-finite values are replaced, being
// outside the contract) and the converter.
func FuzzQuantizers(f *testing.F) {
	simdtest.NeedAVX2(f)
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
		want := make([]byte, simdtest.MustRowSize(t, typ, n))
		if err := quant.QuantizeRow(typ, src, want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		avx2Act[typ](src, got)
		if string(got) != string(want) {
			t.Fatalf("%v: bytes differ from quant.QuantizeRow for %v", typ, src)
		}
	})
}
