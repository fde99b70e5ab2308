package cuda

import (
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// The elementwise ops: kernels/elementwise.cu.

func init() {
	kernelsByOp.Add(ops.OpAdd, gpu.SupportsBinary, launchBinary)
	kernelsByOp.Add(ops.OpMul, gpu.SupportsBinary, launchBinary)
}

// elementGrid is the launch geometry of a grid-stride loop over n
// elements: 256 threads a block, at most 65535 blocks.
func elementGrid(n int64) (dim3, dim3) {
	blocks := min((n+255)/256, 65535)
	return dim3{uint32(max(blocks, 1)), 1, 1}, dim3{256, 1, 1}
}

// pointers returns the device addresses of t's sources and output.
func (b *Backend) pointers(t *ops.Tensor) (src []uint64, dst uint64, err error) {
	for _, s := range t.Src {
		if s == nil {
			src = append(src, 0)
			continue
		}
		p, err := b.ptr(s)
		if err != nil {
			return nil, 0, err
		}
		src = append(src, p)
	}
	dst, err = b.dstPtr(t)
	return src, dst, err
}

func launchBinary(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	name := "kb_add_f32"
	if t.Op == ops.OpMul {
		name = "kb_mul_f32"
	}
	if t.Src[1].Type == quant.F16 {
		name += "_f16"
	}
	grid, block := elementGrid(t.NumElements())
	return b.launch("elementwise.cu", name, grid, block, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(src[1]), tensorArg(t.Src[1]), u64(dst), tensorArg(t))
}
