package cuda

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// CPY: kernels/cpy.cu (the quantizers in kernels/quantize.cuh).

func init() {
	kernelsByOp.Add(ops.OpCpy, supportsCpy, launchCpy)
}

// quantizeTypes are the quantized types CPY writes (kb_quantize_*): the
// legacy and K formats, MXFP4, IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0. Of the
// codebook formats quant encodes IQ2_S, IQ3_XXS and IQ3_S without
// importance weights too, by grid searches that have no kernel here (nor
// any case of the harness's CPY matrix); the others need weights.
var quantizeTypes = []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0}

// kernelTypeNumber is t's number in the kernels (ggml_type, quants.cuh).
var kernelTypeNumber = map[quant.Type]int32{quant.F32: 0, quant.F16: 1, quant.BF16: 30}

func isFloatType(t quant.Type) bool { return t == quant.F32 || t == quant.F16 || t == quant.BF16 }

func supportsCpy(t *ops.Tensor) error {
	if len(t.Src) != 2 || t.Src[0] == nil || t.Src[1] == nil {
		return fmt.Errorf("want a source and a destination")
	}
	a, dst := t.Src[0], t.Src[1]
	if !isFloatType(a.Type) {
		return fmt.Errorf("a has type %v, want f32, f16 or bf16", a.Type)
	}
	if t.Type != dst.Type || t.Ne != dst.Ne || t.Nb != dst.Nb {
		return fmt.Errorf("node %v %v nb=%v does not match its destination %v %v nb=%v", t.Type, t.Ne, t.Nb, dst.Type, dst.Ne, dst.Nb)
	}
	if a.NumElements() != t.NumElements() {
		return fmt.Errorf("a has %d elements, the destination %d", a.NumElements(), t.NumElements())
	}
	switch {
	case isFloatType(t.Type):
	case isQuantizeType(t.Type):
		if !t.IsContiguous() {
			return fmt.Errorf("quantized destination must be contiguous")
		}
		if t.Ne[0]%t.Type.BlockSize() != 0 {
			return fmt.Errorf("row of %d elements is not a multiple of %v's block size %d", t.Ne[0], t.Type, t.Type.BlockSize())
		}
	default:
		return fmt.Errorf("destination type %v is not one the kernels write", t.Type)
	}
	return nil
}

func isQuantizeType(t quant.Type) bool {
	for _, q := range quantizeTypes {
		if q == t {
			return true
		}
	}
	return false
}

// launchCpy converts between float types in a grid-stride loop over the
// elements, or quantizes whole blocks: 64 blocks of 32 elements or 4 to
// 8 super-blocks of 256 to a block of 64 threads.
func launchCpy(b *Backend, t *ops.Tensor) error {
	a := t.Src[0]
	src, err := b.ptr(a)
	if err != nil {
		return err
	}
	dst, err := b.dstPtr(t)
	if err != nil {
		return err
	}
	if isFloatType(t.Type) {
		grid, block := elementGrid(t.NumElements())
		return b.launch("cpy.cu", "kb_cpy_"+a.Type.String()+"_"+t.Type.String(), grid, block, 0,
			u64(src), tensorArg(a), u64(dst), tensorArg(t))
	}
	bs := t.Type.BlockSize()
	nblocks := t.NumElements() / bs
	perBlock := int64(64) // legacy blocks a thread block quantizes
	if bs == quant.QKK {
		perBlock = 8
		if t.Type == quant.Q2_K || t.Type == quant.Q3_K || t.Type == quant.Q6_K {
			perBlock = 4
		}
	}
	grid := (nblocks + perBlock - 1) / perBlock
	if grid > 1<<31-1 {
		return fmt.Errorf("%d blocks, more than a grid takes", nblocks)
	}
	packed := int32(0)
	if a.IsContiguous() {
		packed = 1
	}
	args := [][]byte{u64(src), tensorArg(a), i32(kernelTypeNumber[a.Type]), i32(packed), u64(dst), i64(nblocks)}
	if t.Type == quant.IQ4_NL {
		// The blocks of a row: a block of zeros takes the codes of an
		// earlier block of its row (kb_quantize_iq4nl).
		args = append(args, i64(t.Ne[0]/bs))
	}
	return b.launch("cpy.cu", "kb_quantize_"+t.Type.String(), dim3{uint32(grid), 1, 1}, dim3{64, 1, 1}, 0, args...)
}
