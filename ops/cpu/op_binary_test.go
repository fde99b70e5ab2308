package cpu

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Tolerances (NMSE against the float64 reference) of the elementwise ops.
const (
	// tolBinary: one float32 rounding of each result (plus the f16 b
	// read exactly), so NMSE is about 1e-15.
	tolBinary = 1e-12
	// tolActivation: SILU, GELU and SWIGLU take a few float32 roundings
	// around a float64 exp or tanh; NMSE is about 1e-14.
	tolActivation = 1e-12
)

// rowOpCase is one node to build, run and compare.
type rowOpCase struct {
	name  string
	build func(e *rowOpEnv) *ops.Tensor
}

// runRowOpCases runs each case as a subtest, comparing with tolerance tol.
func runRowOpCases(t *testing.T, tol float64, cases []rowOpCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRowOpEnv(t)
			e.check(tc.build(e), tol)
		})
	}
}

func TestBinary(t *testing.T) {
	type shapes struct {
		name string
		a, b func(e *rowOpEnv) *ops.Tensor
	}
	f32 := func(ne ...int64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	for _, s := range []shapes{
		{"same", f32(7, 3, 2, 1), f32(7, 3, 2, 1)},
		{"row", f32(16, 5, 3, 2), f32(16)},
		{"scalar", f32(16, 5, 3, 2), f32(1)},
		{"scalar-per-row", f32(16, 5, 3, 2), f32(1, 5, 3, 2)}, // MoE expert weights
		{"repeat-dim0", f32(16, 5, 3, 2), f32(4, 5, 1, 2)},
		{"repeat-all", f32(12, 6, 4, 2), f32(3, 2, 2, 1)},
		{"b-f16", f32(33, 4, 2), func(e *rowOpEnv) *ops.Tensor { return e.leaf(quant.F16, []int64{33, 1, 2}, nil) }},
		{"a-permuted", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{5, 16, 3}, 1, 0, 2, 3) }, f32(16, 1, 3)},
		{"b-permuted", f32(6, 4, 3, 2), func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{3, 6, 2, 1}, 2, 0, 1, 3) }},
		{"b-strided", f32(8, 4, 3), func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{8, 4, 1, 1}, 2, 3) }},
		{"one-row", f32(33), f32(33)},
		{"one-column", f32(1, 9), f32(1, 9)},
		{"empty-rows", f32(8, 0), f32(8, 1)},
		{"empty-row-length", f32(0, 4), f32(1, 4)},
	} {
		for _, op := range []struct {
			name string
			f    func(a, b *ops.Tensor) (*ops.Tensor, error)
		}{{"add", ops.Add}, {"mul", ops.Mul}} {
			t.Run(op.name+"/"+s.name, func(t *testing.T) {
				e := newRowOpEnv(t)
				e.check(mustNode(t)(op.f(s.a(e), s.b(e))), tolBinary)
			})
		}
	}
}

