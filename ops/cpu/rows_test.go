package cpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// This file holds the test harness the tests of the non-matmul kernels
// share: leaves filled with known or random values, running a node on
// backends of 1 and 3 threads, checking that nothing outside the node's
// elements was written, and comparing with package reference.

// rowOpEnv builds and runs test tensors for one test.
type rowOpEnv struct {
	t     *testing.T
	rng   *rand.Rand
	alloc *Backend
}

func newRowOpEnv(t *testing.T) *rowOpEnv {
	t.Helper()
	b := newTestBackend(t, 1)
	t.Cleanup(func() { b.Close() })
	return &rowOpEnv{t: t, rng: rand.New(rand.NewPCG(7, uint64(len(t.Name())))), alloc: b}
}

// uniform returns n values drawn uniformly from [lo, hi).
func (e *rowOpEnv) uniform(n int64, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*e.rng.Float64()
	}
	return v
}

// leaf returns an allocated contiguous tensor of type typ and shape ne
// holding vals in logical order (random values in [-1, 1) when vals is
// nil). Block-quantized types are filled with quant.QuantizeRow.
func (e *rowOpEnv) leaf(typ quant.Type, ne []int64, vals []float64) *ops.Tensor {
	e.t.Helper()
	x, err := ops.NewTensor("leaf", typ, ne...)
	if err != nil {
		e.t.Fatal(err)
	}
	if vals == nil {
		vals = e.uniform(x.NumElements(), -1, 1)
	}
	if int64(len(vals)) != x.NumElements() {
		e.t.Fatalf("leaf %v %v: %d values for %d elements", typ, ne, len(vals), x.NumElements())
	}
	if err := ops.AllocTensor(e.alloc, x, 0); err != nil {
		e.t.Fatal(err)
	}
	raw := encodeValues(e.t, typ, x.Ne[0], vals)
	if _, err := x.Buffer.WriteAt(raw, 0); err != nil {
		e.t.Fatal(err)
	}
	return x
}

// f32 is a random f32 leaf of shape ne.
func (e *rowOpEnv) f32(ne ...int64) *ops.Tensor {
	e.t.Helper()
	return e.leaf(quant.F32, ne, nil)
}

