package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func init() { register(getRowsDef) }

// getRowsDef declares GET_ROWS: rows of a table of any weight type (or
// i32) gathered by id and dequantized to f32.
var getRowsDef = OpDef{
	Op: ops.OpGetRows, TypeRole: "table", Types: append(weightTypes(), quant.I32), DefaultType: quant.Q4_0,
	Dims: []Dim{
		{DimK, 4096, "row length"},
		{DimM, 1024, "rows in the table"},
		{DimN, 32, "rows gathered"},
	},
	Note:   "ids drawn uniformly from the table's rows",
	Shapes: []Dims{{DimK: 4096, DimM: 1024, DimN: 32}},
	point: func(t quant.Type, d Dims) (Case, error) {
		return getRows{ne: []int64{d[DimK], d[DimM]}, ids: Ints(0, d[DimM]), idsNe: []int64{d[DimN]}}.Case(t), nil
	},
	cases: getRowsCases,
	Tolerances: []Tolerance{
		{Type: AnyType, MaxNMSE: 1e-14, MaxRelErr: 1e-6,
			Reason: "dequantization is one or two f32 operations per element; observed exact, one rounding (FMA contraction on another backend) allowed"},
	},
}

// getRows is a GET_ROWS variant: a table of shape ne, ids of shape idsNe
// drawn from ids.
type getRows struct {
	ne    []int64
	ids   Dist
	idsNe []int64
}

// Case returns the variant with a table of type t.
func (s getRows) Case(t quant.Type) Case {
	in := uni
	if t == quant.I32 {
		in = Ints(-1000, 1000)
	}
	return Case{
		Name: fmt.Sprintf("a=%s,ids=%s", shapeName(s.ne...), shapeName(s.idsNe...)),
		Op:   ops.OpGetRows, Types: types(t),
		Build: func(b *Builder) (*ops.Tensor, error) {
			return ops.GetRows(b.Leaf("a", t, in, s.ne...), b.Leaf("ids", quant.I32, s.ids, s.idsNe...))
		},
	}
}

// getRowsCase returns the case of a table of type t and shape ne gathered
// by ids of shape idsNe.
func getRowsCase(t quant.Type, ne []int64, ids Dist, idsNe []int64) Case {
	return getRows{ne: ne, ids: ids, idsNe: idsNe}.Case(t)
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
			cs = append(cs, refuse(suffixed(getRowsCase(t, []int64{bs + 1, 4}, Ints(0, 4), []int64{2}), " (not a block multiple)")))
		}
	}
	cs = append(cs, getRowsCase(quant.Q4_0, []int64{64, 10}, Ints(0, 10), []int64{0}))
	for _, t := range []quant.Type{quant.F32, quant.Q4_0} {
		cs = append(cs, reject(suffixed(getRowsCase(t, []int64{64, 10}, Ints(10, 11), []int64{2}), ",id=10 out of range")))
	}
	// Non-finite rows are gathered as they are (every row is gathered:
	// ids 0 to 9).
	for _, t := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		cs = append(cs, planted(getRowsCase(t, []int64{65, 10}, Positions(0), []int64{10}), at("a", nan, 3, 2), at("a", pinf, 64, 7), at("a", ninf, 0, 9)))
	}
	cs = append(cs, refuse(suffixed(getRowsCase(quant.F16, []int64{64, 5, 3}, Ints(0, 5), []int64{4, 2}), " (ids planes do not match)")))
	return cs
}
