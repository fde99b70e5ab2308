//go:build amd64 && !purego

package gemv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// vnniGemv lists the vnni tier's four-row kernels with the AVX2 kernels
// they stand in for, their twins (the generic dot product for the K
// formats) and the offsets of each block's f16 scales (set to 1 by the
// extreme-value test).
var vnniGemv = []struct {
	wt         quant.Type
	vnni, avx2 Func
	dot        func(n int, x, y []byte) float32
	halves     []int
}{
	{quant.Q4_K, Q4_KVNNI, Q4_KAVX2, dot.Q4_K, []int{0, 2}},
	{quant.Q5_K, Q5_KVNNI, Q5_KAVX2, dot.Q5_K, []int{0, 2}},
	{quant.Q6_K, Q6_KVNNI, Q6_KAVX2, dot.Q6_K, []int{208}},
	{quant.Q5_0, Q5_0VNNI, Q5_0AVX2, Q5_0Twin, []int{0}},
	{quant.Q4_1, Q4_1VNNI, Q4_1AVX2, Q4_1Twin, []int{0, 2}},
	{quant.Q4_0, Q4_0VNNI, Q4_0AVX2, Q4_0Twin, []int{0}},
	{quant.Q5_1, Q5_1VNNI, Q5_1AVX2, Q5_1Twin, []int{0, 2}},
	{quant.Q8_0, Q8_0VNNI, Q8_0AVX2, Q8_0Twin, []int{0}},
	{quant.Q2_K, Q2_KVNNI, Q2_KAVX2, dot.Q2_K, []int{80, 82}},
	{quant.Q3_K, Q3_KVNNI, Q3_KAVX2, dot.Q3_K, []int{108}},
}

// vnniGemvDiff runs case c's VNNI kernel on nb blocks of the four rows x
// (stride ldx) and the activation row y (its block scales widened for a
// q8_0 row), and fails t unless each output equals the AVX2 kernel's
// and the twin's bit for bit.
func vnniGemvDiff(t *testing.T, c int, what string, nb int, x []byte, ldx int, y []byte) {
	t.Helper()
	k := vnniGemv[c]
	var dy []float32
	if k.wt.VecDotType() == quant.Q8_0 {
		dy = make([]float32, nb)
		for ib := range dy {
			dy[ib] = simd.HalfAt(y, ib*simd.BytesQ8_0)
		}
	}
	got := [4]float32{float32(math.NaN()), 1, 2, 3}
	var want [4]float32
	k.vnni(nb, x, ldx, y, dy, &got)
	k.avx2(nb, x, ldx, y, dy, &want)
	what = fmt.Sprintf("%v %s nb=%d ldx=%d", k.wt, what, nb, ldx)
	checkRows(t, what+" (avx2)", &got, func(r int) float32 { return want[r] })
	if k.dot != nil {
		n := nb * run(k.wt)
		checkRows(t, what+" (dot)", &got, func(r int) float32 { return k.dot(n, x[r*ldx:], y) })
	}
}

// TestVNNIGemvTwins checks the VNNI four-row kernels against the AVX2
// ones (and the dot product) bit for bit over random block counts, row
// strides, offsets and contents: quantized rows with special values, and
// raw random bytes (NaN, Inf and denormal scales, every code).
func TestVNNIGemvTwins(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(71, 72))
	for c, k := range vnniGemv {
		act := k.wt.VecDotType()
		for trial := range 200 {
			nb := rng.IntN(9)
			n := nb * run(k.wt)
			rowBytes := int(simdtest.MustRowSize(t, k.wt, n))
			ldx := rowBytes + rng.IntN(40)
			var x []byte
			if trial%2 == 0 {
				x = simdtest.Row(rng, quant.I8, 3*ldx+rowBytes, rng.IntN(64), 0)
			} else {
				x = rows4(rng, k.wt, nb, ldx, rng.IntN(64), 0.05, nil)
			}
			y := simdtest.Row(rng, act, n, rng.IntN(64), []float64{0, 0.05}[trial%2])
			vnniGemvDiff(t, c, fmt.Sprintf("trial %d", trial), nb, x, ldx, y)
		}
	}
}

