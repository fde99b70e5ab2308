//go:build amd64 && !purego

package gemv

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Four-row kernels of the AVX2 tier for MUL_MAT with one to three
// activation rows (gemv_q_amd64.s, gemv_k_amd64.s, gemv_q2k_q3k_amd64.s,
// gemv_float_amd64.s, gemv_table_amd64.s, gemv_iq4xs_amd64.s; the avx2
// table installs them all).
// q4_0, q8_0, q4_K, q5_K, q6_K and f16 equal, bit for bit, the
// first-generation kernels they replaced (removed, with the benchmarks
// that compared the two); q2_K..q6_K and iq4_xs equal the dot product bit
// for bit.
// q5_0, q4_1, q5_1, iq4_nl, mxfp4, bf16 and f32 keep one lane accumulator per row (twins
// in twin.go), so their n < 4 outputs round differently than the
// dot product. They are fast in four ways:
//
//   - next-step prefetch: a kernel asks for the same bytes of the next
//     four rows into L2 as it goes, so that the rows of the next
//     four-row step do not start as cold streams (what made the K-format
//     four-row kernels lose to the dot product once the weights no
//     longer fit in L2: three of every four row streams restarted cold
//     each step, where the dot product streams one contiguous run);
//   - the four rows share one activation block: its loads, the q4_0/q5_0
//     offset lanes, the q8_1 (d, s) pair;
//   - q8_0 family: the four rows' scales are widened together with scalar
//     loads and one VCVTPH2PS, and each row broadcasts its d from memory;
//     nibbles are split with one VBROADCASTI128 and one VPSRLVD; q8_0 and
//     q5_0 widen each row's f16 scale with a broadcast load from
//     simd.HalfTable (GV2_Q8ROWT), and q4_K and q5_K spread their scale and
//     min codes with byte shuffles straight from the unpacked codes
//     (gv2bbcast, gv2kminpat);
//   - q3_K, q4_K, q5_K: the packed 6-bit scales of two rows are unpacked
//     at once in vector registers instead of with scalar code.
//
// q4_0 has a side kernel too (sideQ4_0x4AVX2, the avx2 table's gemvSide
// entry, which MUL_MAT and MUL_MAT_ID prefer where its conditions hold):
// two rows per vector register, so that most vector instructions serve
// two rows, f16 scales widened by table loads, and what depends on the
// activation row alone (its scale and the lanes of 8*y the kernel takes
// out of its unsigned products) prepared once per call by Q4_0Prep
// rather than once per four weight rows. Its lanes differ from
// q4_0x4AVX2's (four per row, each over 8 elements), so its rounding
// does too (twin: SideQ4_0Twin); q4_0x4AVX2 stays the table's gemv
// entry for q4_0, used where the side kernel is not.

