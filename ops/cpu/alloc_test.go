package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestNoAllocs checks that computing a hot node again allocates nothing:
// MUL_MAT at n = 1 and n = 8 (the dot and gemm paths) for each kind of
// weight type, FLASH_ATTN_EXT, SOFT_MAX and RMS_NORM, on every tier and
// with several threads. The first Compute may grow the backend's scratch;
// later ones reuse it.
func TestNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(51, 52))
		nodes := map[string]*ops.Tensor{}
		for _, wt := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q8_0, quant.Q4_1, quant.Q4_K, quant.Q6_K, quant.MXFP4, quant.IQ2_XXS} {
			for _, n := range []int64{1, 8, 32} {
				a := mxLeaf(t, b, rng, "a", wt, 512, 64)
				x := mxLeaf(t, b, rng, "x", quant.F32, 512, n)
				nodes[fmt.Sprintf("mul_mat/%v/n=%d", wt, n)] = mustNode(t)(ops.MulMat(a, x))
			}
		}
		// A transposed (strided) f16 activation takes the conversion path.
		xt := mxLeaf(t, b, rng, "xt", quant.F16, 8, 512)
		xtv, err := ops.Transpose(xt)
		if err != nil {
			t.Fatal(err)
		}
		nodes["mul_mat/q4_K/strided-f16"] = mustNode(t)(ops.MulMat(mxLeaf(t, b, rng, "a", quant.Q4_K, 512, 32), xtv))

		for _, kt := range []quant.Type{quant.F16, quant.Q8_0} {
			q := mxLeaf(t, b, rng, "q", quant.F32, 64, 2, 4)
			k := mxLeaf(t, b, rng, "k", kt, 64, 40, 2)
			v := mxLeaf(t, b, rng, "v", kt, 64, 40, 2)
			mask := mxLeaf(t, b, rng, "mask", quant.F16, 40, 2)
			sinks := mxLeaf(t, b, rng, "sinks", quant.F32, 4)
			nodes["flash_attn/"+kt.String()] = mustNode(t)(ops.FlashAttnExt(q, k, v, mask, sinks, ops.FlashAttnParams{Scale: 0.125, MaxBias: 8}))
		}
		logits := mxLeaf(t, b, rng, "logits", quant.F32, 256, 8, 4)
		smask := mxLeaf(t, b, rng, "mask", quant.F16, 256, 8)
		nodes["soft_max"] = mustNode(t)(ops.SoftMax(logits, smask, nil, ops.SoftMaxParams{Scale: 0.5}))
		nodes["rms_norm"] = mustNode(t)(ops.RMSNorm(mxLeaf(t, b, rng, "x", quant.F32, 4096, 16), 1e-5))
		ex := mxLeaf(t, b, rng, "x", quant.F32, 1024, 8)
		nodes["add/broadcast"] = mustNode(t)(ops.Add(ex, mxLeaf(t, b, rng, "w", quant.F32, 1024)))
		nodes["mul"] = mustNode(t)(ops.Mul(ex, mxLeaf(t, b, rng, "y", quant.F32, 1024, 8)))
		nodes["silu"] = mustNode(t)(ops.Silu(ex))
		for _, ct := range []quant.Type{quant.F16, quant.Q8_0} {
			dst, err := ops.NewTensor("cache", ct, 1024, 8)
			if err != nil {
				t.Fatal(err)
			}
			mxAlloc(t, b, dst, 0)
			nodes["cpy/f32-"+ct.String()] = mustNode(t)(ops.Cpy(ex, dst))
		}
		for _, gt := range []quant.Type{quant.Q4_0, quant.Q4_K} {
			ids := mxIDs(t, b, "ids", []int32{3, 1, 4, 1, 5, 9, 2, 6}, 8)
			nodes["get_rows/"+gt.String()] = mustNode(t)(ops.GetRows(mxLeaf(t, b, rng, "table", gt, 256, 16), ids))
		}
		nodes["swiglu"] = mustNode(t)(ops.SwiGLU(ex, mxLeaf(t, b, rng, "u", quant.F32, 1024, 8), false))

		for name, node := range nodes {
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			allocs := testing.AllocsPerRun(20, func() {
				if err := b.Compute(node); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s: %v allocations per Compute", name, allocs)
			}
		}
	})
}

