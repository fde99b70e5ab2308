package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// ARGSORT: kernels/argsort.metal.

func init() {
	kernelsByOp.Add(ops.OpArgsort, supportsArgsort, encodeArgsort)
}

// argsortTGRow is the longest row sorted in threadgroup memory (the row
// padded to a power of two, 8 bytes an entry); longer rows are sorted in
// device memory, a dispatch per stage of the bitonic network.
const argsortTGRow = 2048

// argsortMaxRow is the longest row ARGSORT takes: its i32 indices.
const argsortMaxRow = 1 << 30

func supportsArgsort(t *ops.Tensor) error {
	p, ok := t.Params.(ops.ArgsortParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.ArgsortParams", t.Params)
	}
	if p.Order != ops.SortAsc && p.Order != ops.SortDesc {
		return fmt.Errorf("unknown sort order %d", p.Order)
	}
	if t.Src[0].Type != quant.F32 || t.Type != quant.I32 {
		return fmt.Errorf("types %v from %v, want i32 from f32", t.Type, t.Src[0].Type)
	}
	if t.Ne[0] > argsortMaxRow {
		return fmt.Errorf("rows of %d elements: the kernels sort up to %d", t.Ne[0], argsortMaxRow)
	}
	return nil
}

func encodeArgsort(e *encoder, t *ops.Tensor) error {
	a, err := e.src(1, t.Src[0])
	if err != nil {
		return err
	}
	d, err := e.out(2, t)
	if err != nil {
		return err
	}
	pad := int64(1)
	for pad < t.Ne[0] {
		pad *= 2
	}
	desc := b32(t.Params.(ops.ArgsortParams).Order == ops.SortDesc)
	if t.Ne[0] > argsortTGRow {
		return encodeArgsortLong(e, t, a, d, desc, pad)
	}
	var s gpu.CStruct
	s.Tensor(t.Src[0]).Tensor(t).I32(desc).I32(int32(pad))
	threads := rowThreads(pad/2, 256)
	return e.dispatch("argsort.metal", "kb_argsort_f32", rowGrid(t), [3]int{threads, 1, 1}, []int{4 * int(pad), 4 * int(pad)}, args(&s), a, d)
}

// encodeArgsortLong sorts rows longer than argsortTGRow in device memory:
// the padded rows copied to scratch, a dispatch per stage (k, j) of the
// bitonic network, then the indices written out.
func encodeArgsortLong(e *encoder, t *ops.Tensor, a, d binding, desc int32, pad int64) error {
	rows := t.Ne[1] * t.Ne[2] * t.Ne[3]
	vals, err := e.scratch(4 * pad * rows)
	if err != nil {
		return err
	}
	idx, err := e.scratch(4 * pad * rows)
	if err != nil {
		return err
	}
	pass := func(k, j int64) binding {
		var s gpu.CStruct
		s.Tensor(t.Src[0]).Tensor(t).I32(desc).I32(int32(pad)).I32(int32(k)).I32(int32(j))
		return args(&s)
	}
	grid := [3]int{int((pad + 255) / 256), int(rows), 1}
	threads := [3]int{256, 1, 1}
	at := func(b binding, i int) binding {
		b.index = i
		return b
	}
	a.index = 1
	if err := e.dispatch("argsort.metal", "kb_argsort_init", grid, threads, nil, pass(0, 0), a, at(vals, 2), at(idx, 3)); err != nil {
		return err
	}
	for k := int64(2); k <= pad; k *= 2 {
		for j := k / 2; j > 0; j /= 2 {
			if err := e.dispatch("argsort.metal", "kb_argsort_step", grid, threads, nil, pass(k, j), at(vals, 1), at(idx, 2)); err != nil {
				return err
			}
		}
	}
	d.index = 2
	out := [3]int{int((t.Ne[0] + 255) / 256), int(rows), 1}
	return e.dispatch("argsort.metal", "kb_argsort_out", out, threads, nil, pass(0, 0), at(idx, 1), d)
}