// q4_0x4AVX2 sets out[r] to the dot product of nb q4_0 blocks of
// row x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (twin: Q4_0Twin).
//
//go:noescape
func q4_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// q8_0x4AVX2 is q4_0x4AVX2 for q8_0 weights (twin:
// Q8_0Twin).
//
//go:noescape
func q8_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// q2_Kx4AVX2 sets out[r] to the dot product of nb q2_K super-blocks
// of row x + r*ldx with the q8_K row y, equal bit for bit to
// dotQ2_KQ8_KAVX2 and the generic dot product.
//
//go:noescape
func q2_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q3_Kx4AVX2 is q2_Kx4AVX2 for q3_K weights.
//
//go:noescape
func q3_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q4_Kx4AVX2 is q2_Kx4AVX2 for q4_K weights (twin: the
// generic dot product).
//
//go:noescape
func q4_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q5_Kx4AVX2 is q2_Kx4AVX2 for q5_K weights (twin: the
// generic dot product).
//
//go:noescape
func q5_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q6_Kx4AVX2 is q2_Kx4AVX2 for q6_K weights (twin: the
// generic dot product).
//
//go:noescape
func q6_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// f16x4AVX2 sets out[r] to the dot product of nb runs of 16
// binary16 values of row x + r*ldx with the binary16 row y (twin:
// F16Twin).
//
//go:noescape
func f16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q5_0x4AVX2 sets out[r] to the dot product of nb q5_0 blocks of row
// x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (twin: Q5_0Twin; unlike the dot product it keeps one accumulator
// and takes each code unsigned, as q4_0x4AVX2 does for q4_0).
//
//go:noescape
func q5_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// q4_1x4AVX2 sets out[r] to the dot product of nb q4_1 blocks of row
// x + r*ldx with the q8_1 row y (twin: Q4_1Twin; unlike the dot
// product it keeps one lane accumulator).
//
//go:noescape
func q4_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// q5_1x4AVX2 is q4_1x4AVX2 for q5_1 weights (twin:
// Q5_1Twin).
//
//go:noescape
func q5_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// f32x4AVX2 sets out[r] to the dot product of nb runs of 16 float32
// values of row x + r*ldx with the float32 row y (twin: F32Twin).
//
//go:noescape
func f32x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// bf16x4AVX2 is f32x4AVX2 for bfloat16 rows (twin:
// BF16Twin).
//
//go:noescape
func bf16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// sideQ4_0x4AVX2 sets out[r] to the dot product of nb q4_0 blocks of row
// x + r*ldx with the q8_0 row y, given side, Q4_0Prep's data of y
// (SideSlots float32 slots per block): two rows per vector register,
// four lanes per row (twin: SideQ4_0Twin; its lanes, and so its
// rounding, differ from q4_0x4AVX2's eight).
//
//go:noescape
func sideQ4_0x4AVX2(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32)

// halfTable is simd.HalfTable for the assembly (MOVQ ·halfTable(SB)),
// which staticcheck does not read.
//
//lint:ignore U1000 read by gemv_q_amd64.s
var halfTable = simd.HalfTable

// The wrappers below check the slice bounds the assembly relies on and
// call it on whole blocks; each is a Func (see Func for dy).

// Q4_0AVX2 runs q4_0x4AVX2 (twin: Q4_0Twin).
func Q4_0AVX2(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q4_0x4AVX2, simd.BytesQ4_0, nb, x, ldx, y, dy, out)
}

// Q8_0AVX2 runs q8_0x4AVX2 (twin: Q8_0Twin).
func Q8_0AVX2(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q8_0x4AVX2, simd.BytesQ8_0, nb, x, ldx, y, dy, out)
}

// Q5_0AVX2 runs q5_0x4AVX2 (twin: Q5_0Twin).
func Q5_0AVX2(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(q5_0x4AVX2, simd.BytesQ5_0, nb, x, ldx, y, dy, out)
}

// Q4_1AVX2 runs q4_1x4AVX2 (twin: Q4_1Twin).
func Q4_1AVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q4_1x4AVX2, simd.BytesQ4_1, simd.BytesQ8_1, nb, x, ldx, y, out)
}

// Q5_1AVX2 runs q5_1x4AVX2 (twin: Q5_1Twin).
func Q5_1AVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q5_1x4AVX2, simd.BytesQ5_1, simd.BytesQ8_1, nb, x, ldx, y, out)
}

// Q2_KAVX2 runs q2_Kx4AVX2 (twin: the q2_K dot product).
func Q2_KAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q2_Kx4AVX2, simd.BytesQ2_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q3_KAVX2 runs q3_Kx4AVX2 (twin: the q3_K dot product).
func Q3_KAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q3_Kx4AVX2, simd.BytesQ3_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q4_KAVX2 runs q4_Kx4AVX2 (twin: the q4_K dot product).
func Q4_KAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q4_Kx4AVX2, simd.BytesQ4_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q5_KAVX2 runs q5_Kx4AVX2 (twin: the q5_K dot product).
func Q5_KAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q5_Kx4AVX2, simd.BytesQ5_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// Q6_KAVX2 runs q6_Kx4AVX2 (twin: the q6_K dot product).
func Q6_KAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(q6_Kx4AVX2, simd.BytesQ6_K, simd.BytesQ8_K, nb, x, ldx, y, out)
}

