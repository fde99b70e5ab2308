package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// faCase is one FLASH_ATTN_EXT shape.
type faCase struct {
	name           string
	d, dv          int64
	nQ, nKV        int64
	nHead, nHeadKV int64
	q3, k3         int64
	mask           quant.Type // F32 or F16; 0 (F32) with noMask means none
	noMask         bool
	maskRows       int64 // mask.Ne[1] (>= nQ), 0 for nQ
	m2, m3         int64 // mask broadcast dims (0 for 1)
	maskedQuery    int64 // a query row whose keys are all masked, -1 none
	sinks          bool
	params         ops.FlashAttnParams
	permQ          bool         // q is a permuted view
	causal         bool         // mask key ik for query iq when ik > iq + nKV - nQ (instead of scattered keys)
	kvTypes        []quant.Type // K types to run; nil for all
}

// faTol is the NMSE a FLASH_ATTN_EXT result may have against the float64
// reference, which uses the same (dequantized) K and V but the exact
// query. The error comes from converting the query to K's vec-dot type:
//
//   - f32 K: float32 arithmetic only (dot, exp, online rescaling), NMSE
//     ~1e-13; allow 1e-10.
//   - f16 K: query rounded to f16 (relative 2^-11 per element), so logits
//     move by ~1e-4 of their size and the softmax weights as much; NMSE
//     ~1e-9; allow 1e-6.
//   - q8_0 and q4_0 K: query quantized to q8_0 (step amax/127 per 32
//     elements), logits move by ~|k|*step*sqrt(d/12) ~ 3e-3 here, softmax
//     weights by as much relative; NMSE ~1e-6..1e-5; allow 1e-4.
func faTol(k quant.Type) float64 {
	switch k {
	case quant.F32:
		return 1e-10
	case quant.F16:
		return 1e-6
	default:
		return 1e-4
	}
}

func TestFlashAttnExt(t *testing.T) {
	all := []quant.Type{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0}
	floats := []quant.Type{quant.F32, quant.F16}
	plain := ops.FlashAttnParams{Scale: 0.5}
	cases := []faCase{
		{name: "nomask", d: 64, dv: 64, nQ: 3, nKV: 37, nHead: 4, nHeadKV: 4, q3: 1, k3: 1, noMask: true, maskedQuery: -1, params: plain},
		{name: "gqa4-mask-f16", d: 64, dv: 64, nQ: 5, nKV: 40, nHead: 8, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskRows: 8, maskedQuery: -1, params: plain},
		{name: "gqa8-mask-f32", d: 32, dv: 32, nQ: 4, nKV: 19, nHead: 8, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F32, m2: 8, maskedQuery: -1, params: plain},
		{name: "head40", d: 40, dv: 40, nQ: 3, nKV: 21, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, params: plain, kvTypes: floats},
		{name: "dv-differs", d: 64, dv: 32, nQ: 2, nKV: 9, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1, params: plain},
		{name: "all-masked", d: 32, dv: 32, nQ: 3, nKV: 11, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 1, params: plain},
		{name: "sinks", d: 32, dv: 32, nQ: 3, nKV: 13, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 2, sinks: true, params: plain},
		{name: "softcap", d: 64, dv: 64, nQ: 2, nKV: 17, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 4, Softcap: 3}},
		{name: "alibi", d: 32, dv: 32, nQ: 3, nKV: 15, nHead: 6, nHeadKV: 3, q3: 1, k3: 1, mask: quant.F32, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.5, MaxBias: 8}},
		{name: "dim3", d: 32, dv: 32, nQ: 2, nKV: 7, nHead: 2, nHeadKV: 1, q3: 4, k3: 2, mask: quant.F16, m3: 2, maskedQuery: -1, params: plain},
		{name: "permuted-q", d: 32, dv: 32, nQ: 5, nKV: 9, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, permQ: true, params: plain},
		{name: "no-keys", d: 32, dv: 32, nQ: 2, nKV: 0, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, noMask: true, maskedQuery: -1, sinks: true, params: plain},
		// Head sizes 8 and 16 (the small-head kernels on AVX2 for f16 K/V).
		{name: "head8-gqa-f16mask", d: 8, dv: 8, nQ: 9, nKV: 40, nHead: 8, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, params: plain, kvTypes: floats},
		{name: "head16-sinks-long", d: 16, dv: 16, nQ: 5, nKV: 300, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 2, sinks: true, params: plain, kvTypes: floats},
		{name: "head16-dv8-nomask", d: 16, dv: 8, nQ: 3, nKV: 33, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1, params: plain, kvTypes: floats},
		{name: "head8-softcap", d: 8, dv: 8, nQ: 2, nKV: 17, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 4, Softcap: 3}, kvTypes: floats},
	}
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(31, 32))
		for _, c := range cases {
			types := all
			if c.kvTypes != nil {
				types = c.kvTypes
			}
			for _, kt := range types {
				vts := []quant.Type{kt}
				if kt == quant.F16 && c.dv%32 == 0 {
					vts = append(vts, quant.Q8_0) // mixed K/V types
				}
				for _, vt := range vts {
					t.Run(c.name+"/k="+kt.String()+",v="+vt.String(), func(t *testing.T) {
						node := faBuild(t, b, rng, c, kt, vt)
						e := mxCheck(t, b, node, faTol(kt))
						t.Logf("nmse %.3g", e)
					})
				}
			}
		}
	})
}

