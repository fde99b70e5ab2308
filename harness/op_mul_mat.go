package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

func init() { register(mulMatDef) }

// mulMatDef declares MUL_MAT: weights of every float and quantized type
// times f32 (or f16) activations.
var mulMatDef = OpDef{
	Op: ops.OpMulMat, TypeRole: "weights", FlopBound: true,
	Types: weightTypes(), DefaultType: quant.Q4_0,
	Dims: []Dim{
		{DimM, 4096, "weight rows (output features)"},
		{DimN, 1, "activation columns (tokens)"},
		{DimK, 4096, "row length (input features)"},
	},
	Note:   "a [k, m] weights of the type, b [k, n] f32 activations",
	Shapes: []Dims{{DimM: 4096, DimN: 1, DimK: 4096}, {DimM: 4096, DimN: 32, DimK: 4096}},
	point: func(t quant.Type, d Dims) (Case, error) {
		return mulMat{m: d[DimM], n: d[DimN], k: d[DimK], bType: quant.F32}.Case(t), nil
	},
	cases:  mulMatCases,
	sample: sampleMulMat,
	// The reference multiplies dequantized weights by the activations in
	// float64; the backend converts the activations to the weight type's
	// VecDotType first, as ggml does.
	Tolerances: []Tolerance{
		{Type: quant.F32, MaxNMSE: 1e-11, MaxRelErr: 5e-6,
			Reason: "f32 dot products: f32 rounding only, growing with k (float32 accumulators over k terms in 8 lanes: NMSE up to ~(k/8)*eps^2 = 6e-12 at k=14336); observed NMSE 1.6e-15 (k<=4096), 1.4e-13 (k=14336, avx2); a dropped block at that k is ~2e-3"},
		{Type: quant.F16, MaxNMSE: 1e-6, MaxRelErr: 3e-3,
			Reason: "f16 weights: activations rounded to f16 (2^-11 relative) for the dot product; observed NMSE 6.4e-8, rel 2.7e-4"},
		{Type: quant.BF16, MaxNMSE: 3e-5, MaxRelErr: 2e-2,
			Reason: "bf16 weights: activations rounded to bf16 (2^-8 relative) for the dot product; observed NMSE 2.9e-6, rel 2e-3"},
		{Type: quant.Q8_0, MaxNMSE: 3e-4, MaxRelErr: 6e-2,
			Reason: "q8_0 weights: activations quantized to q8_0 (8 bits per 32) for the integer dot product; observed NMSE 3.1e-5, rel 5.7e-3"},
		{Type: quant.Q8_1, MaxNMSE: 1e-11, MaxRelErr: 1e-5,
			Reason: "q8_1 weights: VecDotType is f32, so dequantized weights (d*q, exact in f32) meet f32 activations: f32 dot products, with f32's limit (one float32 accumulator per output over k terms gives NMSE ~k*eps^2/12: metal-emu's tiles measure 1.3e-12 at k=4096, as for f32 weights); observed NMSE 5.7e-14 (CPU), rel 4.9e-7"},
		{Type: quant.Q8_K, MaxNMSE: 1e-11, MaxRelErr: 1e-5,
			Reason: "q8_K weights: VecDotType is f32, so dequantized weights (d*q, exact in f32) meet f32 activations: f32 dot products, with f32's limit (metal-emu's tiles measure 1.3e-12 at k=4096, as for f32 weights); observed NMSE 1.2e-13 (CPU), rel 6.3e-7"},
		{Type: AnyType, MaxNMSE: 4e-4, MaxRelErr: 8e-2,
			Reason: "2- to 6-bit weights: activations quantized to q8_0, q8_1 or q8_K for the integer dot product, ~1e-4 relative error per row; observed NMSE 4e-5 (q4_0), rel 7.3e-3"},
	},
}

// bLayout is how a MUL_MAT activation is laid out in memory.
type bLayout int

const (
	bContiguous bLayout = iota
	bPermuted           // allocated [k, b2, n, b3], permuted to [k, n, b2, b3]
	bTransposed         // allocated [n, k, b2, b3], transposed: nb[0] != element size
)

// mulMat is a MUL_MAT variant: a [k, m, a2, a3] of the case's type times
// b [k, n, b2, b3] of bType, laid out as layout. Zero batch sizes mean 1.
type mulMat struct {
	m, n, k        int64
	a2, a3, b2, b3 int64
	layout         bLayout
	bType          quant.Type
}

func (s mulMat) name() string {
	name := fmt.Sprintf("m=%d,n=%d,k=%d", s.m, s.n, s.k)
	if s.a2*s.a3*s.b2*s.b3 > 1 {
		name += fmt.Sprintf(",a=%dx%d,b=%dx%d", s.a2, s.a3, s.b2, s.b3)
	}
	switch s.layout {
	case bPermuted:
		name += ",b permuted"
	case bTransposed:
		name += ",b transposed"
	}
	return name
}

