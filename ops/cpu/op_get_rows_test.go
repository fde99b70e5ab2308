package cpu

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestGetRows gathers rows of every type and compares with the reference
// exactly: both decode with quant.DequantizeRow (or copy), so NMSE is 0.
func TestGetRows(t *testing.T) {
	types := append([]quant.Type{quant.I32}, mxWeightTypes...)
	mxEachBackend(t, func(t *testing.T, b *Backend) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, typ := range types {
			t.Run(typ.String(), func(t *testing.T) {
				ne0 := 2 * typ.BlockSize()
				var a *ops.Tensor
				if typ == quant.I32 {
					vals := make([]int32, ne0*7*2)
					for i := range vals {
						vals[i] = int32(rng.Uint32())
					}
					a = mxIDs(t, b, "a", vals, ne0, 7, 2)
				} else {
					a = mxLeaf(t, b, rng, "a", typ, ne0, 7, 2)
				}
				ids := mxIDs(t, b, "ids", []int32{6, 0, 3, 3, 1, 2, 5, 0, 6, 4}, 5, 2)
				node, err := ops.GetRows(a, ids)
				if err != nil {
					t.Fatal(err)
				}
				mxCheck(t, b, node, 0)
			})
		}
	})
}

// TestGetRowsStridedIDs reads ids through a strided view (every other
// element of a buffer).
func TestGetRowsStridedIDs(t *testing.T) {
	b := newTestBackend(t, 2)
	defer b.Close()
	rng := rand.New(rand.NewPCG(23, 24))
	a := mxLeaf(t, b, rng, "a", quant.Q8_0, 64, 6)
	base := mxIDs(t, b, "all", []int32{5, 99, 0, 99, 2, -1, 1, 99}, 8)
	ids, err := ops.View(base, []int64{4}, []int64{8}, 0)
	if err != nil {
		t.Fatal(err)
	}
	node, err := ops.GetRows(a, ids)
	if err != nil {
		t.Fatal(err)
	}
	mxCheck(t, b, node, 0)
}

func TestGetRowsBadIDs(t *testing.T) {
	for _, bad := range []int32{7, -1} {
		b := newTestBackend(t, 3)
		rng := rand.New(rand.NewPCG(25, 26))
		a := mxLeaf(t, b, rng, "a", quant.F16, 8, 7)
		ids := mxIDs(t, b, "ids", []int32{1, bad, 2}, 3)
		node, err := ops.GetRows(a, ids)
		if err != nil {
			t.Fatal(err)
		}
		mxAlloc(t, b, node, 0)
		err = b.Compute(node)
		if err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("id %d: err = %v, want an out-of-range error", bad, err)
		}
		b.Close()
	}
}
