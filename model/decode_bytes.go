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
// memory bound.
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
