package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

func mustTensor(t *testing.T, typ quant.Type, ne ...int64) *Tensor {
	t.Helper()
	x, err := NewTensor("x", typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestNewTensorStrides(t *testing.T) {
	tests := []struct {
		typ    quant.Type
		ne     []int64
		wantNb [4]int64
		bytes  int64
	}{
		{quant.F32, []int64{5, 3}, [4]int64{4, 20, 60, 60}, 60},
		{quant.F16, []int64{4, 2, 3, 2}, [4]int64{2, 8, 16, 48}, 96},
		{quant.Q4_0, []int64{64, 3}, [4]int64{18, 36, 108, 108}, 108},
		{quant.Q4_K, []int64{512, 2, 2}, [4]int64{144, 288, 576, 1152}, 1152},
	}
	for _, tt := range tests {
		x := mustTensor(t, tt.typ, tt.ne...)
		if x.Nb != tt.wantNb {
			t.Errorf("%v %v: nb = %v, want %v", tt.typ, tt.ne, x.Nb, tt.wantNb)
		}
		if x.Bytes() != tt.bytes || x.Extent() != tt.bytes {
			t.Errorf("%v %v: bytes %d extent %d, want %d", tt.typ, tt.ne, x.Bytes(), x.Extent(), tt.bytes)
		}
		if !x.IsContiguous() {
			t.Errorf("%v %v: not contiguous", tt.typ, tt.ne)
		}
	}
}

func TestNewTensorErrors(t *testing.T) {
	if _, err := NewTensor("w", quant.Q4_0, 33, 2); !errors.Is(err, quant.ErrRowLength) {
		t.Errorf("q4_0 row of 33: err = %v, want ErrRowLength", err)
	}
	if _, err := NewTensor("w", quant.F32, 2, -1); err == nil {
		t.Error("negative size accepted")
	}
	if _, err := NewTensor("w", quant.F32, 1, 2, 3, 4, 5); err == nil {
		t.Error("5 dimensions accepted")
	}
	if _, err := NewTensor("w", quant.Type(99), 4); err == nil {
		t.Error("invalid type accepted")
	}
}

func TestPermuteTranspose(t *testing.T) {
	x := mustTensor(t, quant.F32, 2, 3, 4, 5)
	p, err := Permute(x, 0, 2, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Ne != [4]int64{2, 4, 3, 5} || p.Nb != [4]int64{4, 24, 8, 96} {
		t.Errorf("permute: ne %v nb %v", p.Ne, p.Nb)
	}
	if p.IsContiguous() || p.Extent() != x.Extent() {
		t.Errorf("permute: contiguous=%v extent %d (want %d)", p.IsContiguous(), p.Extent(), x.Extent())
	}
	tr, err := Transpose(x)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Ne != [4]int64{3, 2, 4, 5} || tr.Nb[0] != 8 || tr.Nb[1] != 4 || tr.Op != OpTranspose {
		t.Errorf("transpose: %v", tr)
	}
	if _, err := Permute(x, 0, 1, 1, 3); !errors.Is(err, ErrShape) {
		t.Errorf("bad permutation: %v", err)
	}
	q := mustTensor(t, quant.Q8_0, 32, 2)
	if _, err := Transpose(q); !errors.Is(err, ErrShape) {
		t.Errorf("transposed q8_0: %v", err)
	}
}

func TestViewAndReshape(t *testing.T) {
	x := mustTensor(t, quant.F32, 8, 4)
	v, err := View(x, []int64{4, 2}, []int64{0, 32}, 16)
	if err != nil {
		t.Fatal(err)
	}
	if v.Nb != [4]int64{4, 32, 64, 64} || v.Extent() != 48 {
		t.Errorf("view nb %v extent %d", v.Nb, v.Extent())
	}
	buf, _ := NewHostBuffer(x.Extent())
	x.Buffer, x.Offset = buf, 0
	if b, off := v.Storage(); b != buf || off != 16 {
		t.Errorf("view storage off %d", off)
	}
	if _, err := View(x, []int64{8, 4}, []int64{0, 32}, 4); !errors.Is(err, ErrShape) {
		t.Errorf("view past the end: %v", err)
	}
	r, err := Reshape(x, 32)
	if err != nil || r.Ne != [4]int64{32, 1, 1, 1} {
		t.Fatalf("reshape: %v %v", r, err)
	}
	if _, err := Reshape(x, 31); !errors.Is(err, ErrShape) {
		t.Errorf("reshape 31: %v", err)
	}
	tr, _ := Transpose(x)
	if _, err := Reshape(tr, 32); !errors.Is(err, ErrShape) {
		t.Errorf("reshape of a transposed view: %v", err)
	}
}

// TestConstructorShapes checks each op's result shape and type.
func TestConstructorShapes(t *testing.T) {
	f32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.F32, ne...) }
	i32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.I32, ne...) }
	tests := []struct {
		name  string
		build func() (*Tensor, error)
		typ   quant.Type
		ne    [4]int64
	}{
		{"mul_mat", func() (*Tensor, error) { return MulMat(mustTensor(t, quant.Q4_0, 64, 10, 2), f32(64, 3, 6)) }, quant.F32, [4]int64{10, 3, 6, 1}},
		{"mul_mat_id", func() (*Tensor, error) {
			return MulMatID(mustTensor(t, quant.F16, 16, 8, 4), f32(16, 1, 5), i32(2, 5))
		}, quant.F32, [4]int64{8, 2, 5, 1}},
		{"soft_max", func() (*Tensor, error) { return SoftMax(f32(7, 3, 4), f32(7, 8), f32(4), SoftMaxParams{Scale: 1}) }, quant.F32, [4]int64{7, 3, 4, 1}},
		{"flash_attn", func() (*Tensor, error) {
			return FlashAttnExt(f32(64, 5, 8), mustTensor(t, quant.F16, 64, 9, 2), mustTensor(t, quant.F16, 32, 9, 2), mustTensor(t, quant.F16, 9, 5), nil, FlashAttnParams{Scale: 0.125})
		}, quant.F32, [4]int64{32, 8, 5, 1}},
		{"ssm_conv", func() (*Tensor, error) { return SSMConv(f32(3+6, 10, 2), f32(4, 10)) }, quant.F32, [4]int64{10, 6, 2, 1}},
		{"ssm_scan", func() (*Tensor, error) {
			return SSMScan(f32(16, 1, 12, 3), f32(1, 12, 5, 2), f32(12, 5, 2), f32(16, 12), f32(16, 1, 5, 2), f32(16, 1, 5, 2), i32(2))
		}, quant.F32, [4]int64{12*5*2 + 16*12*2, 1, 1, 1}},
		{"rope", func() (*Tensor, error) { return Rope(f32(64, 4, 7), i32(7), nil, DefaultRopeParams(32, RopeNeoX)) }, quant.F32, [4]int64{64, 4, 7, 1}},
		{"get_rows", func() (*Tensor, error) { return GetRows(mustTensor(t, quant.Q6_K, 256, 10), i32(3)) }, quant.F32, [4]int64{256, 3, 1, 1}},
		{"get_rows_i32", func() (*Tensor, error) { return GetRows(i32(4, 10), i32(3)) }, quant.I32, [4]int64{4, 3, 1, 1}},
		{"add", func() (*Tensor, error) { return Add(f32(8, 3, 2), f32(8, 1, 2)) }, quant.F32, [4]int64{8, 3, 2, 1}},
		{"sum_rows", func() (*Tensor, error) { return SumRows(f32(8, 3)) }, quant.F32, [4]int64{1, 3, 1, 1}},
		{"argsort", func() (*Tensor, error) { return Argsort(f32(8, 3), SortDesc) }, quant.I32, [4]int64{8, 3, 1, 1}},
		{"swiglu", func() (*Tensor, error) { return SwiGLU(f32(8, 3), nil, false) }, quant.F32, [4]int64{4, 3, 1, 1}},
		{"cpy", func() (*Tensor, error) { return Cpy(f32(64, 2), mustTensor(t, quant.Q8_0, 128)) }, quant.Q8_0, [4]int64{128, 1, 1, 1}},
	}
	for _, tt := range tests {
		got, err := tt.build()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got.Type != tt.typ || got.Ne != tt.ne {
			t.Errorf("%s: got %v %v, want %v %v", tt.name, got.Type, got.Ne, tt.typ, tt.ne)
		}
	}
}

