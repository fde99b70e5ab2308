package model

import (
	"math"
	"sync"
	"testing"

	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/quant"
)

// testdata returns the path of a file in shared/testdata, found by walking
// up from the working directory, or skips the test when it is absent.
func testdata(t testing.TB, name string) string {
	t.Helper()
	return shared.Path(t, name)
}

// loadModel loads a test model, closing it when the test ends.
func loadModel(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Load(testdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// sharedCPU is the tests' shared 2-thread CPU backend.
var sharedCPU = sync.OnceValues(func() (*cpu.Backend, error) { return cpu.New(2) })

// backend returns the shared 2-thread CPU backend, stopping the test when
// it cannot be made.
func backend(t testing.TB) *cpu.Backend {
	t.Helper()
	b, err := sharedCPU()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newCtx makes a context with the given attention path and KV type.
func newCtx(t testing.TB, m *Model, flash bool, kv quant.Type, mod func(*ContextParams)) *Context {
	t.Helper()
	p := DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch = 64, 64, 64
	p.FlashAttn, p.KVType = flash, kv
	if mod != nil {
		mod(&p)
	}
	c, err := m.NewContext(backend(t), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// maxRelErr returns max |got - want| over the row, divided by the largest
// |want| of the row (logits of a row share a scale).
func maxRelErr(got []float32, want []float64) float64 {
	scale, worst := 0.0, 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i, w := range want {
		worst = math.Max(worst, math.Abs(float64(got[i])-w))
	}
	if scale == 0 {
		return worst
	}
	return worst / scale
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// roundRows returns a refOptions.round that rounds q, k and v through
// element type typ, as a cache of that type stores K and V and as the
// CPU's flash attention converts the query to K's dot-product type (f16
// for f16 K, q8_0 for q8_0 K).
func roundRows(t testing.TB, typ quant.Type) func(q, k, v []float64) {
	return func(q, k, v []float64) {
		for _, x := range [][]float64{q, k, v} {
			f := make([]float32, len(x))
			for i := range x {
				f[i] = float32(x[i])
			}
			n, err := typ.RowSize(int64(len(f)))
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, n)
			if err := quant.QuantizeRow(typ, f, b); err != nil {
				t.Fatal(err)
			}
			if err := quant.DequantizeRow(typ, b, f); err != nil {
				t.Fatal(err)
			}
			for i := range x {
				x[i] = float64(f[i])
			}
		}
	}
}
