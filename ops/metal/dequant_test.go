package metal

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/simt"
)

// TestWholeBlockDecoders checks dequant.h's decoders, for every weight
// type, on rows of random bytes (every code, scale and sign bit pattern,
// NaN and infinite scales included): each value kb_row16 decodes is
// bit for bit the one kb_at (quants.h, one element at a time) gives, and
// equals quant.DequantizeRow's (both NaN where that is).
func TestWholeBlockDecoders(t *testing.T) {
	b := emulated(t)
	dev := b.dev.(*emuDevice)
	main, err := os.ReadFile("testdata/dequant_test.metal")
	if err != nil {
		t.Fatal(err)
	}
	_, headers, err := program("mul_mat.metal")
	if err != nil {
		t.Fatal(err)
	}
	p := simt.Program{Dialect: simt.Metal, Main: simt.Source{Name: "dequant_test.metal", Text: main}}
	for _, n := range gpu.SortedNames(headers) {
		p.Headers = append(p.Headers, simt.Source{Name: n, Text: headers[n]})
	}
	mod, err := dev.dev.Load(p, dev.mode)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1024 // elements a row: four K super-blocks
	rng := rand.New(rand.NewPCG(24, 2))
	for _, typ := range weightTypes {
		t.Run(typ.String(), func(t *testing.T) {
			k, err := mod.Kernel("kb_test_dq16_" + typ.String())
			if err != nil {
				t.Fatal(err)
			}
			size, err := typ.RowSize(n)
			if err != nil {
				t.Fatal(err)
			}
			row := make([]byte, size)
			for i := range row {
				row[i] = byte(rng.Uint32())
			}
			want := make([]float32, n)
			if err := quant.DequantizeRow(typ, row, want); err != nil {
				t.Fatal(err)
			}
			in, out, ref := alloc(t, dev.dev, size), alloc(t, dev.dev, 4*n), alloc(t, dev.dev, 4*n)
			copy(in.Bytes(), row)
			if _, err := k.Launch(simt.Launch{Grid: simt.Dim3{X: 1, Y: 1, Z: 1}, Block: simt.Dim3{X: n / 16, Y: 1, Z: 1},
				Buffers: []simt.Binding{{Index: 0, Buf: in}, {Index: 1, Buf: out}, {Index: 2, Buf: ref}}}); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range n {
				g := binary.LittleEndian.Uint32(out.Bytes()[4*i:])
				r := binary.LittleEndian.Uint32(ref.Bytes()[4*i:])
				gf, w := math.Float32frombits(g), want[i]
				sameAsQuant := gf == w || (gf != gf && w != w)
				if g != r || !sameAsQuant {
					if bad++; bad <= 5 {
						t.Errorf("element %d: kb_row16 %v (%#08x), kb_at %v (%#08x), quant %v", i, gf, g, math.Float32frombits(r), r, w)
					}
				}
			}
			if bad > 5 {
				t.Errorf("%d of %d elements differ", bad, n)
			}
		})
	}
}

func alloc(t *testing.T, d *simt.Device, n int64) *simt.Buffer {
	t.Helper()
	buf, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	return buf
}
