package reference

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func TestEveryOpHasAReference(t *testing.T) {
	for _, op := range ops.ComputeOps() {
		if opFuncs[op] == nil {
			t.Errorf("no reference for %v", op)
		}
	}
}

// sampleNodes returns one small valid node of every compute op.
func sampleNodes(t *testing.T) []*ops.Tensor {
	t.Helper()
	m := must(t)
	x := func() *ops.Tensor { return f32(t, dims(4, 2), 1, 2, 3, 4, 5, 6, 7, 8) }
	dst := m(ops.NewTensor("dst", quant.F16, 4, 2))
	buf, err := ops.NewHostBuffer(dst.Extent())
	if err != nil {
		t.Fatal(err)
	}
	dst.Buffer = buf
	return []*ops.Tensor{
		m(ops.MulMat(x(), x())),
		m(ops.MulMatID(f32(t, dims(2, 1, 2), 1, 2, 3, 4), f32(t, dims(2, 1, 1), 1, 1), i32(t, dims(1, 1), 1))),
		m(ops.SoftMax(x(), f32(t, dims(4, 2), 0, 0, 0, 0, 0, 0, 0, 0), f32(t, dims(1), 0), ops.SoftMaxParams{Scale: 1})),
		m(ops.FlashAttnExt(f32(t, dims(2, 1, 1), 1, 0), f32(t, dims(2, 2), 1, 0, 0, 1), f32(t, dims(2, 2), 1, 0, 0, 1),
			f32(t, dims(2, 1), 0, 0), f32(t, dims(1), 0), ops.FlashAttnParams{Scale: 1})),
		m(ops.SSMConv(f32(t, dims(3, 1, 1), 1, 2, 3), f32(t, dims(2, 1), 1, 1))),
		m(ops.SSMScan(f32(t, dims(1, 1, 1, 1), 0), f32(t, dims(1, 1, 1, 1), 1), f32(t, dims(1, 1, 1), 0),
			f32(t, dims(1, 1), 0), f32(t, dims(1, 1, 1, 1), 1), f32(t, dims(1, 1, 1, 1), 1), i32(t, dims(1), 0))),
		m(ops.Rope(x(), i32(t, dims(1), 3), f32(t, dims(2), 1, 1), ops.DefaultRopeParams(4, ops.RopeNeoX))),
		m(ops.RMSNorm(x(), 1e-6)),
		m(ops.GetRows(x(), i32(t, dims(1), 1))),
		m(ops.Add(x(), x())),
		m(ops.Mul(x(), f32(t, dims(1), 2))),
		m(ops.Scale(x(), 2, 0)),
		m(ops.Cpy(x(), dst)),
		m(ops.Cont(x())),
		m(ops.Silu(x())),
		m(ops.Gelu(x())),
		m(ops.SwiGLU(x(), nil, false)),
		m(ops.Argsort(x(), ops.SortDesc)),
		m(ops.SumRows(x())),
		m(ops.SwiGLUOAI(x(), x(), 1.702, 7)),
	}
}

func TestSampleNodesCompute(t *testing.T) {
	nodes := sampleNodes(t)
	seen := map[ops.Op]bool{}
	for _, n := range nodes {
		seen[n.Op] = true
		got, err := Compute(n)
		if err != nil {
			t.Errorf("%v: %v", n.Op, err)
			continue
		}
		if int64(len(got)) != n.NumElements() {
			t.Errorf("%v: %d values for %d elements", n.Op, len(got), n.NumElements())
		}
	}
	for _, op := range ops.ComputeOps() {
		if !seen[op] {
			t.Errorf("no sample node for %v", op)
		}
	}
}

func TestComputeLeavesAndViews(t *testing.T) {
	a := grid(t, 3, 2)
	for _, x := range []*ops.Tensor{a, must(t)(ops.Transpose(a))} {
		got := compute(t, x)
		want, err := Read(x)
		if err != nil {
			t.Fatal(err)
		}
		near(t, got, want, 0)
	}
}

func TestComputeErrors(t *testing.T) {
	x := func() *ops.Tensor { return f32(t, dims(2, 2), 1, 2, 3, 4) }
	m := must(t)

	unallocated := m(ops.MulMat(m(ops.NewTensor("w", quant.F32, 2, 2)), x()))
	reshaped := m(ops.MulMat(x(), x()))
	reshaped.Ne[0] = 3
	badParams := m(ops.SoftMax(x(), nil, nil, ops.SoftMaxParams{Scale: 1}))
	badParams.Params = ops.NormParams{}
	noParams := m(ops.RMSNorm(x(), 0))
	noParams.Params = nil
	missing := m(ops.MulMat(x(), x()))
	missing.Src = missing.Src[:1]
	wrongType := m(ops.Rope(x(), i32(t, dims(1), 0), nil, ops.DefaultRopeParams(2, ops.RopeNormal)))
	wrongType.Src[ops.RopePos] = f32(t, dims(1), 0)
	sinkUnallocated := m(ops.SoftMax(x(), nil, m(ops.NewTensor("s", quant.F32, 1)), ops.SoftMaxParams{Scale: 1}))
	threeSources := m(ops.SwiGLU(x(), x(), false))
	threeSources.Src = append(threeSources.Src, x())
	huge := m(ops.Silu(x()))
	huge.Ne = [4]int64{1 << 20, 1 << 20, 1 << 20, 1}

	tests := []struct {
		name string
		x    *ops.Tensor
	}{
		{"nil", nil},
		{"unknown op", &ops.Tensor{Op: ops.Op(999), Type: quant.F32, Ne: [4]int64{1, 1, 1, 1}}},
		{"unallocated source", unallocated},
		{"shape its operands do not give", reshaped},
		{"wrong parameter type", badParams},
		{"no parameters", noParams},
		{"missing source", missing},
		{"wrong source type", wrongType},
		{"unallocated optional source", sinkUnallocated},
		{"too many sources", threeSources},
		{"too many elements", huge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := Compute(tc.x); err == nil {
				t.Fatalf("Compute = %v, want an error", got)
			}
		})
	}
}

// TestComputeDamagedNodes replaces each source of every sample node with
// nil, a one-element tensor, an unallocated tensor and a tensor with a
// negative size, and checks that Compute answers (a value or an error)
// without panicking.
func TestComputeDamagedNodes(t *testing.T) {
	for _, n := range sampleNodes(t) {
		for i := range n.Src {
			neg := f32(t, dims(1), 0)
			neg.Ne[1] = -1
			for _, s := range []*ops.Tensor{
				nil,
				f32(t, dims(1), 0),
				i32(t, dims(1), 5),
				must(t)(ops.NewTensor("u", quant.F32, 4, 2)),
				neg,
			} {
				d := *n
				d.Src = append([]*ops.Tensor(nil), n.Src...)
				d.Src[i] = s
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%v with source %d = %v: panic %v", n.Op, i, s, r)
						}
					}()
					Compute(&d)
				}()
			}
		}
	}
}
