package harness

import (
	"fmt"
	"math/rand/v2"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/reference"
)

// Sampled validation. A point too costly for the whole float64 reference
// (Plan.RefWork above the budget) is still checked where the op's outputs
// are independent of one another: the reference computes a sample of
// them, blocks of outputs at the edges and at seeded random places, on
// views of the point's own inputs, and the backend's values there are
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

// Blocks of a sampled MUL_MAT: sampleRows weight rows by sampleCols
// activation rows, at the first and last rows and columns and at
// sampleRand random places in between.
const (
	sampleRows = 8
	sampleCols = 4
	sampleRand = 2
)

// sampledReference returns the float64 reference of a sample of node's
// outputs and their indices in the output, or ok false when node's op has
// no sampled form.
func sampledReference(node *ops.Tensor, seed uint64) (idx []int64, want []float64, ok bool, err error) {
	if node.Op != ops.OpMulMat || len(node.Src) != 2 {
		return nil, nil, false, nil
	}
	a, b := node.Src[0], node.Src[1]
	m, n := a.Ne[1], b.Ne[1]
	rng := rand.New(rand.NewPCG(seed, 0x5a3))
	rowStarts := sampleStarts(rng, m, sampleRows)
	colStarts := sampleStarts(rng, n, sampleCols)
	for _, r0 := range rowStarts {
		rows := min(sampleRows, m-r0)
		av, err := ops.View(a, []int64{a.Ne[0], rows, a.Ne[2], a.Ne[3]}, a.Nb[:], r0*a.Nb[1])
		if err != nil {
			return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
		}
		for _, c0 := range colStarts {
			cols := min(sampleCols, n-c0)
			bv, err := ops.View(b, []int64{b.Ne[0], cols, b.Ne[2], b.Ne[3]}, b.Nb[:], c0*b.Nb[1])
			if err != nil {
				return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
			}
			sub, err := ops.MulMat(av, bv)
			if err != nil {
				return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
			}
			vals, err := reference.Compute(sub)
			if err != nil {
				return nil, nil, false, fmt.Errorf("harness: sample of %s: %w", node.Label(), err)
			}
			// vals is [rows, cols, b2, b3] contiguous; the node's output
			// is [m, n, b2, b3].
			for i3 := range node.Ne[3] {
				for i2 := range node.Ne[2] {
					for c := range cols {
						for r := range rows {
							idx = append(idx, r0+r+m*(c0+c+n*(i2+node.Ne[2]*i3)))
							want = append(want, vals[r+rows*(c+cols*(i2+node.Ne[2]*i3))])
						}
					}
				}
			}
		}
	}
	return idx, want, true, nil
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