// F16AVX2 runs f16x4AVX2 over nb runs of F16Run elements (twin:
// F16Twin).
func F16AVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(f16x4AVX2, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// BF16AVX2 runs bf16x4AVX2 over nb runs of F16Run elements (twin:
// BF16Twin).
func BF16AVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(bf16x4AVX2, 2*F16Run, 2*F16Run, nb, x, ldx, y, out)
}

// F32AVX2 runs f32x4AVX2 over nb runs of F16Run elements (twin:
// F32Twin).
func F32AVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(f32x4AVX2, 4*F16Run, 4*F16Run, nb, x, ldx, y, out)
}

// SideQ4_0AVX2 runs sideQ4_0x4AVX2 with side, Q4_0Prep's data of y, as
// its dy (twin: SideQ4_0Twin).
func SideQ4_0AVX2(nb int, x []byte, ldx int, y []byte, side []float32, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _, _ = x[3*ldx+nb*simd.BytesQ4_0-1], y[nb*simd.BytesQ8_0-1], side[nb*SideSlots-1]
	sideQ4_0x4AVX2(&x[0], ldx, &y[0], &side[0], nb, out)
}

// scaled runs a kernel of a 32-element format with xs bytes per block
// against a q8_0 row whose block scales dy holds widened.
func scaled(f func(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32), xs int, nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _, _ = x[3*ldx+nb*xs-1], y[nb*simd.BytesQ8_0-1], dy[nb-1]
	f(&x[0], ldx, &y[0], &dy[0], nb, out)
}

// unscaled runs a kernel that takes no widened scales, with xs weight and
// ys activation bytes per block.
func unscaled(f func(x *byte, ldx int, y *byte, nb int, out *[4]float32), xs, ys int, nb int, x []byte, ldx int, y []byte, out *[4]float32) {
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_, _ = x[3*ldx+nb*xs-1], y[nb*ys-1]
	f(&x[0], ldx, &y[0], nb, out)
}

// iq4_nlx4AVX2 sets out[r] to the dot product of nb IQ4_NL blocks of row
// x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (gemv_table_amd64.s; twin: IQ4_NLTwin).
//
//go:noescape
func iq4_nlx4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// mxfp4x4AVX2 is iq4_nlx4AVX2 for MXFP4 blocks (twin: MXFP4Twin).
//
//go:noescape
func mxfp4x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// The value tables and MXFP4's widened scales for gemv_table_amd64.s,
// which staticcheck does not read: e8m0Table[e] = quant.E8M0Half(e).
var (
	//lint:ignore U1000 read by gemv_table_amd64.s
	iq4nlValues = quant.IQ4NLValues
	//lint:ignore U1000 read by gemv_table_amd64.s
	mxfp4Values = quant.MXFP4Values
	//lint:ignore U1000 read by gemv_table_amd64.s
	e8m0Table = func() *[256]float32 {
		var t [256]float32
		for e := range t {
			t[e] = quant.E8M0Half(uint8(e))
		}
		return &t
	}()
)

// IQ4_NLAVX2 runs iq4_nlx4AVX2 (twin: IQ4_NLTwin).
func IQ4_NLAVX2(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(iq4_nlx4AVX2, bytesIQ4_NL, nb, x, ldx, y, dy, out)
}

// MXFP4AVX2 runs mxfp4x4AVX2 (twin: MXFP4Twin).
func MXFP4AVX2(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
	scaled(mxfp4x4AVX2, bytesMXFP4, nb, x, ldx, y, dy, out)
}

// bytesIQ4_XS is the size of an IQ4_XS super-block in bytes.
const bytesIQ4_XS = 136

// iq4_xsx4AVX2 sets out[r] to the dot product of nb IQ4_XS super-blocks
// of row x + r*ldx with the q8_K row y (gemv_iq4xs_amd64.s; twin:
// internal/dot's IQ4_XSTwin, bit for bit).
//
//go:noescape
func iq4_xsx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// IQ4_XSAVX2 runs iq4_xsx4AVX2 (twin: internal/dot's IQ4_XSTwin).
func IQ4_XSAVX2(nb int, x []byte, ldx int, y []byte, _ []float32, out *[4]float32) {
	unscaled(iq4_xsx4AVX2, bytesIQ4_XS, simd.BytesQ8_K, nb, x, ldx, y, out)
}
