//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA row kernels of the non-matmul ops (softmax, RMS norm, flash
// attention). Each has a pure-Go twin in twin.go that performs the
// same float operations in the same order, lane by lane; the Go wrappers
// in vec_amd64.go pass only whole runs of 8 elements and finish the tail
// with the twin's scalar code.

#include "exp_amd64.h"

// func expSumAVX2(z *float32, n int, mx float32) float64
// z[i] = exp(z[i]-mx) for n (a multiple of 8) elements; returns the sum,
// lanes 0-3 and 4-7 of each run widened to float64 and added to two
// four-lane accumulators, then summed as expSumTwin.
TEXT ·expSumAVX2(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS mx+16(FP), Y7
	VMOVUPS explo<>(SB), Y8
	VMOVUPS exphi<>(SB), Y9
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6

expsum_loop:
	CMPQ CX, $8
	JL   expsum_done
	VMOVUPS (SI), Y0
	VSUBPS Y7, Y0, Y0
	EXP8
	VMOVUPS Y0, (SI)
	VCVTPS2PD X0, Y1
	VADDPD Y1, Y5, Y5
	VEXTRACTF128 $1, Y0, X1
	VCVTPS2PD X1, Y1
	VADDPD Y1, Y6, Y6
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  expsum_loop

expsum_done:
	VADDPD Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X1
	VADDPD X1, X5, X5
	VUNPCKHPD X5, X5, X1
	VADDSD X1, X5, X5
	VMOVSD X5, ret+24(FP)
	VZEROUPPER
	RET

// func smPrepAVX2(out, x, m *float32, n int, scale, slope float32) float32
// out = x*scale (+ slope*m when m is not nil) for n (a multiple of 8)
// elements; returns the maximum of out over eight lanes (VMAXPS with the
// new value as the second source), reduced as smPrepTwin. Returns -Inf
// for n = 0.
TEXT ·smPrepAVX2(SB), NOSPLIT, $0-44
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS scale+32(FP), Y6
	VBROADCASTSS slope+36(FP), Y7
	VMOVUPS neginf<>(SB), Y5
	TESTQ DX, DX
	JZ    smprep_nomask

smprep_mask:
	CMPQ CX, $8
	JL   smprep_done
	VMULPS (SI), Y6, Y0
	VMULPS (DX), Y7, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	VMAXPS Y0, Y5, Y5
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  smprep_mask

smprep_nomask:
	CMPQ CX, $8
	JL   smprep_done
	VMULPS (SI), Y6, Y0
	VMOVUPS Y0, (DI)
	VMAXPS Y0, Y5, Y5
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  smprep_nomask

smprep_done:
	VEXTRACTF128 $1, Y5, X1
	VMAXPS X1, X5, X5
	VMOVHLPS X5, X5, X1
	VMAXPS X1, X5, X5
	VMOVSHDUP X5, X1
	VMAXSS X1, X5, X5
	VMOVSS X5, ret+40(FP)
	VZEROUPPER
	RET

// func mulToAVX2(out, x *float32, n int, s float32)
// out = x*s for n (a multiple of 8) elements; out may be x.
TEXT ·mulToAVX2(SB), NOSPLIT, $0-28
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y7

multo_loop32:
	CMPQ CX, $32
	JL   multo_loop8
	VMULPS (SI), Y7, Y0
	VMULPS 32(SI), Y7, Y1
	VMULPS 64(SI), Y7, Y2
	VMULPS 96(SI), Y7, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  multo_loop32

multo_loop8:
	CMPQ CX, $8
	JL   multo_done
	VMULPS (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  multo_loop8

multo_done:
	VZEROUPPER
	RET

// func hasNaNAVX2(x *float32, n int) bool
// Whether any of n (a multiple of 64) elements is a NaN: per 64, four
// unordered compares of vector pairs OR'd into Y4, tested once at the
// end.
TEXT ·hasNaNAVX2(SB), NOSPLIT, $0-17
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y4, Y4, Y4

hasnan_loop:
	VMOVUPS (SI), Y0
	VMOVUPS 64(SI), Y1
	VMOVUPS 128(SI), Y2
	VMOVUPS 192(SI), Y3
	VCMPPS  $3, 32(SI), Y0, Y0
	VCMPPS  $3, 96(SI), Y1, Y1
	VCMPPS  $3, 160(SI), Y2, Y2
	VCMPPS  $3, 224(SI), Y3, Y3
	VORPS   Y1, Y0, Y0
	VORPS   Y3, Y2, Y2
	VORPS   Y2, Y0, Y0
	VORPS   Y0, Y4, Y4
	ADDQ    $256, SI
	SUBQ    $64, CX
	JNE     hasnan_loop
	VMOVMSKPS Y4, AX
	TESTL   AX, AX
	SETNE   ret+16(FP)
	VZEROUPPER
	RET

// func sumSqAVX2(x *float32, n int) float64
// Sum of squares of n (a multiple of 8) elements: lanes 0-3 and 4-7 of
// each run widened to float64 and fused-multiply-added into two four-lane
// accumulators, then summed as sumSqTwin.
TEXT ·sumSqAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6

sumsq_loop:
	CMPQ CX, $8
	JL   sumsq_done
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VFMADD231PD Y0, Y0, Y5
	VFMADD231PD Y1, Y1, Y6
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  sumsq_loop

sumsq_done:
	VADDPD Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X1
	VADDPD X1, X5, X5
	VUNPCKHPD X5, X5, X1
	VADDSD X1, X5, X5
	VMOVSD X5, ret+16(FP)
	VZEROUPPER
	RET

// func axpyAVX2(acc, x *float32, n int, s float32)
// acc = fma(x, s, acc) for n (a multiple of 8) elements.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-28
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y7

axpy_loop32:
	CMPQ CX, $32
	JL   axpy_loop8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VFMADD231PS (SI), Y7, Y0
	VFMADD231PS 32(SI), Y7, Y1
	VFMADD231PS 64(SI), Y7, Y2
	VFMADD231PS 96(SI), Y7, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  axpy_loop32

axpy_loop8:
	CMPQ CX, $8
	JL   axpy_done
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  axpy_loop8

axpy_done:
	VZEROUPPER
	RET

// func axpyF16AVX2(acc *float32, x *uint16, n int, s float32)
// acc = fma(float32(x), s, acc) for n (a multiple of 8) binary16 x.
TEXT ·axpyF16AVX2(SB), NOSPLIT, $0-28
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y7

axpyh_loop32:
	CMPQ CX, $32
	JL   axpyh_loop8
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VFMADD231PS Y4, Y7, Y0
	VFMADD231PS Y5, Y7, Y1
	VFMADD231PS Y6, Y7, Y2
	VFMADD231PS Y8, Y7, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  axpyh_loop32

axpyh_loop8:
	CMPQ CX, $8
	JL   axpyh_done
	VCVTPH2PS (SI), Y4
	VMOVUPS (DI), Y0
	VFMADD231PS Y4, Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  axpyh_loop8

axpyh_done:
	VZEROUPPER
	RET

// func f16ToF32AVX2(dst *float32, src *uint16, n int)
// dst = float32(src) for n (a multiple of 8) binary16 values, exactly
// (twin: f16ToF32Generic).
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

f16_loop32:
	CMPQ CX, $32
	JL   f16_loop8
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  f16_loop32

f16_loop8:
	CMPQ CX, $8
	JL   f16_done
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  f16_loop8

f16_done:
	VZEROUPPER
	RET

// func axpy4AVX2(acc, x0, x1, x2, x3 *float32, n int, s0, s1, s2, s3 float32)
// acc = fma(x3, s3, fma(x2, s2, fma(x1, s1, fma(x0, s0, acc)))) for n (a
// multiple of 8) elements: four axpyAVX2 calls in one pass over acc.
TEXT ·axpy4AVX2(SB), NOSPLIT, $0-64
	MOVQ acc+0(FP), DI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	VBROADCASTSS s0+48(FP), Y12
	VBROADCASTSS s1+52(FP), Y13
	VBROADCASTSS s2+56(FP), Y14
	VBROADCASTSS s3+60(FP), Y15
	XORQ AX, AX

axpy4_loop32:
	CMPQ CX, $32
	JL   axpy4_loop16
	VMOVUPS (DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VMOVUPS 64(DI)(AX*1), Y2
	VMOVUPS 96(DI)(AX*1), Y3
	VFMADD231PS (R8)(AX*1), Y12, Y0
	VFMADD231PS 32(R8)(AX*1), Y12, Y1
	VFMADD231PS 64(R8)(AX*1), Y12, Y2
	VFMADD231PS 96(R8)(AX*1), Y12, Y3
	VFMADD231PS (R9)(AX*1), Y13, Y0
	VFMADD231PS 32(R9)(AX*1), Y13, Y1
	VFMADD231PS 64(R9)(AX*1), Y13, Y2
	VFMADD231PS 96(R9)(AX*1), Y13, Y3
	VFMADD231PS (R10)(AX*1), Y14, Y0
	VFMADD231PS 32(R10)(AX*1), Y14, Y1
	VFMADD231PS 64(R10)(AX*1), Y14, Y2
	VFMADD231PS 96(R10)(AX*1), Y14, Y3
	VFMADD231PS (R11)(AX*1), Y15, Y0
	VFMADD231PS 32(R11)(AX*1), Y15, Y1
	VFMADD231PS 64(R11)(AX*1), Y15, Y2
	VFMADD231PS 96(R11)(AX*1), Y15, Y3
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ $128, AX
	SUBQ $32, CX
	JMP  axpy4_loop32

axpy4_loop16:
	CMPQ CX, $16
	JL   axpy4_loop8
	VMOVUPS (DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VFMADD231PS (R8)(AX*1), Y12, Y0
	VFMADD231PS 32(R8)(AX*1), Y12, Y1
	VFMADD231PS (R9)(AX*1), Y13, Y0
	VFMADD231PS 32(R9)(AX*1), Y13, Y1
	VFMADD231PS (R10)(AX*1), Y14, Y0
	VFMADD231PS 32(R10)(AX*1), Y14, Y1
	VFMADD231PS (R11)(AX*1), Y15, Y0
	VFMADD231PS 32(R11)(AX*1), Y15, Y1
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	ADDQ $64, AX
	SUBQ $16, CX
	JMP  axpy4_loop16

axpy4_loop8:
	CMPQ CX, $8
	JL   axpy4_done
	VMOVUPS (DI)(AX*1), Y0
	VFMADD231PS (R8)(AX*1), Y12, Y0
	VFMADD231PS (R9)(AX*1), Y13, Y0
	VFMADD231PS (R10)(AX*1), Y14, Y0
	VFMADD231PS (R11)(AX*1), Y15, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	SUBQ $8, CX
	JMP  axpy4_loop8

axpy4_done:
	VZEROUPPER
	RET

// func axpy4F16AVX2(acc *float32, x0, x1, x2, x3 *uint16, n int, s0, s1, s2, s3 float32)
// acc = fma(float32(x3), s3, ... fma(float32(x0), s0, acc)) for n (a
// multiple of 8) binary16 elements of each row: four axpyF16AVX2 calls in
// one pass over acc.
TEXT ·axpy4F16AVX2(SB), NOSPLIT, $0-64
	MOVQ acc+0(FP), DI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	VBROADCASTSS s0+48(FP), Y12
	VBROADCASTSS s1+52(FP), Y13
	VBROADCASTSS s2+56(FP), Y14
	VBROADCASTSS s3+60(FP), Y15
	XORQ AX, AX
	XORQ DX, DX

axpy4h_loop16:
	CMPQ CX, $16
	JL   axpy4h_loop8
	VCVTPH2PS (R8)(DX*1), Y4
	VCVTPH2PS 16(R8)(DX*1), Y5
	VCVTPH2PS (R9)(DX*1), Y6
	VCVTPH2PS 16(R9)(DX*1), Y7
	VCVTPH2PS (R10)(DX*1), Y8
	VCVTPH2PS 16(R10)(DX*1), Y9
	VCVTPH2PS (R11)(DX*1), Y10
	VCVTPH2PS 16(R11)(DX*1), Y11
	VMOVUPS (DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VFMADD231PS Y4, Y12, Y0
	VFMADD231PS Y5, Y12, Y1
	VFMADD231PS Y6, Y13, Y0
	VFMADD231PS Y7, Y13, Y1
	VFMADD231PS Y8, Y14, Y0
	VFMADD231PS Y9, Y14, Y1
	VFMADD231PS Y10, Y15, Y0
	VFMADD231PS Y11, Y15, Y1
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	ADDQ $64, AX
	ADDQ $32, DX
	SUBQ $16, CX
	JMP  axpy4h_loop16

axpy4h_loop8:
	CMPQ CX, $8
	JL   axpy4h_done
	VCVTPH2PS (R8)(DX*1), Y4
	VCVTPH2PS (R9)(DX*1), Y6
	VCVTPH2PS (R10)(DX*1), Y8
	VCVTPH2PS (R11)(DX*1), Y10
	VMOVUPS (DI)(AX*1), Y0
	VFMADD231PS Y4, Y12, Y0
	VFMADD231PS Y6, Y13, Y0
	VFMADD231PS Y8, Y14, Y0
	VFMADD231PS Y10, Y15, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	ADDQ $16, DX
	SUBQ $8, CX
	JMP  axpy4h_loop8

axpy4h_done:
	VZEROUPPER
	RET

// func axpyQ8_0AVX2(acc *float32, x *byte, nb int, s float32)
// acc = fma(d*q, s, acc) over nb q8_0 blocks (34 bytes: the binary16
// scale d, then 32 int8 q), 32 elements each; d*q is exact in float32.
TEXT ·axpyQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	VBROADCASTSS s+24(FP), Y7

axpyq8_loop:
	TESTQ CX, CX
	JEQ   axpyq8_done
	MOVWLZX (SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Y6
	VPMOVSXBD 2(SI), Y0
	VPMOVSXBD 10(SI), Y1
	VPMOVSXBD 18(SI), Y2
	VPMOVSXBD 26(SI), Y3
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VMULPS Y6, Y0, Y0
	VMULPS Y6, Y1, Y1
	VMULPS Y6, Y2, Y2
	VMULPS Y6, Y3, Y3
	VMOVUPS (DI), Y8
	VMOVUPS 32(DI), Y9
	VMOVUPS 64(DI), Y10
	VMOVUPS 96(DI), Y11
	VFMADD231PS Y0, Y7, Y8
	VFMADD231PS Y1, Y7, Y9
	VFMADD231PS Y2, Y7, Y10
	VFMADD231PS Y3, Y7, Y11
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 32(DI)
	VMOVUPS Y10, 64(DI)
	VMOVUPS Y11, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JMP  axpyq8_loop

axpyq8_done:
	VZEROUPPER
	RET

// func dot2F16AVX2(k0, k1 *uint16, q *float32, n int) (s0, s1 float32)
// The dot products of the binary16 rows k0 and k1 with the float32 row q
// (binary16 values widened) over n (a multiple of 8) elements, each summed
// in the order of dotF16AVX2 without its scalar tail: four accumulators
// over runs of 32, runs of 8 into the first, (a0+a1)+(a2+a3), HSUM8.
TEXT ·dot2F16AVX2(SB), NOSPLIT, $0-40
	MOVQ k0+0(FP), SI
	MOVQ k1+8(FP), DI
	MOVQ q+16(FP), DX
	MOVQ n+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

dot2h_loop32:
	CMPQ CX, $32
	JL   dot2h_loop8
	VCVTPH2PS (SI), Y8
	VCVTPH2PS 16(SI), Y9
	VCVTPH2PS 32(SI), Y10
	VCVTPH2PS 48(SI), Y11
	VCVTPH2PS (DI), Y12
	VCVTPH2PS 16(DI), Y13
	VCVTPH2PS 32(DI), Y14
	VCVTPH2PS 48(DI), Y15
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y9, Y1
	VFMADD231PS 64(DX), Y10, Y2
	VFMADD231PS 96(DX), Y11, Y3
	VFMADD231PS (DX), Y12, Y4
	VFMADD231PS 32(DX), Y13, Y5
	VFMADD231PS 64(DX), Y14, Y6
	VFMADD231PS 96(DX), Y15, Y7
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP  dot2h_loop32

dot2h_loop8:
	CMPQ CX, $8
	JL   dot2h_reduce
	VCVTPH2PS (SI), Y8
	VCVTPH2PS (DI), Y12
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS (DX), Y12, Y4
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP  dot2h_loop8

dot2h_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VMOVHLPS X4, X4, X5
	VADDPS X5, X4, X4
	VMOVSHDUP X4, X5
	VADDSS X5, X4, X4
	VMOVSS X0, s0+32(FP)
	VMOVSS X4, s1+36(FP)
	VZEROUPPER
	RET
