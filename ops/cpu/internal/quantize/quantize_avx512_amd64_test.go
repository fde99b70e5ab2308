//go:build amd64 && !purego

package quantize

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// avx512Act are the avx512 tier's converters by activation type.
var avx512Act = map[quant.Type]func([]float32, []byte){
	quant.Q8_0: Q8_0AVX512, quant.Q8_1: Q8_1AVX512, quant.Q8_K: Q8_KAVX512, quant.F16: F16AVX512,
	quant.BF16: BF16AVX512,
}

// TestQuantizersAVX512 checks that the AVX-512 activation converters
// write exactly quant.QuantizeRow's bytes for finite inputs of every
// kind quantTestRow makes, at lengths around the 16- and 32-value steps
// and the masked tail (f16), leaving the bytes past the row alone; and
// that with NaN and Inf mixed in they write the AVX2 converters' bytes.
func TestQuantizersAVX512(t *testing.T) {
	simdtest.NeedAVX512(t)
	rng := rand.New(rand.NewPCG(37, 38))
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16, quant.BF16} {
		conv := avx512Act[typ]
		bs := int(typ.BlockSize())
		var lengths []int
		if bs == 1 {
			lengths = []int{1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 100, 257}
		} else {
			lengths = []int{bs, 2 * bs, 3 * bs, 7 * bs}
		}
		check := func(what string, src []float32, want []byte) {
			t.Helper()
			got := make([]byte, len(want)+40)
			for i := range got {
				got[i] = 0xa5
			}
			conv(src, got[:len(want)])
			for i := range got {
				w := byte(0xa5)
				if i < len(want) {
					w = want[i]
				}
				if got[i] != w {
					t.Fatalf("%v %s n=%d: byte %d = %#x, want %#x (input %v)", typ, what, len(src), i, got[i], w, src)
				}
			}
		}
		for trial := range 700 {
			n := lengths[trial%len(lengths)]
			if trial >= 350 {
				n = bs * (1 + rng.IntN(6))
				if bs == 1 {
					n = 1 + rng.IntN(300)
				}
			}
			src := quantTestRow(rng, n, trial)
			want := make([]byte, simdtest.MustRowSize(t, typ, n))
			if err := quant.QuantizeRow(typ, src, want); err != nil {
				t.Fatal(err)
			}
			check("reference", src, want)
			// Non-finite values: the AVX2 converter's bytes.
			for i := range src {
				if rng.IntN(20) == 0 {
					src[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -float32(math.NaN())}[rng.IntN(4)]
				}
			}
			if typ == quant.BF16 {
				// No AVX2 converter: quant's, which keeps each NaN's
				// sign and top payload bits.
				if err := quant.QuantizeRow(typ, src, want); err != nil {
					t.Fatal(err)
				}
				check("reference, non-finite", src, want)
				continue
			}
			avx2Act[typ](src, want)
			check("avx2", src, want)
		}
	}
}

// BenchmarkQuantizersAVX512 compares the avx2 and avx512 converters on
// rows of 4096 and 14336 floats.
func BenchmarkQuantizersAVX512(b *testing.B) {
	if !simdtest.HasAVX512() {
		b.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{4096, 14336} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		for _, typ := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16} {
			dst := make([]byte, simdtest.MustRowSize(b, typ, n))
			for _, tier := range []string{"avx2", "avx512"} {
				conv := avx2Act[typ]
				if tier == "avx512" {
					conv = avx512Act[typ]
				}
				b.Run(fmt.Sprintf("%v/n=%d/%s", typ, n, tier), func(b *testing.B) {
					for b.Loop() {
						conv(src, dst)
					}
				})
			}
		}
	}
}

// FuzzQuantizersAVX512 is the fuzzing form of TestQuantizersAVX512: the
// fuzzer supplies the float bits; rows with non-finite values must give
// the AVX2 converter's bytes, the others quant.QuantizeRow's too.
func FuzzQuantizersAVX512(f *testing.F) {
	simdtest.NeedAVX512(f)
	types := []quant.Type{quant.Q8_0, quant.Q8_1, quant.Q8_K, quant.F16}
	rng := rand.New(rand.NewPCG(39, 40))
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
		finite := true
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			finite = finite && !math.IsNaN(float64(src[i])) && !math.IsInf(float64(src[i]), 0)
		}
		want := make([]byte, simdtest.MustRowSize(t, typ, n))
		avx2Act[typ](src, want)
		got := make([]byte, len(want))
		avx512Act[typ](src, got)
		if string(got) != string(want) {
			t.Fatalf("%v: bytes differ from the AVX2 converter's for %v", typ, src)
		}
		if finite {
			if err := quant.QuantizeRow(typ, src, want); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("%v: bytes differ from quant.QuantizeRow for %v", typ, src)
			}
		}
	})
}

// TestBF16AVX512Rounding checks BF16AVX512 against quant.FP32ToBF16 on
// bit patterns where the rounding decides: every low half at and around
// the tie (0x7fff, 0x8000, 0x8001) with an even and an odd kept bit,
// across exponents from denormal to the largest finite (which rounds to
// infinity), and NaNs with payloads in either half.
func TestBF16AVX512Rounding(t *testing.T) {
	simdtest.NeedAVX512(t)
	var bits []uint32
	for _, hi := range []uint32{0x0000, 0x0001, 0x0002, 0x007f, 0x0080, 0x3f80, 0x3f81, 0x7f7e, 0x7f7f, 0x7f80, 0x7f81, 0x7fc0, 0x7fff} {
		for _, lo := range []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff} {
			bits = append(bits, hi<<16|lo, (hi|0x8000)<<16|lo)
		}
	}
	src := make([]float32, len(bits))
	for i, b := range bits {
		src[i] = math.Float32frombits(b)
	}
	dst := make([]byte, 2*len(src))
	BF16AVX512(src, dst)
	for i, b := range bits {
		got := binary.LittleEndian.Uint16(dst[2*i:])
		if want := quant.FP32ToBF16(src[i]); got != want {
			t.Errorf("%#08x: %#04x, want %#04x", b, got, want)
		}
	}
}
