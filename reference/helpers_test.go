package reference

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// leaf returns an allocated contiguous tensor of type typ and shape ne
// holding vals in logical order, encoded for typ (f32, f16, bf16, i8, i16
// or i32).
func leaf(t *testing.T, typ quant.Type, ne []int64, vals ...float64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor("x", typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(vals)) != x.NumElements() {
		t.Fatalf("leaf %v %v: %d values for %d elements", typ, ne, len(vals), x.NumElements())
	}
	size := typ.TypeSize()
	raw := make([]byte, int64(len(vals))*size)
	le := binary.LittleEndian
	for i, v := range vals {
		b := raw[int64(i)*size:]
		switch typ {
		case quant.F32:
			le.PutUint32(b, math.Float32bits(float32(v)))
		case quant.F16:
			le.PutUint16(b, quant.FP32ToFP16(float32(v)))
		case quant.BF16:
			le.PutUint16(b, quant.FP32ToBF16(float32(v)))
		case quant.I8:
			b[0] = byte(int8(v))
		case quant.I16:
			le.PutUint16(b, uint16(int16(v)))
		case quant.I32:
			le.PutUint32(b, uint32(int32(v)))
		default:
			t.Fatalf("leaf: cannot encode %v", typ)
		}
	}
	return leafBytes(t, typ, ne, raw)
}

// leafBytes returns an allocated contiguous tensor of type typ and shape
// ne whose storage is raw.
func leafBytes(t *testing.T, typ quant.Type, ne []int64, raw []byte) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor("x", typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) != x.Bytes() {
		t.Fatalf("leafBytes %v %v: %d bytes, want %d", typ, ne, len(raw), x.Bytes())
	}
	buf, err := ops.NewHostBuffer(x.Extent())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buf.WriteAt(raw, 0); err != nil {
		t.Fatal(err)
	}
	x.Buffer = buf
	return x
}

// f32 is leaf for f32 tensors.
func f32(t *testing.T, ne []int64, vals ...float64) *ops.Tensor {
	t.Helper()
	return leaf(t, quant.F32, ne, vals...)
}

// i32 is leaf for i32 tensors.
func i32(t *testing.T, ne []int64, vals ...float64) *ops.Tensor {
	t.Helper()
	return leaf(t, quant.I32, ne, vals...)
}

// dims is shorthand for a shape.
func dims(ne ...int64) []int64 { return ne }

// must returns a function that passes on a constructor's tensor and fails
// the test on its error: must(t)(ops.MulMat(a, b)).
func must(t *testing.T) func(*ops.Tensor, error) *ops.Tensor {
	t.Helper()
	return func(x *ops.Tensor, err error) *ops.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

// compute runs Compute and fails the test on error.
func compute(t *testing.T, x *ops.Tensor) []float64 {
	t.Helper()
	got, err := Compute(x)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return got
}

// near fails the test unless got and want have the same length and agree
// to within tol (absolute, or relative for large values); NaNs match NaNs
// and infinities match themselves.
func near(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		g, w := got[i], want[i]
		switch {
		case math.IsNaN(w) && math.IsNaN(g), g == w:
			continue
		case math.Abs(g-w) <= tol*math.Max(1, math.Abs(w)):
			continue
		}
		t.Fatalf("element %d: got %v, want %v (all: got %v, want %v)", i, g, w, got, want)
	}
}

// Binary16 encodings of 1, 0.5 and 2, the block scales of the hand-made
// quantized blocks in the tests.
const (
	f16One  = 0x3c00
	f16Half = 0x3800
	f16Two  = 0x4000
)

// q8Block returns a q8_0 block with scale d (binary16 bits) and codes qs.
func q8Block(d uint16, qs [32]int8) []byte {
	b := make([]byte, 34)
	binary.LittleEndian.PutUint16(b, d)
	for j, q := range qs {
		b[2+j] = byte(q)
	}
	return b
}

// memBuffer is an ops.Buffer that is not a HostBuffer, standing in for a
// device buffer.
type memBuffer struct{ b []byte }

func (m *memBuffer) Size() int64 { return int64(len(m.b)) }

func (m *memBuffer) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, errOutside
	}
	return copy(p, m.b[off:]), nil
}

func (m *memBuffer) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, errOutside
	}
	return copy(m.b[off:], p), nil
}

var errOutside = errors.New("outside buffer")
