package harness

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(cpyDef) }

// cpyDef declares CPY: a tensor copied, with type conversion, into another
// of the same element count (a KV cache write, a quantizer).
var cpyDef = OpDef{
	Op: ops.OpCpy, TypeRole: "destination", Types: cpyDstTypes(), DefaultType: quant.F16,
	Dims:   []Dim{{DimK, 4096, "row length"}, {DimN, 32, "rows"}},
	Note:   "f32 source into a contiguous destination of the type (as a KV cache write)",
	Shapes: []Dims{{DimK: 4096, DimN: 32}},
	point: func(t quant.Type, d Dims) (Case, error) {
		ne := []int64{d[DimK], d[DimN]}
		return cpy{from: quant.F32, to: t, srcNe: ne, dstNe: ne}.Case(), nil
	},
	cases:  cpyCases,
	expect: expectCpy,
	Tolerances: []Tolerance{
		{Type: AnyType, Exact: true,
			Reason: "compared with the source rounded through the destination type by quant.QuantizeRow (see expected), the rounding ops.Cpy specifies; observed exact"},
	},
}

// cpyDstTypes are the types CPY writes: every float and quantized type
// that is not an activation-only format and that quant can encode (not
// the IQ1, IQ2 and IQ3 codebook formats, quant.CanQuantize).
func cpyDstTypes() []quant.Type {
	var out []quant.Type
	for _, t := range weightTypes() {
		if t != quant.Q8_K && t != quant.Q8_1 && quant.CanQuantize(t) {
			out = append(out, t)
		}
	}
	return out
}

// cpy is a CPY variant: src (type from) copied into a destination of type
// to. Its types are {to, from}: the tolerance is the destination's.
type cpy struct {
	from, to quant.Type
	srcNe    []int64
	dstNe    []int64
	// srcPermuted allocates the source with dims 1 and 2 swapped and
	// permutes it back; dstTransposed copies into the transpose of a
	// destination allocated [dstNe[1], dstNe[0]].
	srcPermuted, dstTransposed bool
}

func (s cpy) name() string {
	n := "src=" + shapeName(s.srcNe...)
	if s.srcPermuted {
		n += " permuted"
	}
	n += ",dst=" + shapeName(s.dstNe...)
	if s.dstTransposed {
		n += " transposed"
	}
	return n
}

// Case returns the variant as a case.
func (s cpy) Case() Case {
	return Case{
		Name: s.name(), Op: ops.OpCpy, Types: types(s.to, s.from),
		Build: func(b *Builder) (*ops.Tensor, error) {
			var a, dst *ops.Tensor
			if s.srcPermuted {
				ne := append([]int64(nil), s.srcNe...)
				ne[1], ne[2] = ne[2], ne[1]
				a = b.Permute(b.Leaf("src", s.from, uni, ne...), 0, 2, 1, 3)
			} else {
				a = b.Leaf("src", s.from, uni, s.srcNe...)
			}
			if s.dstTransposed {
				ne := append([]int64(nil), s.dstNe...)
				ne[0], ne[1] = ne[1], ne[0]
				dst = b.Transpose(b.Leaf("dst", s.to, Poison(), ne...))
			} else {
				dst = b.Leaf("dst", s.to, Poison(), s.dstNe...)
			}
			return ops.Cpy(a, dst)
		},
	}
}