// TestConstructorRefusals checks that operands an op cannot take are
// errors wrapping ErrShape that name the op.
func TestConstructorRefusals(t *testing.T) {
	f32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.F32, ne...) }
	i32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.I32, ne...) }
	tests := []struct {
		name  string
		build func() (*Tensor, error)
	}{
		{"mul_mat inner", func() (*Tensor, error) { return MulMat(f32(64, 4), f32(32, 2)) }},
		{"mul_mat broadcast", func() (*Tensor, error) { return MulMat(f32(8, 4, 3), f32(8, 2, 4)) }},
		{"mul_mat transposed weights", func() (*Tensor, error) {
			w, _ := Transpose(f32(8, 4))
			return MulMat(w, f32(4, 2))
		}},
		{"mul_mat i32 weights", func() (*Tensor, error) { return MulMat(i32(8, 4), f32(8, 2)) }},
		{"mul_mat nil", func() (*Tensor, error) { return MulMat(nil, f32(8, 2)) }},
		{"mul_mat_id tokens", func() (*Tensor, error) { return MulMatID(f32(8, 4, 3), f32(8, 1, 5), i32(2, 4)) }},
		{"soft_max short mask", func() (*Tensor, error) { return SoftMax(f32(7, 3), f32(7, 2), nil, SoftMaxParams{Scale: 1}) }},
		{"soft_max sinks", func() (*Tensor, error) { return SoftMax(f32(7, 3, 4), nil, f32(3), SoftMaxParams{Scale: 1}) }},
		{"flash_attn gqa", func() (*Tensor, error) {
			return FlashAttnExt(f32(64, 5, 6), f32(64, 9, 4), f32(64, 9, 4), nil, nil, FlashAttnParams{Scale: 1})
		}},
		{"flash_attn q4_K kv", func() (*Tensor, error) {
			k := mustTensor(t, quant.Q4_K, 256, 9, 2)
			return FlashAttnExt(f32(256, 5, 2), k, k, nil, nil, FlashAttnParams{Scale: 1})
		}},
		{"ssm_conv channels", func() (*Tensor, error) { return SSMConv(f32(9, 10), f32(4, 11)) }},
		{"ssm_scan groups", func() (*Tensor, error) {
			return SSMScan(f32(16, 1, 12, 3), f32(1, 12, 5, 2), f32(12, 5, 2), f32(16, 12), f32(16, 5, 5, 2), f32(16, 5, 5, 2), i32(2))
		}},
		{"rope odd dims", func() (*Tensor, error) { return Rope(f32(64, 4, 7), i32(7), nil, DefaultRopeParams(31, RopeNormal)) }},
		{"rope mode", func() (*Tensor, error) { return Rope(f32(64, 4, 7), i32(7), nil, DefaultRopeParams(32, 8)) }},
		{"rope positions", func() (*Tensor, error) { return Rope(f32(64, 4, 7), i32(6), nil, DefaultRopeParams(32, 0)) }},
		{"rms_norm eps", func() (*Tensor, error) { return RMSNorm(f32(8), -1) }},
		{"get_rows ids type", func() (*Tensor, error) { return GetRows(f32(8, 4), f32(2)) }},
		{"add broadcast", func() (*Tensor, error) { return Add(f32(8, 3), f32(8, 2)) }},
		{"swiglu odd", func() (*Tensor, error) { return SwiGLU(f32(7, 3), nil, false) }},
		{"cpy count", func() (*Tensor, error) { return Cpy(f32(8, 3), f32(8, 2)) }},
		{"cpy q8_K", func() (*Tensor, error) { return Cpy(f32(256), mustTensor(t, quant.Q8_K, 256)) }},
	}
	for _, tt := range tests {
		got, err := tt.build()
		if err == nil {
			t.Errorf("%s: accepted, got %v", tt.name, got)
			continue
		}
		if !errors.Is(err, ErrShape) {
			t.Errorf("%s: error %q does not wrap ErrShape", tt.name, err)
		}
		if !strings.Contains(err.Error(), "ops: ") {
			t.Errorf("%s: error %q does not name its package and op", tt.name, err)
		}
	}
}

