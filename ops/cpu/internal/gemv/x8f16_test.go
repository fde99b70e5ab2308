package gemv

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestX8F16RoundTrip checks that UnpackX8F16 undoes RepackX8F16 and that
// the repack moves bytes (a row's second run sits 128 bytes on).
func TestX8F16RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, nb := range []int{2, 3, 10, 48} {
		src := make([]byte, X8BytesF16*nb)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		x8 := make([]byte, len(src))
		RepackX8F16(x8, src, nb)
		// Row 1's first run is the x8 group's second 32 bytes; row 0's
		// second run follows the four rows' first runs.
		row := 32 * nb
		if !bytes.Equal(x8[32:64], src[row:row+32]) || !bytes.Equal(x8[128:160], src[32:64]) {
			t.Fatalf("nb=%d: runs not interleaved as documented", nb)
		}
		for r := range 8 {
			got := make([]byte, row-32)
			GatherX8F16Row(got, x8, nb, r, 1, nb-1)
			if !bytes.Equal(got, src[r*row+32:(r+1)*row]) {
				t.Fatalf("nb=%d: GatherX8F16Row of row %d differs from the plain row", nb, r)
			}
		}
		back := make([]byte, len(src))
		UnpackX8F16(back, x8, nb)
		if !bytes.Equal(back, src) {
			t.Fatalf("nb=%d: unpacked rows differ from the originals", nb)
		}
	}
}

// TestX8F16TwinReference checks the f16 x8 twin against float64 dot
// products of the rows, several groups per call.
func TestX8F16TwinReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, shape := range [][2]int{{1, 1}, {3, 2}, {48, 3}} {
		nb, ng := shape[0], shape[1]
		n := 16 * nb
		t.Run(fmt.Sprintf("nb=%d/ng=%d", nb, ng), func(t *testing.T) {
			w, wdec := quantRows(t, rng, quant.F16, 8*ng, n)
			y, ydec := quantRows(t, rng, quant.F16, 1, n)
			x := make([]byte, len(w))
			for g := range ng {
				grp := X8BytesF16 * nb
				RepackX8F16(x[g*grp:(g+1)*grp], w[g*grp:(g+1)*grp], nb)
			}
			out := make([]float32, 8*ng)
			X8F16Twin(nb, ng, x, y, nil, out, testPFD(nb))
			for r := range 8 * ng {
				var want, mag float64
				for i := range n {
					p := float64(wdec[r][i]) * float64(ydec[0][i])
					want += p
					mag += math.Abs(p)
				}
				if d := math.Abs(float64(out[r]) - want); d > 1e-5*mag+1e-6 {
					t.Errorf("row %d: twin %g, reference %g (|diff| %g, sum of |products| %g)", r, out[r], want, d, mag)
				}
			}
		})
	}
}
