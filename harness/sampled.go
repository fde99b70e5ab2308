package harness

import (
	"fmt"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
)

// Sampled validation. A point too costly for the whole float64 reference
// (Plan.RefWork above the budget) is still checked where the op's outputs
// are independent of one another and its definition says how to sample
// them (OpDef's sample): the reference computes a sample of them
// (MUL_MAT: blocks of weight rows by activation rows; MUL_MAT_ID: blocks
// of expert rows by tokens; FLASH_ATTN_EXT: blocks of query rows), at the
// edges and at seeded random places, on views of the point's own inputs, and the backend's values there are
// judged with the case's tolerance. A bug that touches every output, or
// every tile, or the last rows or columns, shows in the sample; a bug
// confined to an interior tile the sample misses does not, which is why
// the result says "sampled".

// sampledReason is the reason of a result validated on a sample of its
// outputs.
const sampledReason = "sampled: float64 reference of a sample of the outputs"

// Sampled reports whether r was validated on a sample of its outputs.
func Sampled(r Result) bool {
	return r.Status == StatusOK && r.Reason == sampledReason
}

// sampleRand is the number of blocks a sample takes at random places in
// each dimension it samples, besides the first and the last.
const sampleRand = 2

// sampledReference returns the float64 reference of a sample of node's
// outputs and their indices in the output, or ok false when node's op has
// no sampled form (its definition no sample function).
func sampledReference(node *ops.Tensor, seed uint64) (idx []int64, want []float64, ok bool, err error) {
	d := lookupDef(node.Op)
	if d == nil || d.sample == nil {
		return nil, nil, false, nil
	}
	idx, want, err = d.sample(node, rand.New(rand.NewPCG(seed, 0x5a3)))
	if err != nil {
		return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
	}
	// Blocks may overlap on small outputs: keep each output once.
	seen := make(map[int64]bool, len(idx))
	k := 0
	for i, j := range idx {
		if !seen[j] {
			seen[j] = true
			idx[k], want[k] = j, want[i]
			k++
		}
	}
	return idx[:k], want[:k], true, nil
}

// sampleStarts returns the first indices of blocks of size bs among n:
// the first block, the last, and sampleRand at random, without repeats.
func sampleStarts(rng *rand.Rand, n, bs int64) []int64 {
	if n <= 0 {
		return nil
	}
	starts := []int64{0}
	add := func(s int64) {
		for _, t := range starts {
			if t == s {
				return
			}
		}
		starts = append(starts, s)
	}
	add(max(0, n-bs))
	for range sampleRand {
		add(rng.Int64N(max(1, n-bs+1)))
	}
	return starts
}
