package cpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// checkCpy runs the CPY node and checks its result exactly: each
// destination element is the source element of the same logical index
// rounded to the destination type, and a quantized destination holds
// exactly the bytes quant.QuantizeRow makes of its rows.
func (e *rowOpEnv) checkCpy(node *ops.Tensor) {
	e.t.Helper()
	src, err := reference.Read(node.Src[0])
	if err != nil {
		e.t.Fatal(err)
	}
	got := e.run(node)
	vals := make([]float32, len(src))
	for i, v := range src {
		vals[i] = float32(v)
	}
	if node.Type.IsQuantized() {
		raw := encodeValues(e.t, node.Type, node.Ne[0], src)
		b, err := node.HostBytes()
		if err != nil {
			e.t.Fatal(err)
		}
		if !bytes.Equal(b[:len(raw)], raw) {
			e.t.Fatalf("quantized bytes differ from quant.QuantizeRow's")
		}
		return
	}
	for i, v := range vals {
		want := float64(v)
		switch node.Type {
		case quant.F16:
			want = float64(quant.FP16ToFP32(quant.FP32ToFP16(v)))
		case quant.BF16:
			want = float64(quant.BF16ToFP32(quant.FP32ToBF16(v)))
		}
		if got[i] != want {
			e.t.Fatalf("element %d = %v, want %v", i, got[i], want)
		}
	}
}

func TestCpy(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	leaf := func(typ quant.Type, ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.leaf(typ, ne, e.uniform(ne2n(ne), -3, 3)) }
	}
	// rowsView is a view of rows [first, first+n) of a leaf of type typ and
	// shape [ne0, total].
	rowsView := func(typ quant.Type, ne0, total, first, n int64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			base := e.leaf(typ, []int64{ne0, total}, nil)
			return mustNode(e.t)(ops.View(base, []int64{ne0, n}, []int64{0, base.Nb[1]}, first*base.Nb[1]))
		}
	}
	// transposed is the transpose of a leaf of type typ and shape [n1, n0].
	transposed := func(typ quant.Type, n1, n0 int64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			return mustNode(e.t)(ops.Transpose(e.leaf(typ, []int64{n1, n0}, nil)))
		}
	}
	// colsView is a view of elements [first, first+n) of every row of a
	// leaf of type typ and shape [ne0, rows] (Mamba's conv state window).
	colsView := func(typ quant.Type, ne0, rows, first, n int64) build {
		return func(e *rowOpEnv) *ops.Tensor {
			base := e.leaf(typ, []int64{ne0, rows}, nil)
			return mustNode(e.t)(ops.View(base, []int64{n, rows}, []int64{base.Nb[0], base.Nb[1]}, first*base.Nb[0]))
		}
	}
	cases := []struct {
		name string
		a, b build
	}{
		// Same type: bytes move unchanged (cpySame), inline when small
		// and over the workers past cpySameBytes.
		{"same-into-row-tails", leaf(quant.F32, 3, 40), colsView(quant.F32, 4, 40, 1, 3)},
		{"same-from-row-tails", colsView(quant.F32, 4, 40, 1, 3), leaf(quant.F32, 3, 40)},
		{"same-one-column", colsView(quant.F16, 4, 300, 3, 1), colsView(quant.F16, 2, 300, 0, 1)},
		{"f16-f16-transposed-reshape", transposed(quant.F16, 9, 13), leaf(quant.F16, 9, 13)},
		{"same-bf16-into-transposed", leaf(quant.BF16, 6, 16), transposed(quant.BF16, 16, 6)},
		{"same-permuted-large", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{64, 48, 24}, 1, 2, 0, 3) }, leaf(quant.F32, 24, 64, 48)},
		{"f32-f32-strided-reshape", func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{10, 3, 2, 1}, 2, 1) }, leaf(quant.F32, 20, 3)},
		{"same-contiguous-large", leaf(quant.F32, 70001), leaf(quant.F32, 70001)},
		{"same-contiguous-reshape-large", leaf(quant.F16, 500, 300), leaf(quant.F16, 300, 500)},
		{"same-into-rows-large", leaf(quant.F32, 4096, 20), rowsView(quant.F32, 4096, 30, 7, 20)},
		{"f32-f32", leaf(quant.F32, 7, 3, 2), leaf(quant.F32, 7, 3, 2)},
		{"f32-f16", leaf(quant.F32, 33, 5), leaf(quant.F16, 33, 5)},
		{"f32-bf16", leaf(quant.F32, 33, 5), leaf(quant.BF16, 33, 5)},
		{"f16-f32", leaf(quant.F16, 17, 4), leaf(quant.F32, 17, 4)},
		{"bf16-f16", leaf(quant.BF16, 17, 4), leaf(quant.F16, 17, 4)},
		{"f16-bf16", leaf(quant.F16, 9, 2, 3), leaf(quant.BF16, 9, 2, 3)},
		{"reshape", leaf(quant.F32, 6, 4, 2), leaf(quant.F16, 12, 4)},
		{"flatten", leaf(quant.F32, 3, 5, 2, 2), leaf(quant.F32, 60)},
		{"unflatten", leaf(quant.F32, 48), leaf(quant.F32, 8, 3, 2)},
		{"permuted-source", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{5, 8, 3}, 1, 2, 0, 3) }, leaf(quant.F16, 8, 3, 5)},
		{"strided-source", func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{10, 3, 2, 1}, 3, 2) }, leaf(quant.F32, 60)},
		{"into-cache-rows", leaf(quant.F32, 64, 4), rowsView(quant.F16, 64, 10, 3, 4)},
		// K of a micro-batch, [head size, heads, tokens], into cache rows
		// [head size * heads, tokens]: the flat rows path.
		{"heads-into-cache-rows", leaf(quant.F32, 16, 4, 3), rowsView(quant.F16, 64, 10, 3, 3)},
		{"heads-into-quantized-rows", leaf(quant.F32, 32, 2, 3), rowsView(quant.Q8_0, 64, 10, 5, 3)},
		{"into-transposed-cache", leaf(quant.F32, 6, 16), transposed(quant.F16, 16, 6)},
		{"transposed-to-transposed", transposed(quant.F32, 5, 7), transposed(quant.BF16, 7, 5)},
		{"long-row", leaf(quant.F32, 10000, 2), leaf(quant.F16, 10000, 2)},
		{"one", leaf(quant.F32, 1), leaf(quant.F16, 1)},
		{"empty", leaf(quant.F32, 0, 4), leaf(quant.F16, 4, 0)},
		{"into-quantized-rows", leaf(quant.F32, 64, 3), rowsView(quant.Q8_0, 64, 10, 2, 3)},
		{"quantized-long-row", leaf(quant.F32, 9984), leaf(quant.Q4_0, 9984)},
		{"quantized-from-permuted", func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{3, 64}, 1, 0, 2, 3) }, leaf(quant.Q5_1, 64, 3)},
		{"quantized-from-f16", leaf(quant.F16, 32, 16), leaf(quant.Q8_0, 256, 2)},
	}
	for _, typ := range quant.Types() {
		if typ.IsQuantized() && typ != quant.Q8_K && typ != quant.Q8_1 && quant.CanQuantize(typ) {
			cases = append(cases, struct {
				name string
				a, b build
			}{fmt.Sprintf("f32-%v", typ), leaf(quant.F32, 512, 3), leaf(typ, 512, 3)})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRowOpEnv(t)
			e.checkCpy(mustNode(t)(ops.Cpy(tc.a(e), tc.b(e))))
		})
	}
}

