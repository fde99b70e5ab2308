package cuda

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ARGSORT: kernels/argsort.cu.

func init() {
	kernelsByOp.Add(ops.OpArgsort, supportsArgsort, launchArgsort)
}

// sortTile is KB_SORT_TILE: rows padded to at most this many keys are
// sorted in shared memory, longer ones through a global scratch buffer.
const sortTile = 4096

func supportsArgsort(t *ops.Tensor) error {
	a := t.Src[0]
	if a.Type != quant.F32 || t.Type != quant.I32 {
		return fmt.Errorf("types %v -> %v, want f32 -> i32", a.Type, t.Type)
	}
	p, ok := t.Params.(ops.ArgsortParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.ArgsortParams", t.Params)
	}
	if p.Order != ops.SortAsc && p.Order != ops.SortDesc {
		return fmt.Errorf("unknown sort order %d", p.Order)
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	// Indices are i32, and a padded row's keys must fit the index word.
	if a.Ne[0] > math.MaxInt32/2 {
		return fmt.Errorf("rows of %d elements are longer than the kernels take", a.Ne[0])
	}
	if n := pow2(a.Ne[0]); n > sortTile && t.NumRows()*n > 1<<31 {
		return fmt.Errorf("%d rows of %d keys are more than a sort's scratch takes", t.NumRows(), n)
	}
	if t.NumRows() > 1<<31-1 {
		return fmt.Errorf("%d rows, more than a grid takes", t.NumRows())
	}
	return nil
}

// pow2 returns the least power of two >= n (1 for n <= 1).
func pow2(n int64) int64 {
	p := int64(1)
	for p < n {
		p <<= 1
	}
	return p
}

// sortThreads is the block size for pairs compare-exchanges a step: a
// multiple of 32, at most 1024.
func sortThreads(pairs int64) uint32 {
	return uint32(min(max((pairs+31)/32*32, 32), 1024))
}

func launchArgsort(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	a := t.Src[0]
	desc := int32(0)
	if t.Params.(ops.ArgsortParams).Order == ops.SortDesc {
		desc = 1
	}
	rows, n := t.NumRows(), pow2(t.Ne[0])
	if n <= sortTile {
		// Short rows share a block: at least 256 keys to a block.
		segs := max(1, 256/n)
		blocks := (rows + segs - 1) / segs
		return b.launch("argsort.cu", "kb_argsort_f32", dim3{uint32(blocks), 1, 1}, dim3{sortThreads(segs * n / 2), 1, 1}, int(8*segs*n),
			u64(src[0]), tensorArg(a), u64(dst), tensorArg(t), i32(desc), i32(int32(n)), i32(int32(segs)))
	}
	scratch, err := b.scratchBuffer(scratchSort, 8*rows*n)
	if err != nil {
		return err
	}
	sp := u64(scratch)
	grid, block := elementGrid(rows * n)
	if err := b.launch("argsort.cu", "kb_argsort_keys", grid, block, 0, u64(src[0]), tensorArg(a), sp, i64(n), i32(desc)); err != nil {
		return err
	}
	tiles := dim3{uint32(rows * n / sortTile), 1, 1}
	tileBlock := dim3{sortThreads(sortTile / 2), 1, 1}
	if err := b.launch("argsort.cu", "kb_argsort_tiles", tiles, tileBlock, 8*sortTile, sp, i64(n), i64(0), i32(1)); err != nil {
		return err
	}
	stepGrid, stepBlock := elementGrid(rows * n / 2)
	for k := int64(2 * sortTile); k <= n; k <<= 1 {
		for j := k / 2; j >= sortTile; j >>= 1 {
			if err := b.launch("argsort.cu", "kb_argsort_step", stepGrid, stepBlock, 0, sp, i64(n), i64(rows), i64(k), i64(j)); err != nil {
				return err
			}
		}
		if err := b.launch("argsort.cu", "kb_argsort_tiles", tiles, tileBlock, 8*sortTile, sp, i64(n), i64(k), i32(0)); err != nil {
			return err
		}
	}
	grid, block = elementGrid(t.NumElements())
	return b.launch("argsort.cu", "kb_argsort_indices", grid, block, 0, sp, i64(n), u64(dst), tensorArg(t))
}