// Case returns the variant with weights of type t.
func (s mulMat) Case(t quant.Type) Case {
	if s.a2 == 0 {
		s.a2, s.a3, s.b2, s.b3 = 1, 1, 1, 1
	}
	return Case{
		Name: s.name(), Op: ops.OpMulMat, Types: opTypes(t, s.bType),
		Build: func(b *Builder) (*ops.Tensor, error) {
			a := b.Leaf("a", t, uni, s.k, s.m, s.a2, s.a3)
			var x *ops.Tensor
			switch s.layout {
			case bPermuted:
				x = b.Permute(b.Leaf("b", s.bType, uni, s.k, s.b2, s.n, s.b3), 0, 2, 1, 3)
			case bTransposed:
				x = b.Transpose(b.Leaf("b", s.bType, uni, s.n, s.k, s.b2, s.b3))
			default:
				x = b.Leaf("b", s.bType, uni, s.k, s.n, s.b2, s.b3)
			}
			return ops.MulMat(a, x)
		},
	}
}

// mulMatCases covers every weight type: matrix-vector and matrix-matrix,
// one weight row, broadcasting in dims 2-3, a permuted activation, and row
// lengths the type refuses; some types also take a transposed or f16
// activation.
func mulMatCases() []Case {
	var cs []Case
	f32 := quant.F32
	for _, t := range weightTypes() {
		k1, k2 := rowLen(t, 3), rowLen(t, 8)
		if t.BlockSize() == quant.QKK {
			k1, k2 = quant.QKK, 2*quant.QKK
		}
		cs = append(cs,
			mulMat{m: 16, n: 1, k: k1, bType: f32}.Case(t),
			mulMat{m: 24, n: 5, k: k2, bType: f32}.Case(t),
			mulMat{m: 1, n: 4, k: k1, bType: f32}.Case(t),
			mulMat{m: 8, n: 3, k: k1, a2: 2, a3: 1, b2: 4, b3: 3, bType: f32}.Case(t),
			mulMat{m: 12, n: 4, k: k1, a2: 1, a3: 1, b2: 2, b3: 1, layout: bPermuted, bType: f32}.Case(t),
			// Enough activation rows for the gemm paths' wide tiles (16
			// columns for floats): two column panels and a partial one,
			// rows not a multiple of a tile's 4 or 6, broadcast batches.
			mulMat{m: 37, n: 37, k: k2, a2: 2, a3: 1, b2: 2, b3: 1, bType: f32}.Case(t),
			large(mulMat{m: 4096, n: 1, k: 4096, bType: f32}.Case(t)),
			large(mulMat{m: 512, n: 64, k: 4096, bType: f32}.Case(t)),
		)
		if slices.Contains([]quant.Type{quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K}, t) {
			cs = append(cs, mulMat{m: 8, n: 6, k: k1, a2: 1, a3: 1, b2: 1, b3: 1, layout: bTransposed, bType: f32}.Case(t))
		}
		if t == quant.F32 || t == quant.F16 || t == quant.BF16 {
			// Two column blocks of the packed float path (128 columns
			// each) and k short of one chunk; activation rows permuted.
			cs = append(cs,
				mulMat{m: 13, n: 130, k: k1, bType: f32}.Case(t),
				mulMat{m: 12, n: 20, k: k1, a2: 1, a3: 1, b2: 2, b3: 1, layout: bPermuted, bType: f32}.Case(t),
				// Rows of whole 16-byte chunks (k % 8 == 0), as models
				// have them: the GPU kernels' wide loads and large tiles,
				// partial in rows and columns.
				mulMat{m: 130, n: 70, k: 256, bType: f32}.Case(t))
		}
		if t == quant.F32 || t == quant.Q4_0 {
			cs = append(cs, mulMat{m: 8, n: 0, k: k1, bType: f32}.Case(t), mulMat{m: 0, n: 3, k: k1, bType: f32}.Case(t))
		}
		if t == quant.MXFP4 {
			// Rows of 12 17-byte blocks (204 bytes: 4-byte but not
			// 8-byte aligned), in steps of four blocks: the GPU tiles'
			// copies of raw blocks in 4-byte pieces, over three steps
			// and two tiles of rows.
			cs = append(cs, mulMat{m: 70, n: 40, k: 384, bType: f32}.Case(t))
		}
		if slices.Contains([]quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q8_0}, t) {
			cs = append(cs, mulMat{m: 16, n: 3, k: k1, bType: quant.F16}.Case(t))
		}
		if bs := t.BlockSize(); bs > 1 {
			cs = append(cs, refuse(suffixed(mulMat{m: 4, n: 2, k: bs + 1, bType: f32}.Case(t), " (not a block multiple)")))
		}
	}
	cs = append(cs,
		// Operands of different row lengths: no variant has them.
		refuse(Case{Name: "k=64 vs k=65", Op: ops.OpMulMat, Types: types(quant.F32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				return ops.MulMat(b.Leaf("a", quant.F32, uni, 64, 4), b.Leaf("b", quant.F32, uni, 65, 2))
			}}),
		refuse(named(mulMat{m: 4, n: 2, k: 64, a2: 3, a3: 1, b2: 4, b3: 1, bType: f32}.Case(quant.F16), "a=3x1,b=4x1 (no broadcast)")),
		refuse(named(mulMat{m: 4, n: 2, k: 64, bType: quant.Q8_0}.Case(quant.Q4_0), "b=q8_0")),
	)
	return append(cs, mulMatNonFinite()...)
}