// permuted returns a view of a random f32 leaf of shape base permuted by
// axes (as ops.Permute takes them).
func (e *rowOpEnv) permuted(base []int64, axes ...int) *ops.Tensor {
	e.t.Helper()
	v, err := ops.Permute(e.f32(base...), axes...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// strided returns an f32 view of shape ne inside a random leaf whose rows
// are padded by gap elements, with dimension 0 stepping step elements.
func (e *rowOpEnv) strided(ne [4]int64, step, gap int64) *ops.Tensor {
	e.t.Helper()
	base := e.f32(ne[0]*step+gap, ne[1], ne[2], ne[3])
	nb := [4]int64{4 * step, base.Nb[1], base.Nb[2], base.Nb[3]}
	v, err := ops.View(base, ne[:], nb[:], 4*(gap/2))
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// encodeValues encodes vals (logical order, rows of ne0) as packed typ.
func encodeValues(t *testing.T, typ quant.Type, ne0 int64, vals []float64) []byte {
	t.Helper()
	if typ.IsQuantized() {
		rowBytes, err := typ.RowSize(ne0)
		if err != nil {
			t.Fatal(err)
		}
		var raw []byte
		f := make([]float32, ne0)
		for r := int64(0); r*ne0 < int64(len(vals)); r++ {
			for i := range f {
				f[i] = float32(vals[r*ne0+int64(i)])
			}
			row := make([]byte, rowBytes)
			if err := quant.QuantizeRow(typ, f, row); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, row...)
		}
		return raw
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
			t.Fatalf("cannot encode %v", typ)
		}
	}
	return raw
}

// footprint marks the bytes of buf (len n) that t's elements occupy, t's
// first byte being at off.
func footprint(t *ops.Tensor, off int64, n int) []bool {
	mark := make([]bool, n)
	bs, ts := t.Type.BlockSize(), t.Type.TypeSize()
	for i3 := range t.Ne[3] {
		for i2 := range t.Ne[2] {
			for i1 := range t.Ne[1] {
				for k := range t.Ne[0] / bs {
					o := off + k*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
					for j := o; j < o+ts; j++ {
						mark[j] = true
					}
				}
			}
		}
	}
	return mark
}

// runs computes node on a 1-thread backend and on a 3-thread one that
// splits even tiny tensors, checks that neither wrote a byte of the node's
// buffer outside the node's elements (nor left one of them unwritten: they
// start as 0xff bytes, NaN in every float type), checks that both runs
// agree bit for bit, and returns the node's values as reference.Read
// reads them.
func (e *rowOpEnv) run(node *ops.Tensor) []float64 {
	e.t.Helper()
	if node.ViewOf == nil && node.Buffer == nil {
		if err := ops.AllocTensor(e.alloc, node, 64); err != nil {
			e.t.Fatal(err)
		}
	}
	buf, off := node.Storage()
	hb, ok := buf.(*ops.HostBuffer)
	if !ok {
		e.t.Fatalf("node storage is %T", buf)
	}
	mem := hb.Bytes()
	mark := footprint(node, off, len(mem))
	var first []byte
	var vals []float64
	for _, threads := range []int{1, 3} {
		before := bytes.Clone(mem)
		for i := range mem {
			if mark[i] {
				mem[i] = 0xff
			}
		}
		b := newTestBackend(e.t, threads)
		saved := grainWork
		if threads > 1 {
			grainWork = 1
		}
		err := b.Compute(node)
		grainWork = saved
		b.Close()
		if err != nil {
			e.t.Fatalf("%d threads: %v", threads, err)
		}
		for i := range mem {
			if !mark[i] && mem[i] != before[i] {
				e.t.Fatalf("%d threads: byte %d outside the result changed from %#x to %#x", threads, i, before[i], mem[i])
			}
		}
		got := bytes.Clone(mem)
		if first == nil {
			first = got
			vals, err = reference.Read(node)
			if err != nil {
				e.t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(first, got) {
			e.t.Fatalf("3 threads computed a different result than 1 thread")
		}
	}
	return vals
}

// check runs node (see run) and compares its values with reference.Compute
// by NMSE, failing the test above tol or on any NaN or Inf mismatch. It
// returns the values computed.
func (e *rowOpEnv) check(node *ops.Tensor, tol float64) []float64 {
	e.t.Helper()
	want, err := reference.Compute(node)
	if err != nil {
		e.t.Fatalf("reference: %v", err)
	}
	got := e.run(node)
	nmse, err := compareNMSE(got, want)
	if err != nil {
		e.t.Fatal(err)
	}
	if nmse > tol {
		e.t.Fatalf("NMSE %.3g > %.3g", nmse, tol)
	}
	return got
}

// compareNMSE returns sum((got-want)²)/sum(want²) over the finite values,
// and an error when the lengths differ or a NaN or infinity in one is not
// matched in the other. When every wanted value is 0 it returns the sum of
// squared errors.
func compareNMSE(got, want []float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	var num, den float64
	for i, w := range want {
		g := got[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if !math.IsNaN(w) || !math.IsNaN(g) {
				return 0, fmt.Errorf("element %d: got %v, want %v", i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				return 0, fmt.Errorf("element %d: got %v, want %v", i, g, w)
			}
		default:
			num += (g - w) * (g - w)
			den += w * w
		}
	}
	if den == 0 {
		return num, nil
	}
	return num / den, nil
}

// mustNode fails the test on a constructor's error.
func mustNode(t *testing.T) func(*ops.Tensor, error) *ops.Tensor {
	return func(x *ops.Tensor, err error) *ops.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

func TestLoadStoreFloats(t *testing.T) {
	vals := []float32{0, 1, -2.5, 65504, 1e-8, float32(math.Inf(-1)), 3.14159}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		for _, stride := range []int64{typ.TypeSize(), 3 * typ.TypeSize()} {
			t.Run(fmt.Sprintf("%v/stride%d", typ, stride), func(t *testing.T) {
				b := make([]byte, 8+stride*int64(len(vals)))
				storeFloats(typ, b, 8, stride, vals)
				got := make([]float32, len(vals))
				loadFloats(typ, b, 8, stride, got)
				for i, v := range vals {
					want := v
					switch typ {
					case quant.F16:
						want = quant.FP16ToFP32(quant.FP32ToFP16(v))
					case quant.BF16:
						want = quant.BF16ToFP32(quant.FP32ToBF16(v))
					}
					if got[i] != want {
						t.Errorf("element %d: got %v, want %v", i, got[i], want)
					}
				}
				if !bytes.Equal(b[:8], make([]byte, 8)) {
					t.Errorf("bytes before the first element were written")
				}
			})
		}
	}
}

func TestRowGrain(t *testing.T) {
	for _, tc := range []struct {
		work int64
		want int
	}{{0, 32 << 10}, {1, 32 << 10}, {4096, 8}, {1 << 20, 1}} {
		if got := rowGrain(tc.work); got != tc.want {
			t.Errorf("rowGrain(%d) = %d, want %d", tc.work, got, tc.want)
		}
	}
}