// TestVNNIGemvExtremes checks the VNNI four-row kernels on rows of one
// repeated byte and mixes of extreme bytes (every code at its ends,
// activations -128 and 127), the scales set to 1, where an int16
// saturation or a wrong sign extension would show.
func TestVNNIGemvExtremes(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(73, 74))
	codes := []byte{0x00, 0xff, 0x80, 0x7f, 0x81, 0x01, 0xc0, 0x3f, 0x55, 0xaa, 0x0f, 0xf0, 0x88}
	for c, k := range vnniGemv {
		act := k.wt.VecDotType()
		const nb = 3
		n := nb * run(k.wt)
		xb := int(simdtest.MustRowSize(t, k.wt, run(k.wt)))
		ldx := nb * xb
		unit := func(x, y []byte) {
			for b := range 4 * nb {
				for _, o := range k.halves {
					binary.LittleEndian.PutUint16(x[b*xb+o:], 0x3c00)
				}
			}
			ab := len(y) / nb
			for b := range nb {
				switch act {
				case quant.Q8_K:
					binary.LittleEndian.PutUint32(y[b*ab:], math.Float32bits(1))
				case quant.Q8_1:
					binary.LittleEndian.PutUint32(y[b*ab:], 0x3c003c00)
				default:
					binary.LittleEndian.PutUint16(y[b*ab:], 0x3c00)
				}
			}
			simdtest.FixBsums(act, y)
		}
		ylen := int(simdtest.MustRowSize(t, act, n))
		for _, b := range codes {
			for _, yb := range []byte{0x80, 0x7f, 0x81, 0x01, 0xff} {
				x := bytes.Repeat([]byte{b}, 4*ldx)
				y := bytes.Repeat([]byte{yb}, ylen)
				unit(x, y)
				vnniGemvDiff(t, c, fmt.Sprintf("bytes %#x %#x", b, yb), nb, x, ldx, y)
			}
		}
		for trial := range 100 {
			x := make([]byte, 4*ldx)
			y := make([]byte, ylen)
			for i := range x {
				x[i] = codes[rng.IntN(len(codes))]
			}
			for i := range y {
				y[i] = codes[rng.IntN(len(codes))]
			}
			unit(x, y)
			vnniGemvDiff(t, c, fmt.Sprintf("mix %d", trial), nb, x, ldx, y)
		}
	}
}

// BenchmarkVNNIGemv compares one thread's matrix-vector product (one
// activation row, four rows a call) with the AVX2 and VNNI four-row
// kernels, per type and size: l2 (256 x 2048, the weights in L2) and 4096
// (4096 x 4096, as a decoding model's projection). Alternate the kernels
// with -count and take the ratio of medians.
func BenchmarkVNNIGemv(b *testing.B) {
	simdtest.NeedVNNI(b)
	rng := rand.New(rand.NewPCG(75, 76))
	for _, k := range vnniGemv {
		for _, sz := range []struct {
			name    string
			rows, n int
		}{{"l2", 256, 2048}, {"4096", 4096, 4096}} {
			nb := sz.n / run(k.wt)
			ldx := int(simdtest.MustRowSize(b, k.wt, sz.n))
			x := simdtest.Row(rng, quant.I8, sz.rows*ldx, 0, 0)
			for i := 0; i < sz.rows*ldx; i += ldx / nb {
				for _, o := range vnniGemvHalves(k.halves) {
					binary.LittleEndian.PutUint16(x[i+o:], 0x3c00)
				}
			}
			y := simdtest.Row(rng, k.wt.VecDotType(), sz.n, 0, 0)
			var dy []float32
			if k.wt.VecDotType() == quant.Q8_0 {
				dy = make([]float32, nb)
			}
			for _, f := range []struct {
				name string
				f    Func
			}{{"avx2", k.avx2}, {"vnni", k.vnni}} {
				b.Run(fmt.Sprintf("%v/%s/%s", k.wt, sz.name, f.name), func(b *testing.B) {
					var out [4]float32
					b.SetBytes(int64(sz.rows * ldx))
					for b.Loop() {
						for r := 0; r < sz.rows; r += 4 {
							f.f(nb, x[r*ldx:], ldx, y, dy, &out)
						}
					}
				})
			}
		}
	}
}

// vnniGemvHalves is halves, or offset 0 where none is given.
func vnniGemvHalves(h []int) []int {
	if len(h) == 0 {
		return []int{0}
	}
	return h
}

