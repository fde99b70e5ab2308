package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ARGSORT: kernels/sort.metal.

func init() {
	register(ops.OpArgsort, supportsArgsort, encodeArgsort)
}

// argsortMaxRow is the longest row the bitonic sort takes: the row, padded
// to a power of two, is sorted in threadgroup memory (8 bytes an entry).
const argsortMaxRow = 2048

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
		return fmt.Errorf("rows of %d elements: the kernel sorts up to %d in threadgroup memory", t.Ne[0], argsortMaxRow)
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
	var s cstruct
	s.tensor(t.Src[0]).tensor(t).i32(b32(t.Params.(ops.ArgsortParams).Order == ops.SortDesc)).i32(int32(pad))
	threads := rowThreads(pad/2, 256)
	return e.dispatch("sort.metal", "kb_argsort_f32", rowGrid(t), [3]int{threads, 1, 1}, []int{4 * int(pad), 4 * int(pad)}, args(&s), a, d)
}
