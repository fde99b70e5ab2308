package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func getRowsCase(t quant.Type, ne []int64, ids Dist, idsNe []int64) Case {
	in := uni
	if t == quant.I32 {
		in = Ints(-1000, 1000)
	}
	return Case{
		Name: fmt.Sprintf("a=%s,ids=%s", shapeName(ne...), shapeName(idsNe...)),
		Op:   ops.OpGetRows, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.GetRows(b.Leaf("a", t, in, ne...), b.Leaf("ids", quant.I32, ids, idsNe...))
		},
	}
}

// getRowsCases covers every weight type and i32: gathers with repeats,
// per-plane ids in dims 2-3, a one-row table, ids out of range, and shapes
// the op refuses.
func getRowsCases() []Case {
	var cs []Case
	for _, t := range append(weightTypes(), quant.I32) {
		k := rowLen(t, 2)
		if t.BlockSize() == quant.QKK {
			k = quant.QKK
		}
		cs = append(cs,
			getRowsCase(t, []int64{k, 10}, Ints(0, 10), []int64{6}),
			getRowsCase(t, []int64{k, 5, 3, 2}, Ints(0, 5), []int64{4, 3, 2}),
			getRowsCase(t, []int64{k, 1}, Ints(0, 1), []int64{3}),
			large(getRowsCase(t, []int64{4096, 2048}, Ints(0, 2048), []int64{512})),
		)
		if bs := t.BlockSize(); bs > 1 {
			c := getRowsCase(t, []int64{bs + 1, 4}, Ints(0, 4), []int64{2})
			c.Name += " (not a block multiple)"
			cs = append(cs, refuse(c))
		}
	}
	cs = append(cs, getRowsCase(quant.Q4_0, []int64{64, 10}, Ints(0, 10), []int64{0}))
	for _, t := range []quant.Type{quant.F32, quant.Q4_0} {
		c := getRowsCase(t, []int64{64, 10}, Ints(10, 11), []int64{2})
		c.Name += ",id=10 out of range"
		cs = append(cs, reject(c))
	}
	c := getRowsCase(quant.F16, []int64{64, 5, 3}, Ints(0, 5), []int64{4, 2})
	c.Name += " (ids planes do not match)"
	cs = append(cs, refuse(c))
	return cs
}

// cpyShape is one CPY case: src (type from) copied into a destination of
// type to.
type cpyShape struct {
	from, to quant.Type
	srcNe    []int64
	dstNe    []int64
	// srcPermuted allocates the source with dims 1 and 2 swapped and
	// permutes it back; dstTransposed copies into the transpose of a
	// destination allocated [dstNe[1], dstNe[0]].
	srcPermuted, dstTransposed bool
}

func (s cpyShape) name() string {
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

func cpyCase(s cpyShape) Case {
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
	dsts := []quant.Type{f32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q4_K, quant.Q6_K}
	for _, to := range dsts {
		k := int64(quant.QKK)
		cs = append(cs,
			cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{k, 4}, dstNe: []int64{k, 4}}),
			cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{k, 4}, dstNe: []int64{2 * k, 2}}),
			cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{k, 2, 3}, dstNe: []int64{k, 2, 3}, srcPermuted: true}),
			large(cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{4096, 512}, dstNe: []int64{4096, 512}})),
		)
		if to.BlockSize() == 1 {
			cs = append(cs, cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{64, 16}, dstNe: []int64{64, 16}, dstTransposed: true}))
		} else {
			c := cpyCase(cpyShape{from: f32, to: to, srcNe: []int64{to.BlockSize() + 1, 2}, dstNe: []int64{to.BlockSize() + 1, 2}})
			c.Name += " (not a block multiple)"
			cs = append(cs, refuse(c))
		}
	}
	f16 := quant.F16
	cs = append(cs,
		cpyCase(cpyShape{from: f16, to: f32, srcNe: []int64{96, 5}, dstNe: []int64{96, 5}}),
		cpyCase(cpyShape{from: f16, to: f32, srcNe: []int64{33, 2, 3}, dstNe: []int64{33, 2, 3}, srcPermuted: true}),
		cpyCase(cpyShape{from: f16, to: f32, srcNe: []int64{16, 24}, dstNe: []int64{16, 24}, dstTransposed: true}),
		cpyCase(cpyShape{from: f16, to: f16, srcNe: []int64{40, 3}, dstNe: []int64{40, 3}}),
		refuse(cpyCase(cpyShape{from: f32, to: f32, srcNe: []int64{64, 4}, dstNe: []int64{64, 5}})),
		refuse(cpyCase(cpyShape{from: f32, to: quant.Q8_K, srcNe: []int64{256, 1}, dstNe: []int64{256, 1}})),
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

func contCase(t quant.Type, name string, base []int64, axes ...int) Case {
	return Case{
		Name: name, Op: ops.OpCont, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			in := uni
			if t == quant.I32 {
				in = Ints(-100, 100)
			}
			a := b.Leaf("a", t, in, base...)
			if axes != nil {
				a = b.Permute(a, axes...)
			}
			return ops.Cont(a)
		},
	}
}

// contCases covers transposes and permutes of float, quantized (rows
// kept) and integer tensors, an already contiguous input, and quantized
// rows that are not packed.
func contCases() []Case {
	return []Case{
		contCase(quant.F32, "[24,16] transposed", []int64{24, 16}, 1, 0, 2, 3),
		contCase(quant.F32, "[32,4,3,2] permuted 0,2,1,3", []int64{32, 4, 3, 2}, 0, 2, 1, 3),
		contCase(quant.F32, "[5,6,7,2] permuted 2,0,3,1", []int64{5, 6, 7, 2}, 2, 0, 3, 1),
		contCase(quant.F32, "[100,3] contiguous", []int64{100, 3}),
		contCase(quant.F16, "[33,8] transposed", []int64{33, 8}, 1, 0, 2, 3),
		contCase(quant.BF16, "[16,3,5] permuted 0,2,1,3", []int64{16, 3, 5}, 0, 2, 1, 3),
		contCase(quant.Q8_0, "[64,3,4] permuted 0,2,1,3", []int64{64, 3, 4}, 0, 2, 1, 3),
		contCase(quant.Q4_K, "[256,2,3] permuted 0,2,1,3", []int64{256, 2, 3}, 0, 2, 1, 3),
		contCase(quant.I32, "[7,5] transposed", []int64{7, 5}, 1, 0, 2, 3),
		large(contCase(quant.F32, "[4096,512] transposed", []int64{4096, 512}, 1, 0, 2, 3)),
		refuse(Case{Name: "q4_0 rows not packed", Op: ops.OpCont, Types: types(quant.Q4_0),
			Build: func(b *Builder) (*ops.Tensor, error) {
				a := b.Leaf("a", quant.Q4_0, uni, 128, 2)
				if a == nil {
					return nil, b.Err()
				}
				return ops.Cont(b.View(a, []int64{64, 2}, []int64{2 * a.Nb[0], a.Nb[1]}, 0))
			}}),
	}
}
