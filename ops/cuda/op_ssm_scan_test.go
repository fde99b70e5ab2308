package cuda

import (
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// scanCase is an SSM_SCAN case beyond the harness's: aRow 1 for Mamba-2;
// xPermuted allocates x [head_dim, tokens, heads, seqs] and permutes it;
// ids draws the state slots.
func scanCase(name string, dState, headDim, nHead, nGroup, tokens, seqs, slots, aRow int64, xPermuted bool, ids harness.Dist, expect harness.Expect) harness.Case {
	return harness.Case{
		Name: name, Op: ops.OpSSMScan, Types: []quant.Type{quant.F32}, Expect: expect,
		Build: func(b *harness.Builder) (*ops.Tensor, error) {
			uni := harness.Uniform(-1, 1)
			st := b.Leaf("s", quant.F32, harness.Normal(0, 1), dState, headDim, nHead, slots)
			var x *ops.Tensor
			if xPermuted {
				x = b.Permute(b.Leaf("x", quant.F32, uni, headDim, tokens, nHead, seqs), 0, 2, 1, 3)
			} else {
				x = b.Leaf("x", quant.F32, uni, headDim, nHead, tokens, seqs)
			}
			dt := b.Leaf("dt", quant.F32, harness.Uniform(-4, 1), nHead, tokens, seqs)
			a := b.Leaf("A", quant.F32, harness.Uniform(-4, -0.5), aRow, nHead)
			bb := b.Leaf("B", quant.F32, harness.Normal(0, 1), dState, nGroup, tokens, seqs)
			c := b.Leaf("C", quant.F32, harness.Normal(0, 1), dState, nGroup, tokens, seqs)
			id := b.Leaf("ids", quant.I32, ids, seqs)
			return ops.SSMScan(st, x, dt, a, bb, c, id)
		},
	}
}

// TestSSMScanShapes runs SSM_SCAN on what the harness's cases leave out:
// d_state above 128 (the kernel with 16 states a lane), odd d_state and
// head_dim, a permuted x, no tokens, and a state slot id out of range
// (Compute's error, from the kernel's status word).
func TestSSMScanShapes(t *testing.T) {
	b := emulated(t)
	distinct := harness.DistinctInts
	for _, c := range []harness.Case{
		scanCase("mamba2,d_state=200,groups=2", 200, 3, 4, 2, 3, 2, 3, 1, false, distinct(0, 3), harness.ExpectMatch),
		scanCase("mamba1,d_state=256", 256, 1, 40, 1, 2, 1, 1, 256, false, distinct(0, 1), harness.ExpectMatch),
		scanCase("mamba1,d_state=5,groups=4", 5, 1, 36, 4, 4, 2, 2, 5, false, distinct(0, 2), harness.ExpectMatch),
		scanCase("mamba2,x permuted", 16, 8, 4, 1, 5, 2, 2, 1, true, distinct(0, 2), harness.ExpectMatch),
		scanCase("no tokens", 16, 4, 3, 1, 0, 2, 3, 1, false, distinct(0, 3), harness.ExpectMatch),
		scanCase("slot 5 of 2", 16, 1, 8, 1, 2, 1, 2, 16, false, harness.Ints(5, 6), harness.ExpectReject),
	} {
		r := harness.Run(b, c)
		if !r.Passed() {
			t.Errorf("%s: %s (%s)", c.Name, r.Summary(), r.Err)
		}
		t.Logf("%s: %s %s", c.Name, r.Summary(), r.Err)
	}
	// The status word is cleared: the next scan succeeds.
	c := scanCase("after a rejected one", 16, 1, 8, 1, 2, 1, 2, 16, false, distinct(0, 2), harness.ExpectMatch)
	if r := harness.Run(b, c); !r.Passed() {
		t.Errorf("%s: %s (%s)", c.Name, r.Summary(), r.Err)
	}
}
