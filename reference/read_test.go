package reference

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestReadTypes(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		typ  quant.Type
		vals []float64
	}{
		{"f32", quant.F32, []float64{0, -1.5, 3.25, float64(float32(1e-30)), float64(float32(0.1))}},
		{"f16", quant.F16, []float64{1, -2, 0.5, 65504, -inf, 0x1p-24}},
		{"bf16", quant.BF16, []float64{1, -3, 0x1p100, 0.15625}},
		{"i8", quant.I8, []float64{-128, 0, 127}},
		{"i16", quant.I16, []float64{-32768, 12345}},
		{"i32", quant.I32, []float64{1<<30 + 1, -7, math.MinInt32}}, // exact beyond float32's 24 bits
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := leaf(t, tc.typ, dims(int64(len(tc.vals))), tc.vals...)
			got, err := Read(x)
			if err != nil {
				t.Fatal(err)
			}
			near(t, got, tc.vals, 0)
		})
	}
}

func TestReadQuantized(t *testing.T) {
	// q8_0: row 0 has d = 0.5 and codes j-16, so element j is (j-16)/2;
	// row 1 has d = 2 and codes 3 - j, so element j is 6 - 2j.
	var qa, qb [32]int8
	var want []float64
	for j := range 32 {
		qa[j] = int8(j - 16)
		want = append(want, float64(j-16)/2)
	}
	for j := range 32 {
		qb[j] = int8(3 - j)
		want = append(want, float64(6-2*j))
	}
	raw := append(q8Block(f16Half, qa), q8Block(f16Two, qb)...)
	got, err := Read(leafBytes(t, quant.Q8_0, dims(32, 2), raw))
	if err != nil {
		t.Fatal(err)
	}
	near(t, got, want, 0)

	// q4_0 with d = 1: qs[j] holds element j (low nibble j) and element
	// j+16 (high nibble 15-j); values are code - 8.
	b := make([]byte, 18)
	binary.LittleEndian.PutUint16(b, f16One)
	want = make([]float64, 32)
	for j := range 16 {
		b[2+j] = byte(j) | byte(15-j)<<4
		want[j] = float64(j - 8)
		want[j+16] = float64(7 - j)
	}
	got, err = Read(leafBytes(t, quant.Q4_0, dims(32), b))
	if err != nil {
		t.Fatal(err)
	}
	near(t, got, want, 0)
}

// grid returns an f32 tensor of shape ne whose element (i0, i1, i2, i3) is
// i0 + 10*i1 + 100*i2 + 1000*i3, so a value names its position.
func grid(t *testing.T, ne ...int64) *ops.Tensor {
	t.Helper()
	for len(ne) < 4 {
		ne = append(ne, 1)
	}
	var vals []float64
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					vals = append(vals, float64(i0+10*i1+100*i2+1000*i3))
				}
			}
		}
	}
	return f32(t, ne, vals...)
}

func TestReadViews(t *testing.T) {
	a := grid(t, 3, 2)                                      // a(i0, i1) = i0 + 10*i1
	b := grid(t, 2, 3, 4)                                   // b(i0, i1, i2) = i0 + 10*i1 + 100*i2
	c := grid(t, 4, 3)                                      // c(i0, i1) = i0 + 10*i1, rows of 16 bytes
	sub := must(t)(ops.View(c, dims(2, 2), dims(0, 16), 4)) // c[1:3, 0:2]
	tests := []struct {
		name string
		x    *ops.Tensor
		want []float64
	}{
		// Transposed: element (j0, j1) is a(j1, j0).
		{"transpose", must(t)(ops.Transpose(a)), []float64{0, 10, 1, 11, 2, 12}},
		// Permute(1, 2, 0, 3): b's dim 0 becomes dim 1, dim 1 dim 2, dim 2
		// dim 0, so element (j0, j1, j2) is b(j1, j2, j0): shape [4 2 3].
		{"permute", must(t)(ops.Permute(b, 1, 2, 0, 3)), []float64{
			0, 100, 200, 300, 1, 101, 201, 301,
			10, 110, 210, 310, 11, 111, 211, 311,
			20, 120, 220, 320, 21, 121, 221, 321,
		}},
		// A 2x2 window at column 1 of c.
		{"view", sub, []float64{1, 2, 11, 12}},
		// A view of that view: its second row, transposed to a column.
		{"view of view", must(t)(ops.View(sub, dims(1, 2), dims(0, 4), 16)), []float64{11, 12}},
		{"reshape", must(t)(ops.Reshape(a, 2, 3)), []float64{0, 1, 2, 10, 11, 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(tc.x)
			if err != nil {
				t.Fatal(err)
			}
			near(t, got, tc.want, 0)
		})
	}
}

func TestReadOtherBuffer(t *testing.T) {
	// Read goes through ops.Buffer, so storage that is not a HostBuffer
	// (as a device buffer would be) reads the same.
	x := must(t)(ops.NewTensor("x", quant.F16, 2, 2))
	raw := make([]byte, 6+x.Bytes())
	for i, v := range []float32{1, 2, 3, 4} {
		binary.LittleEndian.PutUint16(raw[6+2*i:], quant.FP32ToFP16(v))
	}
	x.Buffer, x.Offset = &memBuffer{raw}, 6
	got, err := Read(x)
	if err != nil {
		t.Fatal(err)
	}
	near(t, got, []float64{1, 2, 3, 4}, 0)
}

func TestReadEmpty(t *testing.T) {
	x := must(t)(ops.NewTensor("x", quant.F32, 4, 0))
	got, err := Read(x) // no storage needed for no elements
	if err != nil || len(got) != 0 {
		t.Fatalf("Read = %v, %v; want no values and no error", got, err)
	}
}

func TestReadErrors(t *testing.T) {
	unallocated := must(t)(ops.NewTensor("x", quant.F32, 4))
	short := must(t)(ops.NewTensor("x", quant.F32, 4))
	short.Buffer = &memBuffer{make([]byte, 12)}
	offset := f32(t, dims(2), 1, 2)
	offset.Offset = 8
	negative := f32(t, dims(2), 1, 2)
	negative.Nb[1] = -8
	badType := f32(t, dims(2), 1, 2)
	badType.Type = quant.Type(99)
	ragged := must(t)(ops.NewTensor("x", quant.Q8_0, 32))
	ragged.Ne[0] = 16
	tests := []struct {
		name string
		x    *ops.Tensor
	}{
		{"nil", nil},
		{"unallocated", unallocated},
		{"buffer too short", short},
		{"offset past end", offset},
		{"negative stride", negative},
		{"invalid type", badType},
		{"partial block", ragged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := Read(tc.x); err == nil {
				t.Fatalf("Read = %v, want an error", got)
			}
		})
	}
}
