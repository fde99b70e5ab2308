package harness

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

// boundsChecked is a backend that says whether it checks bounds.
type boundsChecked struct {
	ops.Backend
	on bool
}

func (b boundsChecked) ChecksBounds() bool { return b.on }

// TestGuardBytes: tensors get 64 guard bytes past their end unless the
// backend checks bounds itself, when they end where their buffer does (a
// read past an input's end then reaches the backend's red zone); the
// memory checks work either way.
func TestGuardBytes(t *testing.T) {
	be := cputest.New(t, 1)
	p, err := NewPoint(ops.OpScale, quant.F32, Dims{DimK: 64, DimN: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Case()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		be    ops.Backend
		guard int64
	}{
		{"plain", be, guardBytes},
		{"checks off", boundsChecked{be, false}, guardBytes},
		{"checks on", boundsChecked{be, true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prep, res := Prepare(tt.be, c, PrepareOptions{})
			if prep == nil {
				t.Fatal(res.Summary())
			}
			for _, x := range append([]*ops.Tensor{prep.Node}, prep.Node.Src...) {
				buf, off := x.Storage()
				if got := buf.Size() - off - x.Extent(); got != tt.guard {
					t.Errorf("%s: %d bytes past its end in its buffer, want %d", x.Label(), got, tt.guard)
				}
			}
			if err := prep.CheckMemory(); err != nil {
				t.Error(err)
			}
			if r := Run(tt.be, c); !r.Passed() {
				t.Errorf("Run: %s (%s)", r.Summary(), r.Err)
			}
		})
	}
}