// ne2n returns the number of elements of shape ne.
func ne2n(ne []int64) int64 {
	n := int64(1)
	for _, x := range ne {
		n *= x
	}
	return n
}

// TestCpyRefusesCodebookTypes checks that CPY into a type quant cannot
// encode (IQ2_XXS, IQ2_XS, IQ1_S, IQ1_M) is refused by Supports,
// naming the type, rather than failing in Compute.
func TestCpyRefusesCodebookTypes(t *testing.T) {
	b := newTestBackend(t, 1)
	t.Cleanup(func() { b.Close() })
	for _, typ := range []quant.Type{quant.IQ2_XXS, quant.IQ2_XS, quant.IQ1_S, quant.IQ1_M} {
		a, err := ops.NewTensor("a", quant.F32, 256, 2)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := ops.NewTensor("dst", typ, 256, 2)
		if err != nil {
			t.Fatal(err)
		}
		node, err := ops.Cpy(a, dst)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Supports(node); err == nil || !strings.Contains(err.Error(), typ.String()) {
			t.Errorf("Supports(CPY f32 -> %v) = %v, want a refusal naming the type", typ, err)
		}
	}
}

// TestCopyShortRows checks copyGrid's rows of one to four 4-byte
// elements (copyShortRows4) and, past them, five, against an element by
// element copy, over row counts and gapped row strides on both sides:
// every element lands, and no byte between the rows changes.
func TestCopyShortRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for n := int64(1); n <= 5; n++ {
		for _, rows := range []int64{1, 2, 7, 100} {
			for _, gaps := range [][2]int64{{0, 0}, {4, 0}, {0, 12}, {8, 4}} {
				srow, drow := 4*n+gaps[0], 4*n+gaps[1]
				soff, doff := int64(4*rng.IntN(3)), int64(4*rng.IntN(3))
				src := make([]byte, soff+rows*srow)
				dst := make([]byte, doff+rows*drow+8)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				for i := range dst {
					dst[i] = byte(rng.Uint32())
				}
				want := bytes.Clone(dst)
				for r := range rows {
					copy(want[doff+r*drow:][:4*n], src[soff+r*srow:][:4*n])
				}
				copyGrid(dst, doff, drow, 4, src, soff, srow, 4, 4, n, rows)
				if !bytes.Equal(dst, want) {
					t.Fatalf("n=%d rows=%d strides %d/%d offsets %d/%d: the copy differs", n, rows, srow, drow, soff, doff)
				}
			}
		}
	}
}
