package gemv

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// x8Types lists the x8 formats with their repacking, side data and twin.
var x8Types = []struct {
	wt     quant.Type
	bs     int
	per    int
	repack func(dst, src []byte, nb int)
	unpack func(dst, src []byte, nb int)
	prep   func(y []byte, nb int, side []float32)
	twin   X8Func
}{
	{quant.Q4_0, simd.BytesQ4_0, X8SlotsQ4_0, RepackX8Q4_0, unpackX8(simd.BytesQ4_0), Q4_0Prep, X8Q4_0Twin},
	{quant.Q8_0, simd.BytesQ8_0, X8SlotsQ8_0, RepackX8Q8_0, unpackX8(simd.BytesQ8_0), X8Q8_0Prep, X8Q8_0Twin},
	{quant.Q6_K, simd.BytesQ6_K, X8SlotsK, RepackX8Q6_K, UnpackX8Q6_K, X8Q8_KPrep, X8Q6_KTwin},
	{quant.Q4_K, simd.BytesQ4_K, X8SlotsK, RepackX8Q4_K, UnpackX8Q4_K, X8Q8_KPrep, X8Q4_KTwin},
}

// unpackX8 is UnpackX8 for blocks of bs bytes.
func unpackX8(bs int) func(dst, src []byte, nb int) {
	return func(dst, src []byte, nb int) { UnpackX8(dst, src, nb, bs) }
}

// quantRows returns rows of n elements of t quantized from random
// values, and the values the rows decode to.
func quantRows(t testing.TB, rng *rand.Rand, wt quant.Type, rows, n int) ([]byte, [][]float32) {
	t.Helper()
	size, err := wt.RowSize(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, int64(rows)*size)
	dec := make([][]float32, rows)
	src := make([]float32, n)
	for r := range rows {
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		row := out[int64(r)*size : int64(r+1)*size]
		if err := quant.QuantizeRow(wt, src, row); err != nil {
			t.Fatal(err)
		}
		dec[r] = make([]float32, n)
		if err := quant.DequantizeRow(wt, row, dec[r]); err != nil {
			t.Fatal(err)
		}
	}
	return out, dec
}

// TestX8RoundTrip checks that the UnpackX8 functions restore what
// RepackX8* packed, for any bytes,
// and that a repacked group keeps its size.
func TestX8RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range x8Types {
		for _, nb := range []int{1, 2, 7, 32} {
			src := make([]byte, 8*nb*c.bs)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			x8 := make([]byte, len(src))
			c.repack(x8, src, nb)
			if bytes.Equal(x8, src) {
				t.Fatalf("%v nb=%d: repacking changed nothing", c.wt, nb)
			}
			back := make([]byte, len(src))
			c.unpack(back, x8, nb)
			if !bytes.Equal(back, src) {
				t.Fatalf("%v nb=%d: unpacked rows differ from the originals", c.wt, nb)
			}
		}
	}
}

// TestX8TwinsReference checks the x8 twins against the float64 dot
// products of the decoded rows (quantized weights and activations), for
// several groups per call.
func TestX8TwinsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range x8Types {
		for _, shape := range [][2]int{{1, 1}, {3, 2}, {16, 3}} {
			nb, ng := shape[0], shape[1]
			n := nb * int(c.wt.BlockSize())
			t.Run(fmt.Sprintf("%v/nb=%d/ng=%d", c.wt, nb, ng), func(t *testing.T) {
				w, wdec := quantRows(t, rng, c.wt, 8*ng, n)
				y, ydec := quantRows(t, rng, c.wt.VecDotType(), 1, n)
				x := make([]byte, len(w))
				for g := range ng {
					grp := 8 * nb * c.bs
					c.repack(x[g*grp:(g+1)*grp], w[g*grp:(g+1)*grp], nb)
				}
				side := make([]float32, nb*c.per)
				c.prep(y, nb, side)
				out := make([]float32, 8*ng)
				c.twin(nb, ng, x, y, side, out, testPFD(nb))
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
}

// TestX8Q6_KLayout checks RepackX8Q6_K against the layout x8k.go
// documents, element by element: the 6-bit triple of half h and chunk c
// holds element 128h + 32i + 4c + e of row r as value i at byte 4r+e,
// and the scale chunks hold each row's scales where the kernel reads
// them.
func TestX8Q6_KLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const nb = 2
	src := make([]byte, 8*nb*simd.BytesQ6_K)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	x8 := make([]byte, len(src))
	RepackX8Q6_K(x8, src, nb)
	for b := range nb {
		xb := x8[b*X8BytesQ6_K:][:X8BytesQ6_K]
		for r := range 8 {
			blk := src[(r*nb+b)*simd.BytesQ6_K:][:simd.BytesQ6_K]
			if xb[2*r] != blk[208] || xb[2*r+1] != blk[209] {
				t.Fatalf("block %d row %d: d differs", b, r)
			}
			for h := range 2 {
				for c := range 8 {
					o := 144 + 96*(8*h+c) + 4*r
					for e := range 4 {
						v := make([]byte, 4)
						v[0], v[1], v[2], v[3] = unpack6(xb[o+e], xb[o+32+e], xb[o+64+e])
						for i := range 4 {
							if want := q6KCode(blk, 128*h+32*i+4*c+e); v[i] != want {
								t.Fatalf("block %d row %d element %d: x8 code %d, plain %d", b, r, 128*h+32*i+4*c+e, v[i], want)
							}
						}
					}
				}
			}
			// Chunk t = 4h+2k+u: sub-blocks j = 8h+k+4u and j+2, rows
			// 0-3 then 4-7.
			for tc := range 8 {
				h, k, u := tc/4, tc/2%2, tc%2
				for hi := range 2 {
					j := 8*h + k + 4*u + 2*hi
					if got := xb[16+16*tc+8*(r/4)+4*hi+r%4]; got != blk[192+j] {
						t.Fatalf("block %d row %d scale %d: x8 %d, plain %d", b, r, j, got, blk[192+j])
					}
				}
			}
		}
	}
}

// q6KCode returns the 6-bit code of element e of the plain q6_K block
// blk.
func q6KCode(blk []byte, e int) byte {
	h, i, l := e/128, e%128/32, e%32
	low := blk[64*h+32*(i%2)+l] >> (4 * uint(i/2)) & 15
	high := blk[128+32*h+l] >> (2 * uint(i)) & 3
	return low | high<<4
}

// testPFD is the prefetch distance a test passes to the x8 kernels for
// nb blocks: none, short, long and far past the stream's end, which
// must all give the same result (a prefetch never faults).
func testPFD(nb int) int { return []int{0, 64, 1024, 8192, 1 << 20}[nb%5] }

// benchPFD is the prefetch distance the benchmarks pass: the CPU
// backend's default X8Prefetch.
const benchPFD = 4096
