//go:build amd64 && !purego

package cpu

import (
	"math"
)

// Four-row kernels of the AVX2 tier for MUL_MAT with one to three
// activation rows (gemv2_amd64.s; the avx2 table installs them all).
// q4_0, q8_0, q4_K, q5_K, q6_K and f16 equal, bit for bit, the
// first-generation kernels they replaced (removed, with the benchmarks
// that compared the two); q2_K..q6_K equal the dot product bit for bit.
// q5_0, q4_1, q5_1, bf16 and f32 keep one lane accumulator per row (twins
// in gemv2_twin.go), so their n < 4 outputs round differently than the
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
//     halfTable (GV2_Q8ROWT), and q4_K and q5_K spread their scale and
//     min codes with byte shuffles straight from the unpacked codes
//     (gv2bbcast, gv2kminpat);
//   - q3_K, q4_K, q5_K: the packed 6-bit scales of two rows are unpacked
//     at once in vector registers instead of with scalar code.
//
// q4_0 has a side kernel too (gemv3Q4_0x4AVX2, the avx2 table's gemvSide
// entry, which MUL_MAT and MUL_MAT_ID prefer where its conditions hold):
// two rows per vector register, so that most vector instructions serve
// two rows, f16 scales widened by table loads, and what depends on the
// activation row alone (its scale and the lanes of 8*y the kernel takes
// out of its unsigned products) prepared once per call by gemv3Q4_0Prep
// rather than once per four weight rows. Its lanes differ from
// gemv2Q4_0x4AVX2's (four per row, each over 8 elements), so its rounding
// does too (twin: gemv3Q4_0Twin); gemv2Q4_0x4AVX2 stays the table's gemv
// entry for q4_0, used where the side kernel is not.

// gemv2Q4_0x4AVX2 sets out[r] to the dot product of nb q4_0 blocks of
// row x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (twin: gemvQ4_0Twin).
//
//go:noescape
func gemv2Q4_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// gemv2Q8_0x4AVX2 is gemv2Q4_0x4AVX2 for q8_0 weights (twin:
// gemvQ8_0Twin).
//
//go:noescape
func gemv2Q8_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// gemv2Q2_Kx4AVX2 sets out[r] to the dot product of nb q2_K super-blocks
// of row x + r*ldx with the q8_K row y, equal bit for bit to
// dotQ2_KQ8_KAVX2 and the generic dot product.
//
//go:noescape
func gemv2Q2_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q3_Kx4AVX2 is gemv2Q2_Kx4AVX2 for q3_K weights.
//
//go:noescape
func gemv2Q3_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q4_Kx4AVX2 is gemv2Q2_Kx4AVX2 for q4_K weights (twin: the
// generic dot product).
//
//go:noescape
func gemv2Q4_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q5_Kx4AVX2 is gemv2Q2_Kx4AVX2 for q5_K weights (twin: the
// generic dot product).
//
//go:noescape
func gemv2Q5_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q6_Kx4AVX2 is gemv2Q2_Kx4AVX2 for q6_K weights (twin: the
// generic dot product).
//
//go:noescape
func gemv2Q6_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2F16x4AVX2 sets out[r] to the dot product of nb runs of 16
// binary16 values of row x + r*ldx with the binary16 row y (twin:
// gemvF16Twin).
//
//go:noescape
func gemv2F16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q5_0x4AVX2 sets out[r] to the dot product of nb q5_0 blocks of row
// x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (twin: gemv2Q5_0Twin; unlike the dot product it keeps one accumulator
// and takes each code unsigned, as gemv2Q4_0x4AVX2 does for q4_0).
//
//go:noescape
func gemv2Q5_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// gemv2Q4_1x4AVX2 sets out[r] to the dot product of nb q4_1 blocks of row
// x + r*ldx with the q8_1 row y (twin: gemv2Q4_1Twin; unlike the dot
// product it keeps one lane accumulator).
//
//go:noescape
func gemv2Q4_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q5_1x4AVX2 is gemv2Q4_1x4AVX2 for q5_1 weights (twin:
// gemv2Q5_1Twin).
//
//go:noescape
func gemv2Q5_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2F32x4AVX2 sets out[r] to the dot product of nb runs of 16 float32
// values of row x + r*ldx with the float32 row y (twin: gemv2F32Twin).
//
//go:noescape
func gemv2F32x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2BF16x4AVX2 is gemv2F32x4AVX2 for bfloat16 rows (twin:
// gemv2BF16Twin).
//
//go:noescape
func gemv2BF16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv3Q4_0x4AVX2 sets out[r] to the dot product of nb q4_0 blocks of row
// x + r*ldx with the q8_0 row y, given side, gemv3Q4_0Prep's data of y
// (gemv3Side float32 slots per block): two rows per vector register,
// four lanes per row (twin: gemv3Q4_0Twin; its lanes, and so its
// rounding, differ from gemv2Q4_0x4AVX2's eight).
//
//go:noescape
func gemv3Q4_0x4AVX2(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32)

// gemv3Side is the float32 slots per block of a third-generation kernel's
// side data: eight int32 lanes (as their bits; the four of a row twice,
// one set per vector half) and the widened d_y, 36 bytes.
const gemv3Side = 9

// gemv3Q4_0Prep writes gemv3Q4_0x4AVX2's side data of the q8_0 row y (nb
// blocks) into side: per block the lanes 8*(y_4l + .. + y_4l+3 +
// y_16+4l + .. + y_16+4l+3), which the kernel takes out of its unsigned
// nibble products, and d_y (an activation row is prepared once per call,
// not once per four weight rows).
func gemv3Q4_0Prep(y []byte, nb int, side []float32) {
	for ib := range nb {
		by, s := y[ib*bytesQ8_0:], side[ib*gemv3Side:][:gemv3Side]
		for l := range 4 {
			var c int32
			for e := range 4 {
				c += int32(int8(by[2+4*l+e])) + int32(int8(by[18+4*l+e]))
			}
			s[l] = math.Float32frombits(uint32(8 * c))
			s[l+4] = s[l]
		}
		s[8] = halfAt(by, 0)
	}
}

// gemv3Legacy wraps a third-generation kernel of a 32-element format with
// xs bytes per block as a gemvFunc whose dy is the side data.
func gemv3Legacy(f func(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32), xs int) gemvFunc {
	return func(nb int, x []byte, ldx int, y []byte, side []float32, out *[4]float32) {
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_, _, _ = x[3*ldx+nb*xs-1], y[nb*bytesQ8_0-1], side[nb*gemv3Side-1]
		f(&x[0], ldx, &y[0], &side[0], nb, out)
	}
}