// TestVNNISideTwins checks SideQ4_0VNNI against SideQ4_0AVX2 and
// SideQ4_0Twin bit for bit over random lengths (odd and even block
// counts: the kernels take two blocks a step), row strides, offsets and
// contents (quantized rows with special values, raw random bytes, rows
// of extreme bytes).
func TestVNNISideTwins(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(77, 78))
	codes := []byte{0x00, 0xff, 0x80, 0x7f, 0x81, 0x01, 0x0f, 0xf0, 0x88}
	for trial := range 600 {
		nb := rng.IntN(24)
		n := nb * quant.QK
		rowBytes := int(simdtest.MustRowSize(t, quant.Q4_0, n))
		ldx := rowBytes + rng.IntN(40)
		var x, y []byte
		switch trial % 3 {
		case 0:
			x = simdtest.Row(rng, quant.I8, 3*ldx+rowBytes, rng.IntN(64), 0)
			y = simdtest.Row(rng, quant.Q8_0, n, rng.IntN(64), 0)
		case 1:
			x = rows4(rng, quant.Q4_0, nb, ldx, rng.IntN(64), 0.05, nil)
			y = simdtest.Row(rng, quant.Q8_0, n, rng.IntN(64), 0.05)
		default:
			x = make([]byte, 3*ldx+rowBytes)
			y = make([]byte, nb*simd.BytesQ8_0)
			xb, yb := codes[rng.IntN(len(codes))], codes[rng.IntN(len(codes))]
			for i := range x {
				x[i] = xb
				if trial%2 == 0 {
					x[i] = codes[rng.IntN(len(codes))]
				}
			}
			for i := range y {
				y[i] = yb
			}
			for r := range 4 {
				for b := range nb {
					binary.LittleEndian.PutUint16(x[r*ldx+b*simd.BytesQ4_0:], 0x3c00)
				}
			}
			for b := range nb {
				binary.LittleEndian.PutUint16(y[b*simd.BytesQ8_0:], 0x3c00)
			}
		}
		side := make([]float32, max(nb*SideSlots, 1))
		Q4_0Prep(y, nb, side)
		got := [4]float32{float32(math.NaN()), 1, 2, 3}
		var want [4]float32
		SideQ4_0VNNI(nb, x, ldx, y, side, &got)
		SideQ4_0AVX2(nb, x, ldx, y, side, &want)
		what := fmt.Sprintf("side q4_0 trial %d nb=%d ldx=%d", trial, nb, ldx)
		checkRows(t, what+" (avx2)", &got, func(r int) float32 { return want[r] })
		checkRows(t, what+" (twin)", &got, func(r int) float32 { return SideQ4_0Twin(n, x[r*ldx:], y) })
	}
}

// BenchmarkVNNISide compares SideQ4_0AVX2 and SideQ4_0VNNI as
// BenchmarkVNNIGemv does the four-row kernels (side data prepared once).
func BenchmarkVNNISide(b *testing.B) {
	simdtest.NeedVNNI(b)
	rng := rand.New(rand.NewPCG(79, 80))
	for _, sz := range []struct {
		name    string
		rows, n int
	}{{"l2", 256, 2048}, {"4096", 4096, 4096}} {
		nb := sz.n / quant.QK
		ldx := nb * simd.BytesQ4_0
		x := simdtest.Row(rng, quant.I8, sz.rows*ldx, 0, 0)
		for i := 0; i < len(x); i += simd.BytesQ4_0 {
			binary.LittleEndian.PutUint16(x[i:], 0x3c00)
		}
		y := simdtest.Row(rng, quant.Q8_0, sz.n, 0, 0)
		side := make([]float32, nb*SideSlots)
		Q4_0Prep(y, nb, side)
		for _, f := range []struct {
			name string
			f    Func
		}{{"avx2", SideQ4_0AVX2}, {"vnni", SideQ4_0VNNI}} {
			b.Run(sz.name+"/"+f.name, func(b *testing.B) {
				var out [4]float32
				b.SetBytes(int64(sz.rows * ldx))
				for b.Loop() {
					for r := 0; r < sz.rows; r += 4 {
						f.f(nb, x[r*ldx:], ldx, y, side, &out)
					}
				}
			})
		}
	}
}
