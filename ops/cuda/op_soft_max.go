package cuda

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// SOFT_MAX: kernels/soft_max.cu.

func init() {
	kernelsByOp.Add(ops.OpSoftMax, supportsSoftMax, launchSoftMax)
}

// srcAt returns t's source i, or nil when t has no such source.
func srcAt(t *ops.Tensor, i int) *ops.Tensor {
	if i < len(t.Src) {
		return t.Src[i]
	}
	return nil
}

// optTensorArg is tensorArg for an optional source: zeros when absent.
func optTensorArg(t *ops.Tensor) []byte {
	if t == nil {
		var s gpu.CStruct
		for range 8 {
			s.I64(0)
		}
		return s.Bytes()
	}
	return tensorArg(t)
}

func supportsSoftMax(t *ops.Tensor) error {
	p, ok := t.Params.(ops.SoftMaxParams)
	if !ok {
		return fmt.Errorf("params are %T, want ops.SoftMaxParams", t.Params)
	}
	if len(t.Src) < 1 || len(t.Src) > 3 {
		return fmt.Errorf("want 1 to 3 sources, got %d", len(t.Src))
	}
	want, err := ops.SoftMax(t.Src[ops.SMInput], srcAt(t, ops.SMMask), srcAt(t, ops.SMSinks), p)
	if err != nil {
		return err
	}
	if t.Type != quant.F32 || t.Ne != want.Ne {
		return fmt.Errorf("node is %v %v, its sources give %v %v", t.Type, t.Ne, want.Type, want.Ne)
	}
	if rows := softMaxBlocks(t); rows > math.MaxInt32 {
		return fmt.Errorf("%d rows, more than a grid takes", t.NumRows())
	}
	return nil
}

// Rows up to softMaxWarpRow elements go to a warp each, four to a block;
// longer ones to a block each.
const (
	softMaxWarpRow    = 1024
	softMaxWarpsBlock = 4
)

// softMaxCacheBytes is the most dynamic shared memory SOFT_MAX keeps its
// rows in; longer rows are read again for each pass instead. A variable
// so that tests can take the uncached path.
var softMaxCacheBytes = 48 << 10

// softMaxGeometry returns the block shape for rows of ne0 elements: 32 x
// rows per block for short rows, threads x 1 for long ones (about eight
// elements per thread, 128 to 1024 threads).
func softMaxGeometry(ne0, rows int64) dim3 {
	if ne0 <= softMaxWarpRow {
		return dim3{32, uint32(min(softMaxWarpsBlock, max(rows, 1))), 1}
	}
	n := (ne0 + 7) / 8
	return dim3{uint32(min(max((n+31)/32*32, 128), 1024)), 1, 1}
}

func softMaxBlocks(t *ops.Tensor) int64 {
	rows := t.NumRows()
	bl := softMaxGeometry(t.Ne[0], rows)
	return (rows + int64(bl.y) - 1) / int64(bl.y)
}

// alibiBases returns ALiBi's m0, m1 and n (the largest power of two not
// above nHead) as ggml computes them, m0 and m1 rounded to float32; 1, 1
// without ALiBi, which makes every slope exactly 1.
func alibiBases(maxBias float32, nHead int64) (m0, m1 float32, n int32) {
	if maxBias <= 0 || nHead <= 0 {
		return 1, 1, 0
	}
	n = int32(1) << (bits.Len64(uint64(nHead)) - 1)
	m0 = float32(math.Pow(2, -float64(maxBias)/float64(n)))
	m1 = float32(math.Pow(2, -float64(maxBias)/2/float64(n)))
	return m0, m1, n
}

func launchSoftMax(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	p := t.Params.(ops.SoftMaxParams)
	a, mask, sinks := t.Src[ops.SMInput], srcAt(t, ops.SMMask), srcAt(t, ops.SMSinks)
	name := "kb_soft_max_f32"
	var maskPtr, sinkPtr uint64
	if mask != nil {
		name += "_mask_" + mask.Type.String()
		maskPtr = src[ops.SMMask]
	}
	if sinks != nil {
		sinkPtr = src[ops.SMSinks]
	}
	block := softMaxGeometry(a.Ne[0], a.NumRows())
	shared := int(block.y) * int(a.Ne[0]) * 4
	cache := int32(1)
	if shared > softMaxCacheBytes {
		shared, cache = 0, 0
	}
	m0, m1, nLog2 := alibiBases(p.MaxBias, a.Ne[2])
	var ps gpu.CStruct
	ps.F32(p.Scale)
	ps.F32(m0)
	ps.F32(m1)
	ps.I32(nLog2)
	ps.I32(cache)
	return b.launch("soft_max.cu", name, dim3{uint32(softMaxBlocks(t)), 1, 1}, block, shared,
		u64(src[ops.SMInput]), tensorArg(a), u64(maskPtr), optTensorArg(mask), u64(sinkPtr), optTensorArg(sinks),
		u64(dst), tensorArg(t), ps.Bytes())
}
