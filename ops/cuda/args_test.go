package cuda

import (
	"bytes"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// TestArgBytes: tensorArg and mmArgs.bytes, written directly into one
// allocation, lay out their fields as gpu.CStruct does (the layout the
// kernels declare).
func TestArgBytes(t *testing.T) {
	x, err := ops.NewTensor("x", quant.F16, 7, 3, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ops.Permute(x, 1, 0, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []*ops.Tensor{x, v} {
		var s gpu.CStruct
		if got, want := tensorArg(tt), s.Tensor(tt).Bytes(); !bytes.Equal(got, want) {
			t.Errorf("tensorArg(%v %v):\n%v, want\n%v", tt.Ne, tt.Nb, got, want)
		}
	}
	a := mmArgs{w: 1, wNb1: -2, wNb2: 3, wNb3: 4, x: 5, xNb1: 6, xNb2: 7, xNb3: 8, d: 9, dNb1: 10, dNb2: 11, dNb3: 12,
		m: 13, n: 14, k: 15, b2: 16, r2: 17, r3: 18, ids: 19, idsNb0: 20, idsNb1: 21, used: 22, b1: 23, nExpert: 24,
		pairs: 25, tiles: 26, ntile: 27, status: 1 << 60, part: 28, partNb: 29, kspl: 30, nspl: 31}
	var s gpu.CStruct
	for _, f := range []int64{1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 1 << 60, 28, 29, 30, 31} {
		s.I64(f)
	}
	if got, want := a.bytes(), s.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("mmArgs.bytes:\n%v, want\n%v", got, want)
	}
}
