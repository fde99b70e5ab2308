package harness

import (
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Dimension names shared by the benchmark ops, so that a sweep over "n"
// means tokens (or rows) for every op that has it.
const (
	DimM       = "m"        // output rows: weight rows of a matrix product, rows of a table
	DimN       = "n"        // tokens (activation columns, queries, rows)
	DimK       = "k"        // row length: the dot-product length, or a row's elements
	DimKV      = "kv"       // keys: KV cache length, or the softmax row length
	DimD       = "d"        // head size
	DimHeads   = "heads"    // query heads
	DimKVHeads = "kv_heads" // K/V heads (GQA)
	DimExperts = "experts"  // experts of a MoE layer
	DimUsed    = "used"     // experts used per token
	DimDConv   = "d_conv"   // Mamba convolution width
	DimDInner  = "d_inner"  // Mamba channels
	DimDState  = "d_state"  // Mamba state size
	DimHeadDim = "head_dim" // Mamba-2 head size (1: Mamba-1)
	DimSeqs    = "seqs"     // sequences in the batch
)

// matmulTypes are the weight types MUL_MAT and GET_ROWS take.
func matmulTypes() []quant.Type { return weightTypes() }

// cpyDstTypes are the types CPY writes: every float and quantized type
// that is not an activation-only format.
func cpyDstTypes() []quant.Type {
	var out []quant.Type
	for _, t := range weightTypes() {
		if t != quant.Q8_K && t != quant.Q8_1 {
			out = append(out, t)
		}
	}
	return out
}

var f32Only = []quant.Type{quant.F32}

// benchOps describes every compute op for benchmarks, in ComputeOps order.
var benchOps = []BenchOp{
	{
		Op: ops.OpMulMat, TypeRole: "weights", FlopBound: true,
		Types: matmulTypes(), DefaultType: quant.Q4_0,
		Dims: []Dim{
			{DimM, 4096, "weight rows (output features)"},
			{DimN, 1, "activation columns (tokens)"},
			{DimK, 4096, "row length (input features)"},
		},
		Note:   "a [k, m] weights of the type, b [k, n] f32 activations",
		Shapes: []Dims{{DimM: 4096, DimN: 1, DimK: 4096}, {DimM: 4096, DimN: 32, DimK: 4096}},
		inputs: func(t quant.Type, d Dims) []Input {
			return []Input{
				{"a", t, uni, []int64{d[DimK], d[DimM]}},
				{"b", quant.F32, uni, []int64{d[DimK], d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) { return ops.MulMat(in[0], in[1]) },
	},
	{
		Op: ops.OpMulMatID, TypeRole: "expert weights", FlopBound: true,
		Types: matmulTypes(), DefaultType: quant.Q4_0,
		Dims: []Dim{
			{DimM, 1024, "expert rows (output features)"},
			{DimN, 1, "tokens"},
			{DimK, 2048, "row length (input features)"},
			{DimExperts, 8, "experts"},
			{DimUsed, 2, "experts used per token"},
		},
		Note:   "experts [k, m, experts], one b row per used expert, ids distinct per token",
		Shapes: []Dims{{DimM: 1024, DimN: 1, DimK: 2048, DimExperts: 8, DimUsed: 2}, {DimM: 1024, DimN: 16, DimK: 2048, DimExperts: 8, DimUsed: 2}},
		inputs: func(t quant.Type, d Dims) []Input {
			return []Input{
				{"experts", t, uni, []int64{d[DimK], d[DimM], d[DimExperts]}},
				{"b", quant.F32, uni, []int64{d[DimK], d[DimUsed], d[DimN]}},
				{"ids", quant.I32, DistinctInts(0, d[DimExperts]), []int64{d[DimUsed], d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			return ops.MulMatID(in[0], in[1], in[2])
		},
	},
	{
		Op: ops.OpSoftMax, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims: []Dim{
			{DimKV, 4096, "row length (keys)"},
			{DimN, 1, "rows per head (queries)"},
			{DimHeads, 32, "heads"},
		},
		Note:   "a [kv, n, heads] f32, causal f16 mask [kv, n], scale 1/sqrt(128)",
		Shapes: []Dims{{DimKV: 4096, DimN: 1, DimHeads: 32}, {DimKV: 512, DimN: 512, DimHeads: 32}},
		inputs: func(_ quant.Type, d Dims) []Input {
			return []Input{
				{"a", quant.F32, Uniform(-4, 4), []int64{d[DimKV], d[DimN], d[DimHeads]}},
				{"mask", quant.F16, Causal(), []int64{d[DimKV], d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			return ops.SoftMax(in[0], in[1], nil, ops.SoftMaxParams{Scale: float32(1 / math.Sqrt(128))})
		},
	},
	{
		Op: ops.OpFlashAttnExt, TypeRole: "K/V cache", FlopBound: true,
		Types: ops.FlashAttnKVTypes, DefaultType: quant.F16,
		Dims: []Dim{
			{DimD, 128, "head size"},
			{DimHeads, 32, "query heads"},
			{DimKVHeads, 8, "K/V heads (GQA)"},
			{DimN, 1, "queries (tokens)"},
			{DimKV, 4096, "keys (KV cache length)"},
		},
		Note: "q [d, n, heads] f32, k and v [d, kv, kv_heads] of the type, causal f16 mask, scale 1/sqrt(d)",
		Shapes: []Dims{
			{DimD: 128, DimHeads: 32, DimKVHeads: 8, DimN: 1, DimKV: 4096},
			{DimD: 128, DimHeads: 32, DimKVHeads: 8, DimN: 64, DimKV: 512},
		},
		inputs: func(t quant.Type, d Dims) []Input {
			return []Input{
				{"q", quant.F32, uni, []int64{d[DimD], d[DimN], d[DimHeads]}},
				{"k", t, uni, []int64{d[DimD], d[DimKV], d[DimKVHeads]}},
				{"v", t, uni, []int64{d[DimD], d[DimKV], d[DimKVHeads]}},
				{"mask", quant.F16, Causal(), []int64{d[DimKV], d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, d Dims) (*ops.Tensor, error) {
			p := ops.FlashAttnParams{Scale: float32(1 / math.Sqrt(float64(d[DimD])))}
			return ops.FlashAttnExt(in[0], in[1], in[2], in[3], nil, p)
		},
	},
	{
		Op: ops.OpSSMConv, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims: []Dim{
			{DimDConv, 4, "convolution width"},
			{DimDInner, 1536, "channels"},
			{DimN, 1, "tokens per sequence"},
			{DimSeqs, 1, "sequences"},
		},
		Note:   "sx [d_conv-1+n, d_inner, seqs], c [d_conv, d_inner]",
		Shapes: []Dims{{DimDConv: 4, DimDInner: 4096, DimN: 1, DimSeqs: 1}, {DimDConv: 4, DimDInner: 4096, DimN: 512, DimSeqs: 1}},
		inputs: func(_ quant.Type, d Dims) []Input {
			return []Input{
				{"sx", quant.F32, uni, []int64{d[DimDConv] - 1 + d[DimN], d[DimDInner], d[DimSeqs]}},
				{"c", quant.F32, uni, []int64{d[DimDConv], d[DimDInner]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) { return ops.SSMConv(in[0], in[1]) },
	},
	{
		Op: ops.OpSSMScan, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims: []Dim{
			{DimDState, 16, "state size"},
			{DimDInner, 1536, "channels (heads x head_dim)"},
			{DimHeadDim, 1, "head size: 1 for Mamba-1 (A per channel and state), more for Mamba-2 (scalar A per head)"},
			{DimN, 1, "tokens per sequence"},
			{DimSeqs, 1, "sequences"},
		},
		Note:   "one group of B and C; each sequence starts from its own state slot",
		Shapes: []Dims{{DimDState: 16, DimDInner: 4096, DimHeadDim: 1, DimN: 1, DimSeqs: 1}, {DimDState: 16, DimDInner: 4096, DimHeadDim: 1, DimN: 64, DimSeqs: 1}},
		inputs: func(_ quant.Type, d Dims) []Input {
			hd := d[DimHeadDim]
			heads := d[DimDInner] / max(hd, 1)
			aRow := d[DimDState]
			if hd > 1 {
				aRow = 1
			}
			ds, n, seqs := d[DimDState], d[DimN], d[DimSeqs]
			return []Input{
				{"s", quant.F32, Normal(0, 1), []int64{ds, hd, heads, seqs}},
				{"x", quant.F32, uni, []int64{hd, heads, n, seqs}},
				{"dt", quant.F32, Uniform(-4, 1), []int64{heads, n, seqs}},
				{"A", quant.F32, Uniform(-4, -0.5), []int64{aRow, heads}},
				{"B", quant.F32, Normal(0, 1), []int64{ds, 1, n, seqs}},
				{"C", quant.F32, Normal(0, 1), []int64{ds, 1, n, seqs}},
				{"ids", quant.I32, DistinctInts(0, seqs), []int64{seqs}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, d Dims) (*ops.Tensor, error) {
			if hd := d[DimHeadDim]; d[DimDInner]%hd != 0 {
				return nil, shapeError("d_inner %d is not a multiple of head_dim %d", d[DimDInner], hd)
			}
			return ops.SSMScan(in[0], in[1], in[2], in[3], in[4], in[5], in[6])
		},
	},
	{
		Op: ops.OpRope, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims: []Dim{
			{DimD, 128, "head size (all of it rotated)"},
			{DimHeads, 32, "heads"},
			{DimN, 1, "tokens"},
		},
		Note:   "normal mode, base 10000, positions 0..n-1",
		Shapes: []Dims{{DimD: 128, DimHeads: 32, DimN: 1}, {DimD: 128, DimHeads: 32, DimN: 512}},
		inputs: func(_ quant.Type, d Dims) []Input {
			return []Input{
				{"a", quant.F32, uni, []int64{d[DimD], d[DimHeads], d[DimN]}},
				{"pos", quant.I32, Positions(0), []int64{d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, d Dims) (*ops.Tensor, error) {
			return ops.Rope(in[0], in[1], nil, ops.DefaultRopeParams(int(d[DimD]), ops.RopeNormal))
		},
	},
	{
		Op: ops.OpRMSNorm, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length (model width)"}, {DimN, 1, "rows (tokens)"}},
		Note:   "eps 1e-5",
		Shapes: []Dims{{DimK: 4096, DimN: 1}, {DimK: 4096, DimN: 512}},
		inputs: rowsInput,
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			return ops.RMSNorm(in[0], 1e-5)
		},
	},
	{
		Op: ops.OpGetRows, TypeRole: "table", Types: append(matmulTypes(), quant.I32), DefaultType: quant.Q4_0,
		Dims: []Dim{
			{DimK, 4096, "row length"},
			{DimM, 1024, "rows in the table"},
			{DimN, 32, "rows gathered"},
		},
		Note:   "ids drawn uniformly from the table's rows",
		Shapes: []Dims{{DimK: 4096, DimM: 1024, DimN: 32}},
		inputs: func(t quant.Type, d Dims) []Input {
			in := uni
			if t == quant.I32 {
				in = Ints(-1000, 1000)
			}
			return []Input{
				{"a", t, in, []int64{d[DimK], d[DimM]}},
				{"ids", quant.I32, Ints(0, d[DimM]), []int64{d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) { return ops.GetRows(in[0], in[1]) },
	},
	elementwise(ops.OpAdd, 2, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.Add(in[0], in[1]) }),
	elementwise(ops.OpMul, 2, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.Mul(in[0], in[1]) }),
	elementwise(ops.OpScale, 1, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.Scale(in[0], 0.5, 0.25) }),
	{
		Op: ops.OpCpy, TypeRole: "destination", Types: cpyDstTypes(), DefaultType: quant.F16,
		Dims:      []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
		Note:      "f32 source into a contiguous destination of the type (as a KV cache write)",
		Shapes:    []Dims{{DimK: 4096, DimN: 32}},
		caseTypes: func(t quant.Type) []quant.Type { return []quant.Type{t, quant.F32} },
		inputs: func(t quant.Type, d Dims) []Input {
			return []Input{
				{"src", quant.F32, uni, []int64{d[DimK], d[DimN]}},
				{"dst", t, Poison(), []int64{d[DimK], d[DimN]}},
			}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) { return ops.Cpy(in[0], in[1]) },
	},
	{
		Op: ops.OpCont, TypeRole: "input", Types: []quant.Type{quant.F32, quant.F16}, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length of the result"}, {DimN, 32, "rows of the result"}},
		Note:   "a transposed [n, k] tensor made contiguous (strided reads, packed writes)",
		Shapes: []Dims{{DimK: 4096, DimN: 32}},
		inputs: func(t quant.Type, d Dims) []Input {
			return []Input{{"a", t, uni, []int64{d[DimN], d[DimK]}}}
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			at, err := ops.Transpose(in[0])
			if err != nil {
				return nil, err
			}
			return ops.Cont(at)
		},
	},
	elementwise(ops.OpSilu, 1, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.Silu(in[0]) }),
	elementwise(ops.OpGelu, 1, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.Gelu(in[0]) }),
	elementwise(ops.OpSwiGLU, 2, func(in []*ops.Tensor) (*ops.Tensor, error) { return ops.SwiGLU(in[0], in[1], false) }),
	{
		Op: ops.OpArgsort, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 256, "row length"}, {DimN, 32, "rows"}},
		Note:   "descending, as MoE routing sorts expert scores",
		Shapes: []Dims{{DimK: 256, DimN: 32}, {DimK: 8, DimN: 512}},
		inputs: rowsInput,
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			return ops.Argsort(in[0], ops.SortDesc)
		},
	},
	{
		Op: ops.OpSumRows, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
		Shapes: []Dims{{DimK: 4096, DimN: 32}},
		inputs: rowsInput,
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) {
			return ops.SumRows(in[0])
		},
	},
}

// rowsInput is one f32 input of n rows of k.
func rowsInput(_ quant.Type, d Dims) []Input {
	return []Input{{"a", quant.F32, uni, []int64{d[DimK], d[DimN]}}}
}

// elementwise describes an f32 op over nIn inputs of [k, n].
func elementwise(op ops.Op, nIn int, f func(in []*ops.Tensor) (*ops.Tensor, error)) BenchOp {
	names := []string{"a", "b"}
	return BenchOp{
		Op: op, TypeRole: "input", Types: f32Only, DefaultType: quant.F32,
		Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
		Note:   "same-shaped f32 operands",
		Shapes: []Dims{{DimK: 4096, DimN: 32}},
		inputs: func(_ quant.Type, d Dims) []Input {
			in := make([]Input, nIn)
			for i := range in {
				in[i] = Input{names[i], quant.F32, Uniform(-4, 4), []int64{d[DimK], d[DimN]}}
			}
			return in
		},
		build: func(in []*ops.Tensor, _ quant.Type, _ Dims) (*ops.Tensor, error) { return f(in) },
	}
}
