package cuda

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// deviceF32 returns a packed f32 tensor in b's memory holding
// vals.
func deviceF32(t *testing.T, b *Backend, vals []float32, ne ...int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor("x", quant.F32, ne...)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := b.Alloc(4 * int64(len(vals)))
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	if _, err := buf.WriteAt(raw, 0); err != nil {
		t.Fatal(err)
	}
	x.Buffer = buf
	return x
}

// computeBytes allocates node's output in b's memory, computes it and
// returns its bytes.
func computeBytes(t *testing.T, b *Backend, node *ops.Tensor) []byte {
	t.Helper()
	buf, err := b.Alloc(node.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	node.Buffer = buf
	if err := b.Compute(node); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, node.Bytes())
	if _, err := buf.ReadAt(out, 0); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArgsortSpecialValues sorts rows holding NaNs, infinities, signed
// zeros and many ties, short rows (shared memory) and long ones (the
// global network: 5000 and 9000 elements pad to 8192 and 16384 keys),
// against a stable sort by cmp.Compare.
func TestArgsortSpecialValues(t *testing.T) {
	b := emulated(t)
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1, -1}
	for _, ne0 := range []int64{7, 100, 5000, 9000} {
		const rows = 3
		vals := make([]float32, ne0*rows)
		for i := range vals {
			if rng.IntN(4) == 0 {
				vals[i] = special[rng.IntN(len(special))]
			} else {
				vals[i] = float32(rng.IntN(20) - 10)
			}
		}
		for _, order := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
			node, err := ops.Argsort(deviceF32(t, b, vals, ne0, rows), order)
			if err != nil {
				t.Fatal(err)
			}
			out := computeBytes(t, b, node)
			for r := range int64(rows) {
				row := vals[r*ne0 : (r+1)*ne0]
				want := make([]int32, ne0)
				for i := range want {
					want[i] = int32(i)
				}
				slices.SortStableFunc(want, func(i, j int32) int {
					if order == ops.SortDesc {
						return cmp.Compare(row[j], row[i])
					}
					return cmp.Compare(row[i], row[j])
				})
				for i, w := range want {
					if got := int32(binary.LittleEndian.Uint32(out[4*(r*ne0+int64(i)):])); got != w {
						t.Fatalf("ne0=%d %v row %d: index %d is %d, want %d", ne0, order, r, i, got, w)
					}
				}
			}
		}
	}
}
