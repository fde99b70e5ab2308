package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// SSM_CONV: kernels/ssm_conv.cu.

func init() {
	kernelsByOp.Add(ops.OpSSMConv, supportsSSMConv, launchSSMConv)
}

func supportsSSMConv(t *ops.Tensor) error {
	if err := gpu.SupportsF32(t); err != nil {
		return err
	}
	sx, c := t.Src[0], t.Src[1]
	if c.Ne[2] != 1 || c.Ne[3] != 1 || sx.Ne[3] != 1 || sx.Ne[1] != c.Ne[1] || c.Ne[0] < 1 || sx.Ne[0] < c.Ne[0]-1 {
		return fmt.Errorf("sx %v and c %v do not match", sx.Ne, c.Ne)
	}
	if want := [ops.MaxDims]int64{sx.Ne[1], sx.Ne[0] - c.Ne[0] + 1, sx.Ne[2], 1}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
	if t.Ne[2] > 65535 || (t.Ne[0]+127)/128 > 1<<31-1 {
		return fmt.Errorf("%d sequences of %d channels, more than a grid takes", t.Ne[2], t.Ne[0])
	}
	return nil
}

// convTokens is how many tokens a thread of SSM_CONV takes.
const convTokens = 32

func launchSSMConv(b *Backend, t *ops.Tensor) error {
	src, dst, err := b.pointers(t)
	if err != nil {
		return err
	}
	chunks := (t.Ne[1] + convTokens - 1) / convTokens
	if chunks > 65535 {
		return fmt.Errorf("%d tokens, more than a grid takes", t.Ne[1])
	}
	threads := rowBlock(min(t.Ne[0], 128))
	grid := dim3{uint32((t.Ne[0] + int64(threads) - 1) / int64(threads)), uint32(t.Ne[2]), uint32(chunks)}
	return b.launch("ssm_conv.cu", "kb_ssm_conv_f32", grid, dim3{threads, 1, 1}, 0,
		u64(src[0]), tensorArg(t.Src[0]), u64(src[1]), tensorArg(t.Src[1]), u64(dst), tensorArg(t), i32(convTokens))
}
