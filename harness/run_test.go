package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

func f32Add(b *Builder) (*ops.Tensor, error) {
	return ops.Add(b.Leaf("a", quant.F32, uni, 8, 2), b.Leaf("b", quant.F32, uni, 8, 2))
}

// wrapped is a CPU backend whose Supports or Compute is replaced.
type wrapped struct {
	*cpu.Backend
	supports func(*ops.Tensor) error
	compute  func(*ops.Tensor) error
}

func (w wrapped) Supports(t *ops.Tensor) error {
	if w.supports != nil {
		return w.supports(t)
	}
	return w.Backend.Supports(t)
}

func (w wrapped) Compute(t *ops.Tensor) error {
	if w.compute != nil {
		return w.compute(t)
	}
	return w.Backend.Compute(t)
}

func TestRunOutcomes(t *testing.T) {
	be := cputest.New(t, 1)
	defer be.Close()
	ok := Case{Name: "ok", Op: ops.OpAdd, Types: types(quant.F32), Build: f32Add}
	tests := []struct {
		name   string
		be     ops.Backend
		c      Case
		status Status
		reason string
	}{
		{"match", be, ok, StatusOK, ""},
		{"refused as expected", be, refuse(Case{Name: "r", Op: ops.OpMulMat, Types: types(quant.Q4_0),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.MulMat(b.Leaf("a", quant.Q4_0, uni, 33, 2), b.Leaf("b", quant.F32, uni, 33, 2))
			}}), StatusRefused, ""},
		{"refuse case that builds", be, refuse(ok), StatusFail, "must refuse"},
		{"refused for another reason", be, refuse(Case{Name: "r", Op: ops.OpAdd, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) { return nil, errors.New("disk on fire") }}), StatusFail, "wraps neither"},
		{"build error", be, Case{Name: "e", Op: ops.OpAdd, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) { return nil, errors.New("boom") }}, StatusFail, "build"},
		{"no node", be, Case{Name: "e", Op: ops.OpAdd, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) { return nil, nil }}, StatusFail, "build"},
		{"builder error wins", be, Case{Name: "e", Op: ops.OpAdd, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.Add(b.Leaf("a", quant.Q4_0, uni, 33), nil)
			}}, StatusFail, "build"},
		{"two ops", be, Case{Name: "g", Op: ops.OpSilu, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				x, err := f32Add(b)
				if err != nil {
					return nil, err
				}
				return ops.Silu(x)
			}}, StatusFail, "bad case"},
		{"unsupported", wrapped{Backend: be, supports: func(*ops.Tensor) error { return errors.New("no") }}, ok, StatusSkipped, "unsupported"},
		{"compute error", wrapped{Backend: be, compute: func(*ops.Tensor) error { return errors.New("no") }}, ok, StatusFail, "compute"},
		{"panic", wrapped{Backend: be, compute: func(*ops.Tensor) error { panic("kaboom") }}, ok, StatusFail, "panic: kaboom"},
		{"bad ids without Reject", be, getRowsCase(quant.F32, []int64{8, 4}, Ints(4, 5), []int64{2}), StatusFail, "reference failed"},
		{"rejected", be, reject(getRowsCase(quant.F32, []int64{8, 4}, Ints(4, 5), []int64{2})), StatusRejected, ""},
		{"reject ignored", wrapped{Backend: be, compute: func(*ops.Tensor) error { return nil }},
			reject(getRowsCase(quant.F32, []int64{8, 4}, Ints(4, 5), []int64{2})), StatusFail, "must reject"},
		{"unknown tag falls back", be, Case{Name: "n", Op: ops.OpAdd, Types: types(quant.F32), Tag: "x", Build: f32Add}, StatusOK, ""},
		{"check fails", be, Case{Name: "c", Op: ops.OpAdd, Types: types(quant.F32), Build: f32Add,
			Check: func([]float64) error { return errors.New("row 3 is not zero") }}, StatusFail, "row 3 is not zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(tt.be, tt.c)
			if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("got %s (err %q), want %v with reason containing %q", r.Summary(), r.Err, tt.status, tt.reason)
			}
		})
	}
}

// TestMaskedRowsCheck proves the zero-row assertion catches a masked row
// that is nearly but not exactly zero, which NMSE alone would pass.
func TestMaskedRowsCheck(t *testing.T) {
	base := cputest.New(t, 1)
	defer base.Close()
	var c Case
	for _, x := range Cases() {
		if x.Op == ops.OpSoftMax && strings.Contains(x.Name, "rows 0,3 masked") {
			c = x
		}
	}
	if c.Check == nil {
		t.Fatal("no softmax case with masked rows and a check")
	}
	be := wrapped{Backend: base, compute: func(n *ops.Tensor) error {
		if err := base.Compute(n); err != nil {
			return err
		}
		mem, err := n.HostBytes()
		if err != nil {
			return err
		}
		// element 1 of row 3, plane 0: tiny but not zero
		copy(mem[n.Nb[1]*3+4:], []byte{1, 0, 0, 0})
		return nil
	}}
	r := Run(be, c)
	if r.Status != StatusFail || !strings.Contains(r.Reason, "fully masked row") {
		t.Errorf("got %s, want a fully masked row failure", r.Summary())
	}
}

