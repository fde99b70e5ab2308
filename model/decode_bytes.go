package model

import (
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/gguf"
)

// DecodeWeightBytes returns the weight bytes one decode step (one token,
// n = 1) reads from a model's GGUF file: every tensor's data once, except
// that the token embedding table gives only one row (a GET_ROWS), unless
// the file has no output.weight and the output projection reuses it
// whole; and a mixture of experts' expert tensors (names with "_exps")
// give only the used experts' share, expert_used_count of expert_count.
// Times tokens/s, it is the weight bandwidth a decode streams, the
// figure to set beside the machine's DRAM read bandwidth when decode is
// memory bound (with DecodeStateBytes for a recurrent model).
func DecodeWeightBytes(f *gguf.File) (int64, error) {
	h, err := HparamsFromGGUF(f)
	if err != nil {
		return 0, err
	}
	_, hasOutput := f.TensorInfo("output.weight") // else tied: the output reads the whole table
	var total int64
	for _, t := range f.Tensors {
		switch {
		case t.Name == "token_embd.weight" && hasOutput:
			if t.Ne[1] > 0 {
				total += t.Size / t.Ne[1] // one row
			}
		case strings.Contains(t.Name, "_exps."):
			// The experts are the outermost dimension (biases: [n, experts]).
			if ne := t.Ne[max(t.NDims-1, 0)]; h.NExpert <= 0 || ne != int64(h.NExpert) {
				return 0, fmt.Errorf("model: %s has %d experts in its outer dimension, the model %d", t.Name, ne, h.NExpert)
			}
			total += t.Size / int64(h.NExpert) * int64(h.NExpertUsed)
		default:
			total += t.Size
		}
	}
	return total, nil
}

// DecodeStateBytes returns the recurrent-state bytes one decode step (one
// token, one sequence) of a model moves between memory and the cores:
// each Mamba layer reads its conv and SSM states (f32) and writes them
// back, so twice their size, summed over the layers; 0 for a model
// without recurrent state. It counts each state read once and written
// once, the least a step can move: both llama.cpp's graph and ours write
// the new SSM state into the scan's result and copy it into the cache,
// a second pass the caches may absorb. Added to DecodeWeightBytes, it is
// the traffic of a recurrent decode: Mamba-2's d_state-128 states come
// to 38 MB a step at 24 layers of d_inner 1536, a sixth of a 140M
// model's f16 weights.
func DecodeStateBytes(f *gguf.File) (int64, error) {
	h, err := HparamsFromGGUF(f)
	if err != nil {
		return 0, err
	}
	if !h.Recurrent() {
		return 0, nil
	}
	conv := int64(max(h.SSMConv-1, 0)) * int64(h.SSMConvChannels())
	ssm := int64(h.SSMState) * int64(h.SSMInner)
	return 2 * 4 * (conv + ssm) * int64(h.NLayer), nil
}