// cpyCases covers f32 into every type a KV cache or a quantizer writes,
// and f16 back to f32: same shapes, a reshaping copy, a permuted source, a
// transposed destination (as a V cache is written), and the destinations
// CPY refuses.
func cpyCases() []Case {
	f32 := quant.F32
	var cs []Case
	dsts := []quant.Type{f32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q4_K, quant.Q6_K,
		// Issue 26's formats that quant encodes without importance
		// weights.
		quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0}
	for _, to := range dsts {
		k := int64(quant.QKK)
		cs = append(cs,
			cpy{from: f32, to: to, srcNe: []int64{k, 4}, dstNe: []int64{k, 4}}.Case(),
			cpy{from: f32, to: to, srcNe: []int64{k, 4}, dstNe: []int64{2 * k, 2}}.Case(),
			cpy{from: f32, to: to, srcNe: []int64{k, 2, 3}, dstNe: []int64{k, 2, 3}, srcPermuted: true}.Case(),
			large(cpy{from: f32, to: to, srcNe: []int64{4096, 512}, dstNe: []int64{4096, 512}}.Case()),
		)
		if to.BlockSize() == 1 {
			cs = append(cs, cpy{from: f32, to: to, srcNe: []int64{64, 16}, dstNe: []int64{64, 16}, dstTransposed: true}.Case())
		} else {
			ne := []int64{to.BlockSize() + 1, 2}
			cs = append(cs, refuse(suffixed(cpy{from: f32, to: to, srcNe: ne, dstNe: ne}.Case(), " (not a block multiple)")))
		}
	}
	f16 := quant.F16
	cs = append(cs,
		cpy{from: f16, to: f32, srcNe: []int64{96, 5}, dstNe: []int64{96, 5}}.Case(),
		cpy{from: f16, to: f32, srcNe: []int64{33, 2, 3}, dstNe: []int64{33, 2, 3}, srcPermuted: true}.Case(),
		cpy{from: f16, to: f32, srcNe: []int64{16, 24}, dstNe: []int64{16, 24}, dstTransposed: true}.Case(),
		cpy{from: f16, to: f16, srcNe: []int64{40, 3}, dstNe: []int64{40, 3}}.Case(),
		// Non-finite values are copied as they are into float types. (A
		// block type's quantizer does not keep them; ggml's leaves that
		// undefined.)
		planted(cpy{from: f32, to: f32, srcNe: []int64{64, 16}, dstNe: []int64{64, 16}, dstTransposed: true}.Case(), at("src", nan, 3, 2), at("src", pinf, 63, 15), at("src", ninf, 0, 7)),
		planted(cpy{from: f32, to: f16, srcNe: []int64{256, 4}, dstNe: []int64{512, 2}}.Case(), at("src", nan, 3, 2), at("src", pinf, 255, 3), at("src", ninf, 0, 1)),
		planted(cpy{from: f32, to: quant.BF16, srcNe: []int64{256, 2, 3}, dstNe: []int64{256, 2, 3}, srcPermuted: true}.Case(), at("src", nan, 3, 2, 1), at("src", pinf, 255, 1, 0), at("src", ninf, 0, 0, 1)),
		planted(cpy{from: f16, to: f32, srcNe: []int64{33, 2, 3}, dstNe: []int64{33, 2, 3}, srcPermuted: true}.Case(), at("src", nan, 3, 2, 1), at("src", pinf, 32, 1, 0), at("src", ninf, 0, 0, 1)),
		refuse(cpy{from: f32, to: f32, srcNe: []int64{64, 4}, dstNe: []int64{64, 5}}.Case()),
		refuse(cpy{from: f32, to: quant.Q8_K, srcNe: []int64{256, 1}, dstNe: []int64{256, 1}}.Case()),
		// A destination view whose rows are not packed: no variant has
		// one.
		refuse(Case{Name: "src=[64,2],dst=q8_0 strided view", Op: ops.OpCpy, Types: types(quant.Q8_0, f32),
			Build: func(b *Builder) (*ops.Tensor, error) {
				dst := b.Leaf("dst", quant.Q8_0, Poison(), 64, 4)
				if dst == nil {
					return nil, b.Err()
				}
				v := b.View(dst, []int64{64, 2}, []int64{0, 2 * dst.Nb[1]}, 0)
				return ops.Cpy(b.Leaf("src", f32, uni, 64, 2), v)
			}}),
	)
	return cs
}

// expectCpy turns the reference's values for a CPY into the values the
// backend must produce. reference.Compute returns the exact source
// values, while ops.Cpy specifies rounding to the destination type as
// quant.QuantizeRow does; the values are rounded through the destination
// type (QuantizeRow then DequantizeRow, row by row), so a CPY is judged
// against the reference quantizer itself rather than against
// quantization noise.
func expectCpy(node *ops.Tensor, want []float64) ([]float64, error) {
	return roundThrough(node.Type, node.Ne[0], want)
}