func TestCompare(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name      string
		got, want []float64
		nmse, max float64
		mismatch  int64
	}{
		{"equal", []float64{1, 2}, []float64{1, 2}, 0, 0, 0},
		{"nmse", []float64{1, 3}, []float64{1, 2}, 1.0 / 5, 1, 0},
		{"zero ref", []float64{0, 1}, []float64{0, 0}, inf, 1, 0},
		{"both zero", []float64{0}, []float64{0}, 0, 0, 0},
		{"nan mismatch", []float64{nan, 2}, []float64{1, 2}, 0, 0, 1},
		{"same nan", []float64{nan, 2}, []float64{nan, 2}, 0, 0, 0},
		{"same inf", []float64{-inf, 2}, []float64{-inf, 2}, 0, 0, 0},
		{"inf sign", []float64{inf, 2}, []float64{-inf, 2}, 0, 0, 1},
		{"inf vs finite", []float64{1e300, 2}, []float64{inf, 2}, 0, 0, 1},
	}
	for _, tt := range tests {
		m := compare(tt.got, tt.want)
		if math.Abs(m.nmse-tt.nmse) > 1e-15 && !(math.IsInf(m.nmse, 1) && math.IsInf(tt.nmse, 1)) || m.maxErr != tt.max || m.nanMismatch != tt.mismatch {
			t.Errorf("%s: nmse %g max %g mismatch %d, want %g %g %d", tt.name, m.nmse, m.maxErr, m.nanMismatch, tt.nmse, tt.max, tt.mismatch)
		}
	}
}

func TestJudge(t *testing.T) {
	ne := [4]int64{2, 1, 1, 1}
	tol := Tolerance{MaxNMSE: 1e-6, MaxRelErr: 1e-3}
	tests := []struct {
		name      string
		tol       Tolerance
		got, want []float64
		reason    string
	}{
		{"pass", tol, []float64{1, 2}, []float64{1, 2}, ""},
		{"nmse", tol, []float64{1, 2.1}, []float64{1, 2}, "NMSE"},
		{"rel", Tolerance{MaxNMSE: 1, MaxRelErr: 1e-3}, []float64{1, 2.1}, []float64{1, 2}, "max err"},
		{"exact", Tolerance{Exact: true}, []float64{1, 2 + 1e-15}, []float64{1, 2}, "not exact"},
		{"nan", tol, []float64{math.NaN(), 2}, []float64{1, 2}, "NaN/Inf"},
	}
	for _, tt := range tests {
		r := tt.tol.judge(compare(tt.got, tt.want), ne, tt.got, tt.want)
		if (tt.reason == "") != (r == "") || !strings.Contains(r, tt.reason) {
			t.Errorf("%s: reason %q, want %q", tt.name, r, tt.reason)
		}
	}
}

func TestLookupTolerance(t *testing.T) {
	tests := []struct {
		op   ops.Op
		t    quant.Type
		tag  string
		want float64
	}{
		{ops.OpMulMat, quant.Q4_0, "", 4e-4},
		{ops.OpMulMat, quant.F16, "", 1e-6},
		{ops.OpRope, quant.F32, "large-pos", 1e-5},
		{ops.OpRope, quant.F32, "unknown-tag", 1e-13},
	}
	for _, tt := range tests {
		got, err := LookupTolerance(tt.op, tt.t, tt.tag)
		if err != nil || got.MaxNMSE != tt.want {
			t.Errorf("LookupTolerance(%v, %v, %q) = %v, %v; want max NMSE %g", tt.op, tt.t, tt.tag, got.MaxNMSE, err, tt.want)
		}
	}
	if _, err := LookupTolerance(ops.OpNone, quant.F32, ""); err == nil {
		t.Error("tolerance for NONE: want an error")
	}
}

func TestResultJSON(t *testing.T) {
	r := Result{OpName: "ADD", Case: "c", Status: StatusFail, NMSE: Metric(math.Inf(1)), MaxErr: Metric(math.NaN()), RefMax: 2}
	b, err := json.Marshal([]Result{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"nmse":"+Inf"`, `"max_err":"NaN"`, `"ref_max":2`, `"status":"FAIL"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back []Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back[0].Status != StatusFail || !math.IsInf(float64(back[0].NMSE), 1) || !math.IsNaN(float64(back[0].MaxErr)) {
		t.Errorf("round trip: %+v", back[0])
	}
}