// TestCheckedAgainAfterChange checks that a node computed once is checked
// again when anything the checks read changes: a source replaced by one
// of another shape or type, or the node's own shape, each of which the
// op cannot take. A memo that skipped them would compute out of bounds.
func TestCheckedAgainAfterChange(t *testing.T) {
	b, err := NewWithOptions(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(53, 54))
	fresh := func() *ops.Tensor {
		x := mxLeaf(t, b, rng, "x", quant.F32, 64, 4)
		node := mustNode(t)(ops.Add(x, mxLeaf(t, b, rng, "y", quant.F32, 64, 4)))
		mxAlloc(t, b, node, 0)
		if err := b.Compute(node); err != nil {
			t.Fatal(err)
		}
		return node
	}
	for _, c := range []struct {
		name   string
		change func(n *ops.Tensor)
	}{
		{"source of another shape", func(n *ops.Tensor) { n.Src[1] = mxLeaf(t, b, rng, "y", quant.F32, 48, 4) }},
		{"source of another type", func(n *ops.Tensor) { n.Src[1] = mxLeaf(t, b, rng, "y", quant.Q8_0, 64, 4) }},
		{"node reshaped in place", func(n *ops.Tensor) { n.Ne[0] = 128 }},
		{"copy carrying the memo", func(n *ops.Tensor) {
			twin := *n
			twin.Src = []*ops.Tensor{n.Src[0], mxLeaf(t, b, rng, "y", quant.F32, 48, 4)}
			*n = twin
		}},
	} {
		node := fresh()
		c.change(node)
		if err := b.Compute(node); err == nil {
			t.Errorf("%s: Compute accepted a node its op cannot take", c.name)
		}
	}
}

// TestSignatureMatches checks the in-place comparison of a node's
// signature against each kind of change, among them parameters of
// another value and of another, non-comparable, type (which must not
// panic).
func TestSignatureMatches(t *testing.T) {
	x := &ops.Tensor{Type: quant.F32, Ne: [ops.MaxDims]int64{8, 2, 1, 1}, Nb: [ops.MaxDims]int64{4, 32, 64, 64}}
	y := &ops.Tensor{Type: quant.F32, Ne: x.Ne, Nb: x.Nb}
	node := func() *ops.Tensor {
		src := *x // a source of its own, changed in place below
		return &ops.Tensor{Op: ops.OpSoftMax, Type: quant.F32, Ne: x.Ne, Nb: x.Nb, Src: []*ops.Tensor{&src, nil}, Params: [2]float32{1, 0}}
	}
	for _, c := range []struct {
		name   string
		change func(n *ops.Tensor)
		same   bool
	}{
		{"unchanged", func(*ops.Tensor) {}, true},
		{"another op", func(n *ops.Tensor) { n.Op = ops.OpScale }, false},
		{"params of another value", func(n *ops.Tensor) { n.Params = [2]float32{2, 0} }, false},
		{"params of another comparable type", func(n *ops.Tensor) { n.Params = 1.0 }, false},
		{"params of a non-comparable type", func(n *ops.Tensor) { n.Params = []float32{1, 0} }, false},
		{"no params", func(n *ops.Tensor) { n.Params = nil }, false},
		{"a nil source set", func(n *ops.Tensor) { n.Src[1] = y }, false},
		{"a source dropped", func(n *ops.Tensor) { n.Src = n.Src[:1] }, false},
		{"another source", func(n *ops.Tensor) { n.Src[0] = y }, false},
		{"a source's strides", func(n *ops.Tensor) { n.Src[0].Nb[1] = 64 }, false},
		{"a source's shape", func(n *ops.Tensor) { n.Src[0].Ne[0] = 4 }, false},
		{"the node's type", func(n *ops.Tensor) { n.Type = quant.F16 }, false},
	} {
		n := node()
		s, ok := signature(n)
		if !ok {
			t.Fatal("no signature")
		}
		c.change(n)
		if got := s.matches(n); got != c.same {
			t.Errorf("%s: matches %v, want %v", c.name, got, c.same)
		}
	}
}
