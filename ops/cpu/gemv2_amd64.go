//go:build amd64 && !purego

package cpu

// Second-generation four-row kernels of the AVX2 tier for MUL_MAT with
// one to three activation rows (gemv2_amd64.s). Where a first-generation
// four-row kernel existed (q4_0, q8_0, q4_K, q5_K, q6_K, f16) the new one
// equals it bit for bit; q2_K and q3_K equal the dot product bit for bit,
// so for these MUL_MAT's outputs do not change. q5_0, q4_1, q5_1, bf16 and
// f32 had only the dot product: theirs keep one lane accumulator per row
// (twins in gemv2_twin.go), so their n < 4 outputs round differently
// than before. They are faster in four ways:
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
//     nibbles are split with one VBROADCASTI128 and one VPSRLVD;
//   - q3_K, q4_K, q5_K: the packed 6-bit scales of two rows are unpacked
//     at once in vector registers instead of with scalar code.
//
// The first-generation kernels stay for the benchmarks that compare the
// two (BenchmarkGemv2Matrix, BenchmarkGemv2MulMat).

// gemv2Q4_0x4AVX2 is gemvQ4_0x4AVX2 (same results, bit for bit; twin:
// gemvQ4_0Twin).
//
//go:noescape
func gemv2Q4_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)

// gemv2Q8_0x4AVX2 is gemvQ8_0x4AVX2 (same results, bit for bit; twin:
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

// gemv2Q4_Kx4AVX2 is gemvQ4_Kx4AVX2 (same results, bit for bit; twin: the
// generic dot product).
//
//go:noescape
func gemv2Q4_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q5_Kx4AVX2 is gemvQ5_Kx4AVX2 (same results, bit for bit; twin: the
// generic dot product).
//
//go:noescape
func gemv2Q5_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q6_Kx4AVX2 is gemvQ6_Kx4AVX2 (same results, bit for bit; twin: the
// generic dot product).
//
//go:noescape
func gemv2Q6_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2F16x4AVX2 is gemvF16x4AVX2 (same results, bit for bit; twin:
// gemvF16Twin).
//
//go:noescape
func gemv2F16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)

// gemv2Q5_0x4AVX2 sets out[r] to the dot product of nb q5_0 blocks of row
// x + r*ldx with the q8_0 row y, whose block scales dy holds widened
// (twin: gemv2Q5_0Twin; unlike the dot product it keeps one accumulator
// and takes each code unsigned, as gemvQ4_0x4AVX2 does for q4_0).
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