// TestUnsupported checks that nodes the kernels do not handle are errors
// from Supports and Compute, not panics.
func TestUnsupported(t *testing.T) {
	e := newRowOpEnv(t)
	a := e.f32(8, 2)
	i := e.leaf(quant.I32, []int64{8, 2}, nil)
	q := e.leaf(quant.Q8_0, []int64{32, 2}, nil)
	node := func(op ops.Op, typ quant.Type, ne [4]int64, params any, src ...*ops.Tensor) *ops.Tensor {
		return &ops.Tensor{Op: op, Type: typ, Ne: ne, Nb: ops.ContiguousStrides(typ, ne), Params: params, Src: src}
	}
	be := newTestBackend(t, 2)
	defer be.Close()
	for _, tc := range []struct {
		name string
		t    *ops.Tensor
	}{
		{"add-i32-b", node(ops.OpAdd, quant.F32, a.Ne, nil, a, i)},
		{"add-no-broadcast", node(ops.OpAdd, quant.F32, a.Ne, nil, a, e.f32(3, 2))},
		{"add-one-source", node(ops.OpAdd, quant.F32, a.Ne, nil, a)},
		{"scale-no-params", node(ops.OpScale, quant.F32, a.Ne, nil, a)},
		{"silu-f16-out", node(ops.OpSilu, quant.F16, a.Ne, nil, a)},
		{"silu-shape", node(ops.OpSilu, quant.F32, [4]int64{4, 2, 1, 1}, nil, a)},
		{"swiglu-odd", node(ops.OpSwiGLU, quant.F32, [4]int64{3, 1, 1, 1}, ops.GLUParams{}, e.f32(7))},
		{"rmsnorm-neg-eps", node(ops.OpRMSNorm, quant.F32, a.Ne, ops.NormParams{Eps: -1}, a)},
		{"sumrows-shape", node(ops.OpSumRows, quant.F32, a.Ne, nil, a)},
		{"argsort-order", node(ops.OpArgsort, quant.I32, a.Ne, ops.ArgsortParams{Order: 5}, a)},
		{"argsort-f32-out", node(ops.OpArgsort, quant.F32, a.Ne, ops.ArgsortParams{}, a)},
		{"cont-type", node(ops.OpCont, quant.F16, a.Ne, nil, a)},
		{"cpy-from-q8_0", node(ops.OpCpy, quant.F32, q.Ne, nil, q, e.f32(32, 2))},
		{"softmax-sinks", node(ops.OpSoftMax, quant.F32, a.Ne, ops.SoftMaxParams{Scale: 1}, a, nil, e.f32(3))},
		{"softmax-short-mask", node(ops.OpSoftMax, quant.F32, a.Ne, ops.SoftMaxParams{Scale: 1}, a, e.f32(8, 1))},
		{"rope-mode", node(ops.OpRope, quant.F32, [4]int64{8, 1, 2, 1}, ops.RopeParams{NDims: 8, Mode: 1, FreqBase: 1e4, FreqScale: 1}, e.f32(8, 1, 2), e.leaf(quant.I32, []int64{2}, nil))},
		{"rope-odd-dims", node(ops.OpRope, quant.F32, [4]int64{8, 1, 2, 1}, ops.RopeParams{NDims: 3, FreqBase: 1e4, FreqScale: 1}, e.f32(8, 1, 2), e.leaf(quant.I32, []int64{2}, nil))},
		{"silu-negative-shape", node(ops.OpSilu, quant.F32, [4]int64{-8, -2, 1, 1}, nil, a)},
		{"sumrows-negative-source", node(ops.OpSumRows, quant.F32, [4]int64{1, -2, -1, 1}, nil, &ops.Tensor{Type: quant.F32, Ne: [4]int64{8, -2, -1, 1}, Buffer: a.Buffer})},
		{"ssmconv-shape", node(ops.OpSSMConv, quant.F32, [4]int64{4, 2, 1, 1}, nil, e.f32(6, 4), e.f32(4, 3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := be.Supports(tc.t); err == nil {
				t.Fatalf("Supports accepted %v", tc.t)
			}
			if err := ops.AllocTensor(be, tc.t, 0); err != nil {
				return // no storage for such a shape: nothing to compute
			}
			if err := be.Compute(tc.t); err == nil {
				t.Fatalf("Compute accepted %v", tc.t)
			}
		})
	}
}

// TestEltReach checks that ADD, MUL and SWIGLU give the same bytes on
// every tier whichever kernels the op's reach and thread count pick (the
// one-thread L3 kernels and the streaming ones, the latter with
// non-temporal stores): rows whose
// starts are 64-byte aligned and rows that are not (where the streaming
// kernels fall back to plain stores), broadcast and f16 b.
func TestEltReach(t *testing.T) {
	e := newRowOpEnv(t)
	type node struct {
		name  string
		build func() (*ops.Tensor, error)
	}
	var nodes []node
	for _, k := range []int64{16, 33, 1000, 4096} {
		for _, op := range []struct {
			name string
			f    func(a, b *ops.Tensor) (*ops.Tensor, error)
		}{{"add", ops.Add}, {"mul", ops.Mul}} {
			nodes = append(nodes,
				node{fmt.Sprintf("%s/k=%d", op.name, k), func() (*ops.Tensor, error) { return op.f(e.f32(k, 5), e.f32(k, 5)) }},
				node{fmt.Sprintf("%s-row/k=%d", op.name, k), func() (*ops.Tensor, error) { return op.f(e.f32(k, 5), e.f32(k)) }},
				node{fmt.Sprintf("%s-f16/k=%d", op.name, k), func() (*ops.Tensor, error) {
					return op.f(e.f32(k, 3), e.leaf(quant.F16, []int64{k, 3}, nil))
				}})
		}
		nodes = append(nodes,
			node{fmt.Sprintf("swiglu/k=%d", k), func() (*ops.Tensor, error) { return ops.SwiGLU(e.f32(k, 4), e.f32(k, 4), false) }},
			node{fmt.Sprintf("swiglu-split/k=%d", k), func() (*ops.Tensor, error) { return ops.SwiGLU(e.f32(2*k, 4), nil, true) }})
	}
	for _, tier := range Tiers() {
		if !tier.Supported {
			continue
		}
		var bes []*Backend // one per reach, with one thread and with two
		for _, threads := range []int{1, 2} {
			for r := range 3 {
				b, err := NewWithOptions(Options{Tier: tier.Name, Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				b.l2Bytes, b.llcBytes = 1<<62, 1<<62
				switch reach(r) {
				case reachL3:
					b.l2Bytes = 0
				case reachDRAM:
					b.l2Bytes, b.llcBytes = 0, 0
				}
				bes = append(bes, b)
			}
		}
		for _, nd := range nodes {
			n, err := nd.build()
			if err != nil {
				t.Fatal(err)
			}
			if err := ops.AllocTensor(e.alloc, n, 64); err != nil {
				t.Fatal(err)
			}
			hb, off := n.Storage()
			mem := hb.(*ops.HostBuffer).Bytes()[off : off+n.Bytes()]
			var ref []byte
			for i, b := range bes {
				r := i % 3
				if got := b.reach(n, n.Src[0], srcAt(n, 1)); got != reach(r) {
					t.Fatalf("%s: reach %d, want %d", nd.name, got, r)
				}
				clear(mem)
				if err := b.Compute(n); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					ref = bytes.Clone(mem)
				} else if !bytes.Equal(mem, ref) {
					t.Errorf("%s %s: reach %d with %d threads differs from reach 0 with one", tier.Name, nd.name, r, b.pool.threads)
				}
			}
		}
	}
}

// TestBinaryKernelChoice checks which row kernel ADD and MUL take by
// reach, thread count and EltL3Bytes where a tier has L3 kernels: the L3
// ones with one thread, with two the plain ones by default and the L3
// ones at 32 bytes, the plain ones within the L2s and the streaming ones
// past the last level cache whatever the threads and width.
func TestBinaryKernelChoice(t *testing.T) {
	ptr := func(f func(out, x, y []float32)) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, tier := range Tiers() {
		if !tier.Supported {
			continue
		}
		b, err := NewWithOptions(Options{Tier: tier.Name, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		k := &b.kern.elt
		b.Close()
		if k.addL3 == nil {
			continue
		}
		for _, tc := range []struct {
			op      ops.Op
			r       reach
			threads int
			l3Bytes int
			want    func(out, x, y []float32)
		}{
			{ops.OpAdd, reachL2, 1, 64, k.add},
			{ops.OpAdd, reachL2, 2, 32, k.add},
			{ops.OpAdd, reachL3, 1, 64, k.addL3},
			{ops.OpAdd, reachL3, 2, 64, k.add},
			{ops.OpAdd, reachL3, 2, 32, k.addL3},
			{ops.OpMul, reachL3, 1, 64, k.mulL3},
			{ops.OpMul, reachL3, 2, 64, k.mul},
			{ops.OpMul, reachL3, 2, 32, k.mulL3},
			{ops.OpAdd, reachDRAM, 2, 32, k.addStream},
			{ops.OpMul, reachDRAM, 1, 64, k.mulStream},
		} {
			if got := k.binaryKernel(tc.op, tc.r, tc.threads, tc.l3Bytes); ptr(got) != ptr(tc.want) {
				t.Errorf("%s: %v at reach %d with %d threads and %d-byte vectors took another kernel", tier.Name, tc.op, tc.r, tc.threads, tc.l3Bytes)
			}
		}
	}
}

// TestCacheSizes checks the cache sizes the elementwise kernels are
// picked by: the L2s grow with the threads, the last level cache is at
// least as large.
func TestCacheSizes(t *testing.T) {
	l2one, llcOne := cacheSizes(1)
	l2two, llcTwo := cacheSizes(2)
	if l2one <= 0 || l2two != 2*l2one || llcOne < l2one || llcTwo < l2two {
		t.Errorf("cacheSizes(1) = %d, %d; cacheSizes(2) = %d, %d", l2one, llcOne, l2two, llcTwo)
	}
}