// mulMatNonFinite are MUL_MAT's non-finite cases: a NaN activation makes
// its output column NaN for every weight type, whatever the type the
// activation is quantized to; a NaN or infinite weight of a float type
// makes its output row non-finite; an infinite activation of float
// weights gives infinities of the product's sign. Both the matrix-vector
// (n=3) and the matrix-matrix (n=9) paths take them.
func mulMatNonFinite() []Case {
	var cs []Case
	f32 := quant.F32
	for _, t := range weightTypes() {
		k := rowLen(t, 2)
		if t.BlockSize() == quant.QKK {
			k = quant.QKK
		}
		cs = append(cs, planted(mulMat{m: 8, n: 3, k: k, bType: f32}.Case(t), at("b", nan, 5, 1)))
		switch t {
		case quant.F32, quant.F16, quant.Q4_0, quant.Q8_0, quant.Q4_K:
			cs = append(cs, planted(mulMat{m: 16, n: 9, k: k, bType: f32}.Case(t), at("b", nan, k-1, 7)))
		}
		if t.IsFloat() {
			cs = append(cs,
				planted(mulMat{m: 8, n: 3, k: k, bType: f32}.Case(t), at("a", nan, 2, 5)),
				planted(mulMat{m: 16, n: 9, k: k, bType: f32}.Case(t), at("a", ninf, 0, 3), at("a", nan, k-1, 12)),
			)
		}
		if t == quant.F16 || t == quant.BF16 {
			// 16-byte rows (the large tensor-core tiles on GPUs).
			cs = append(cs, planted(mulMat{m: 16, n: 9, k: 64, bType: f32}.Case(t), at("a", nan, 63, 12), at("b", pinf, 8, 8)))
		}
	}
	cs = append(cs,
		planted(mulMat{m: 8, n: 3, k: 65, bType: f32}.Case(f32), at("b", pinf, 6, 2)),
		planted(mulMat{m: 16, n: 9, k: 65, bType: f32}.Case(f32), at("b", pinf, 6, 2), at("b", ninf, 0, 8)),
	)
	return cs
}

// Blocks of a sampled MUL_MAT: sampleRows weight rows by sampleCols
// activation rows, at the first and last rows and columns and at
// sampleRand random places in between.
const (
	sampleRows = 8
	sampleCols = 4
)

// sampleMulMat samples blocks of sampleRows weight rows by sampleCols
// activation rows, every batch.
func sampleMulMat(node *ops.Tensor, rng *rand.Rand) (idx []int64, want []float64, err error) {
	a, b := node.Src[0], node.Src[1]
	m, n := a.Ne[1], b.Ne[1]
	rowStarts := sampleStarts(rng, m, sampleRows)
	colStarts := sampleStarts(rng, n, sampleCols)
	for _, r0 := range rowStarts {
		rows := min(sampleRows, m-r0)
		av, err := ops.View(a, []int64{a.Ne[0], rows, a.Ne[2], a.Ne[3]}, a.Nb[:], r0*a.Nb[1])
		if err != nil {
			return nil, nil, err
		}
		for _, c0 := range colStarts {
			cols := min(sampleCols, n-c0)
			bv, err := ops.View(b, []int64{b.Ne[0], cols, b.Ne[2], b.Ne[3]}, b.Nb[:], c0*b.Nb[1])
			if err != nil {
				return nil, nil, err
			}
			sub, err := ops.MulMat(av, bv)
			if err != nil {
				return nil, nil, err
			}
			vals, err := reference.Compute(sub)
			if err != nil {
				return nil, nil, err
			}
			// vals is [rows, cols, b2, b3] contiguous; the node's output
			// is [m, n, b2, b3].
			for i3 := range node.Ne[3] {
				for i2 := range node.Ne[2] {
					for c := range cols {
						for r := range rows {
							idx = append(idx, r0+r+m*(c0+c+n*(i2+node.Ne[2]*i3)))
							want = append(want, vals[r+rows*(c+cols*(i2+node.Ne[2]*i3))])
						}
					}
				}
			}
		}
	}
	return idx, want, nil
}