// faBuild allocates and fills the operands of case c and returns the node.
func faBuild(t testing.TB, b *Backend, rng *rand.Rand, c faCase, kt, vt quant.Type) *ops.Tensor {
	t.Helper()
	var q *ops.Tensor
	if c.permQ {
		base := mxLeaf(t, b, rng, "qT", quant.F32, c.d, c.nHead, c.nQ, c.q3)
		v, err := ops.Permute(base, 0, 2, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		q = v
	} else {
		q = mxLeaf(t, b, rng, "q", quant.F32, c.d, c.nQ, c.nHead, c.q3)
	}
	k := mxLeaf(t, b, rng, "k", kt, c.d, c.nKV, c.nHeadKV, c.k3)
	v := mxLeaf(t, b, rng, "v", vt, c.dv, c.nKV, c.nHeadKV, c.k3)
	var mask, sinks *ops.Tensor
	if !c.noMask {
		rows := max(c.maskRows, c.nQ)
		m2, m3 := max(c.m2, 1), max(c.m3, 1)
		mt, err := ops.NewTensor("mask", c.mask, c.nKV, rows, m2, m3)
		if err != nil {
			t.Fatal(err)
		}
		mxAlloc(t, b, mt, 0)
		vals := make([]float32, mt.NumElements())
		for i := range vals {
			ik, iq := int64(i)%c.nKV, int64(i)/c.nKV%rows
			switch {
			case iq == c.maskedQuery:
				vals[i] = float32(math.Inf(-1))
			case c.causal:
				if ik > iq+c.nKV-c.nQ {
					vals[i] = float32(math.Inf(-1))
				} else {
					vals[i] = -2 * rng.Float32()
				}
			case (ik+iq)%5 == 0:
				vals[i] = float32(math.Inf(-1)) // scattered masked keys
			default:
				vals[i] = -2 * rng.Float32()
			}
		}
		mxFill(t, mt, vals)
		mask = mt
	}
	if c.sinks {
		sinks = mxLeaf(t, b, rng, "sinks", quant.F32, c.nHead)
	}
	node, err := ops.FlashAttnExt(q, k, v, mask, sinks, c.params)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// TestFlashAttnMaskedRowIsZero checks that a query whose keys are all
// masked yields exact zeros, with and without a sink.
func TestFlashAttnMaskedRowIsZero(t *testing.T) {
	for _, sinks := range []bool{false, true} {
		b := newTestBackend(t, 2)
		rng := rand.New(rand.NewPCG(33, 34))
		c := faCase{d: 32, dv: 32, nQ: 3, nKV: 6, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 1, sinks: sinks, params: ops.FlashAttnParams{Scale: 1}}
		node := faBuild(t, b, rng, c, quant.F16, quant.F16)
		if err := mxCompute(t, b, node); err != nil {
			t.Fatal(err)
		}
		out := f32s(mem(node), 0, node.NumElements())
		for h := range c.nHead {
			row := out[c.dv*(h+c.nHead*1):][:c.dv]
			for i, x := range row {
				if x != 0 {
					t.Fatalf("sinks=%v head %d: masked query output[%d] = %v, want 0", sinks, h, i, x)
				}
			}
		}
		b.Close()
	}
}

func TestAlibiSlopes(t *testing.T) {
	// 6 heads: n = 4, m0 = 2^(-8/4), m1 = 2^(-4/4).
	got := alibiSlopes(8, 6, nil)
	want := []float64{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}
	for h := range want {
		if math.Abs(float64(got[h])-want[h]) > 1e-7 {
			t.Errorf("slope[%d] = %v, want %v", h, got[h], want[h])
		}
	}
	for _, s := range alibiSlopes(0, 3, make([]float32, 1)) {
		if s != 1 {
			t.Errorf("slope without bias = %v, want 1", s)
		}
	}
}
