package reference

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// checkBlockDecoder compares the float64 decoder of typ with
// quant.DequantizeRow on block b: every product of the formats is exact
// in float32 unless it overflows, so the two agree bit for bit once the
// float64 value is rounded to float32.
func checkBlockDecoder(t *testing.T, typ quant.Type, b []byte) {
	t.Helper()
	want := make([]float32, typ.BlockSize())
	if err := quant.DequantizeRow(typ, b, want); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, typ.BlockSize())
	blockDecoders[typ](b, got)
	for j := range got {
		g := float32(got[j])
		if math.Float32bits(g) != math.Float32bits(want[j]) && !(g != g && want[j] != want[j]) {
			t.Fatalf("%v block %x: element %d = %g, quant says %g", typ, b, j, got[j], want[j])
		}
	}
}

// TestBlockDecoders checks the reference's own decoders against quant's
// on random blocks, on blocks of every byte value and, for the codebook
// formats, on quant.RandomBlocks' (finite scales).
func TestBlockDecoders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for typ := range blockDecoders {
		ts := int(typ.TypeSize())
		for range 200 {
			b := make([]byte, ts)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			checkBlockDecoder(t, typ, b)
		}
		for v := range 256 {
			checkBlockDecoder(t, typ, bytes.Repeat([]byte{byte(v)}, ts))
		}
		if quant.CanQuantize(typ) {
			continue
		}
		b := make([]byte, 100*ts)
		if err := quant.RandomBlocks(typ, b, 11); err != nil {
			t.Fatal(err)
		}
		for ; len(b) > 0; b = b[ts:] {
			checkBlockDecoder(t, typ, b[:ts])
		}
	}
}

// TestReadNewFormats reads a quantized row of each format through Read
// and compares with quant's decoding of the same bytes.
func TestReadNewFormats(t *testing.T) {
	x := make([]float32, 512)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37)) * 2
	}
	for typ := range blockDecoders {
		size, _ := typ.RowSize(512)
		raw := make([]byte, size)
		if quant.CanQuantize(typ) {
			if err := quant.QuantizeRow(typ, x, raw); err != nil {
				t.Fatal(err)
			}
		} else if err := quant.RandomBlocks(typ, raw, 3); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, 512)
		if err := quant.DequantizeRow(typ, raw, want); err != nil {
			t.Fatal(err)
		}
		got, err := Read(leafBytes(t, typ, dims(256, 2), raw))
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		for i := range got {
			if float32(got[i]) != want[i] {
				t.Fatalf("%v: element %d = %g, want %g", typ, i, got[i], want[i])
			}
		}
	}
}

// FuzzBlockDecoders runs checkBlockDecoder on arbitrary bytes.
func FuzzBlockDecoders(f *testing.F) {
	f.Add([]byte{0xff, 0x7c, 0x00}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, ti uint8) {
		typs := []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0,
			quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M}
		typ := typs[int(ti)%len(typs)]
		ts := int(typ.TypeSize())
		b := make([]byte, ts)
		copy(b, data)
		checkBlockDecoder(t, typ, b)
	})
}