func TestParseOp(t *testing.T) {
	for _, o := range ComputeOps() {
		got, err := ParseOp(strings.ToLower(o.String()))
		if err != nil || got != o {
			t.Errorf("ParseOp(%q) = %v, %v", o, got, err)
		}
	}
	if _, err := ParseOp("matmul"); err == nil || !strings.Contains(err.Error(), "mul_mat") {
		t.Errorf("ParseOp(matmul) error %v should list the known ops", err)
	}
}

func TestCost(t *testing.T) {
	a := mustTensor(t, quant.Q4_0, 4096, 4096)
	b := mustTensor(t, quant.F32, 4096, 1)
	mm, err := MulMat(a, b)
	if err != nil {
		t.Fatal(err)
	}
	c := CostOf(mm)
	if c.Flops != 2*4096*4096 {
		t.Errorf("mul_mat flops %d", c.Flops)
	}
	wantBytes := int64(4096*4096/32*18 + 4096*4 + 4096*4)
	if c.Bytes != wantBytes {
		t.Errorf("mul_mat bytes %d, want %d", c.Bytes, wantBytes)
	}
}

// TestCostModel: every compute op has a FLOP formula, and views and
// leaves cost nothing.
func TestCostModel(t *testing.T) {
	for _, o := range ComputeOps() {
		if costs[o].flops == nil {
			t.Errorf("%v has no FLOP formula in costs", o)
		}
	}
	a := mustTensor(t, quant.F32, 64, 4)
	v, err := Transpose(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Tensor{a, v} {
		if c := CostOf(x); c != (Cost{}) {
			t.Errorf("%v costs %+v, want nothing", x.Op, c)
		}
	}
	// CPY does not count reading its destination.
	cp, err := Cpy(a, mustTensor(t, quant.F16, 64, 4))
	if err != nil {
		t.Fatal(err)
	}
	if c := CostOf(cp); c.Flops != 0 || c.Bytes != 64*4*4+64*4*2 {
		t.Errorf("cpy f32->f16 costs %+v", c)
	}
}

func TestHostBufferAlignment(t *testing.T) {
	for _, n := range []int64{0, 1, 7, 4096} {
		h, err := NewHostBuffer(n)
		if err != nil {
			t.Fatal(err)
		}
		if h.Size() != n {
			t.Errorf("size %d, want %d", h.Size(), n)
		}
		if n > 0 {
			if p := uintptrOf(h.Bytes()); p%64 != 0 {
				t.Errorf("buffer of %d at %#x is not 64-byte aligned", n, p)
			}
		}
		if _, err := h.WriteAt(make([]byte, 2), n-1); err == nil {
			t.Errorf("write past the end of %d accepted", n)
		}
	}
}

func TestReadOnlyHostBuffer(t *testing.T) {
	mem := make([]byte, 64)
	h := WrapHostBytesReadOnly(mem)
	if _, err := h.WriteAt([]byte{1}, 0); !errors.Is(err, ErrReadOnly) {
		t.Errorf("write into read-only buffer: %v", err)
	}
	x := mustTensor(t, quant.F32, 16)
	x.Buffer = h
	if _, err := x.HostBytes(); err != nil {
		t.Errorf("reading a read-only tensor: %v", err)
	}
	if _, err := x.WritableHostBytes(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("WritableHostBytes of a read-only tensor: %v", err)
	}
	x.Buffer = WrapHostBytes(mem)
	if _, err := x.WritableHostBytes(); err != nil {
		t.Errorf("WritableHostBytes of a writable tensor: %v", err)
	}
}

// TestCheckSSMScan checks that the backends' shared SSM_SCAN check takes
// what SSMScan builds and refuses a node whose operands were changed
// afterwards (a node assembled by hand), naming the operand.
func TestCheckSSMScan(t *testing.T) {
	f32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.F32, ne...) }
	i32 := func(ne ...int64) *Tensor { return mustTensor(t, quant.I32, ne...) }
	build := func() *Tensor {
		n, err := SSMScan(f32(16, 4, 6, 3), f32(4, 6, 5, 2), f32(6, 5, 2), f32(16, 6), f32(16, 2, 5, 2), f32(16, 2, 5, 2), i32(2))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := CheckSSMScan(build()); err != nil {
		t.Fatalf("a built node: %v", err)
	}
	tests := []struct {
		name   string
		change func(n *Tensor)
		want   string
	}{
		{"missing source", func(n *Tensor) { n.Src = n.Src[:6] }, "6 sources"},
		{"nil source", func(n *Tensor) { n.Src[ScanC] = nil }, "C is missing"},
		{"ids type", func(n *Tensor) { n.Src[ScanIDs] = f32(2) }, "ids has type"},
		{"x shape", func(n *Tensor) { n.Src[ScanX] = f32(4, 5, 5, 2) }, "x ["},
		{"dt shape", func(n *Tensor) { n.Src[ScanDt] = f32(6, 4, 2) }, "dt ["},
		{"A shape", func(n *Tensor) { n.Src[ScanA] = f32(8, 6) }, "operand A ["},
		{"B groups", func(n *Tensor) { n.Src[ScanB] = f32(16, 4, 5, 2) }, "operand B ["},
		{"C groups", func(n *Tensor) { n.Src[ScanC] = f32(16, 4, 5, 2) }, "operand C ["},
		{"B and C groups", func(n *Tensor) { n.Src[ScanB], n.Src[ScanC] = f32(16, 1, 5, 2), f32(16, 2, 5, 2) }, "groups"},
		{"ids length", func(n *Tensor) { n.Src[ScanIDs] = i32(3) }, "ids ["},
		{"state slots", func(n *Tensor) { n.Src[ScanState] = f32(16, 4, 6, 1) }, "state slots"},
		{"result type", func(n *Tensor) { n.Type = quant.F16 }, "result type"},
		{"result shape", func(n *Tensor) { n.Ne[0]++ }, "result shape"},
	}
	for _, tt := range tests {
		n := build()
		tt.change(n)
		err := CheckSSMScan(n)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: CheckSSMScan = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}
