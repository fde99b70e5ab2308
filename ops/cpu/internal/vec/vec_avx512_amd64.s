//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 (F) row kernels of the non-matmul ops: the AVX2 kernels of
// vec_amd64.s in zmm registers, the same float operations in the same
// order lane by lane. The lane-wise ones take the whole row, finishing
// with a masked step (K1) whose masked-off lanes are neither read nor
// written; the reductions keep the AVX2 kernels' accumulators (eight
// float64 lanes = one zmm; eight float32 maxima = one ymm) and their
// order, so they take n a multiple of 8 and leave the tail to the Go
// wrapper, as the AVX2 ones do.

#include "exp_avx512_amd64.h"

// func expSumAVX512(z *float32, n int, mx float32) float64
// z[i] = exp(z[i]-mx) for n (a multiple of 8) elements, 16 at a time;
// each run of 8 widened to float64 and added to the eight-lane
// accumulator in order (acc[l] of ExpSumTwin), reduced as hsum8f64.
TEXT ·expSumAVX512(SB), NOSPLIT, $0-32
	MOVQ         z+0(FP), SI
	MOVQ         n+8(FP), CX
	EXP16_CONSTS
	VBROADCASTSS mx+16(FP), Z7
	VPXORQ       Z5, Z5, Z5

expsum5_loop32:
	CMPQ          CX, $32
	JL            expsum5_loop16
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z10
	VSUBPS        Z7, Z0, Z0
	VSUBPS        Z7, Z10, Z10
	EXP16(Z0, Z1, Z2, Z3, Z4)
	EXP16(Z10, Z11, Z12, Z13, Z14)
	VMOVUPS       Z0, (SI)
	VMOVUPS       Z10, 64(SI)
	VCVTPS2PD     Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD     Y2, Z2
	VCVTPS2PD     Y10, Z11
	VEXTRACTF64X4 $1, Z10, Y12
	VCVTPS2PD     Y12, Z12
	VADDPD        Z1, Z5, Z5
	VADDPD        Z2, Z5, Z5
	VADDPD        Z11, Z5, Z5
	VADDPD        Z12, Z5, Z5
	ADDQ          $128, SI
	SUBQ          $32, CX
	JMP           expsum5_loop32

expsum5_loop16:
	CMPQ          CX, $16
	JL            expsum5_rest8
	VMOVUPS       (SI), Z0
	VSUBPS        Z7, Z0, Z0
	EXP16(Z0, Z1, Z2, Z3, Z4)
	VMOVUPS       Z0, (SI)
	VCVTPS2PD     Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD     Y2, Z2
	VADDPD        Z1, Z5, Z5
	VADDPD        Z2, Z5, Z5
	ADDQ          $64, SI
	SUBQ          $16, CX
	JMP           expsum5_loop16

expsum5_rest8:
	CMPQ      CX, $8
	JL        expsum5_done
	VMOVUPS   (SI), Y0 // the upper lanes zeroed, their exp unused
	VSUBPS    Z7, Z0, Z0
	EXP16(Z0, Z1, Z2, Z3, Z4)
	VMOVUPS   Y0, (SI)
	VCVTPS2PD Y0, Z1
	VADDPD    Z1, Z5, Z5

expsum5_done:
	VEXTRACTF64X4 $1, Z5, Y1
	VADDPD        Y1, Y5, Y5
	VEXTRACTF128  $1, Y5, X1
	VADDPD        X1, X5, X5
	VUNPCKHPD     X5, X5, X1
	VADDSD        X1, X5, X5
	VMOVSD        X5, ret+24(FP)
	VZEROUPPER
	RET

// func smPrepAVX512(out, x, m *float32, n int, scale, slope float32) float32
// out = x*scale (+ slope*m when m is not nil) for n (a multiple of 8)
// elements, 16 at a time; the maximum kept in eight lanes as
// smPrepAVX2 (each run of 8 in order, VMAXPS with the new value second),
// reduced as smPrepTwin. Returns -Inf for n = 0.
TEXT ·smPrepAVX512(SB), NOSPLIT, $0-44
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         m+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS scale+32(FP), Z6
	VBROADCASTSS slope+36(FP), Z7
	MOVL         $0xff800000, AX
	VMOVD        AX, X5
	VBROADCASTSS X5, Y5
	TESTQ        DX, DX
	JZ           smprep5_nomask

smprep5_mask:
	CMPQ          CX, $16
	JL            smprep5_mask8
	VMULPS        (SI), Z6, Z0
	VMULPS        (DX), Z7, Z1
	VADDPS        Z1, Z0, Z0
	VMOVUPS       Z0, (DI)
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y0, Y5, Y5
	VMAXPS        Y1, Y5, Y5
	ADDQ          $64, SI
	ADDQ          $64, DX
	ADDQ          $64, DI
	SUBQ          $16, CX
	JMP           smprep5_mask

smprep5_mask8:
	CMPQ    CX, $8
	JL      smprep5_done
	VMULPS  (SI), Y6, Y0
	VMULPS  (DX), Y7, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	VMAXPS  Y0, Y5, Y5
	JMP     smprep5_done

smprep5_nomask:
	CMPQ          CX, $16
	JL            smprep5_nomask8
	VMULPS        (SI), Z6, Z0
	VMOVUPS       Z0, (DI)
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y0, Y5, Y5
	VMAXPS        Y1, Y5, Y5
	ADDQ          $64, SI
	ADDQ          $64, DI
	SUBQ          $16, CX
	JMP           smprep5_nomask

smprep5_nomask8:
	CMPQ    CX, $8
	JL      smprep5_done
	VMULPS  (SI), Y6, Y0
	VMOVUPS Y0, (DI)
	VMAXPS  Y0, Y5, Y5

smprep5_done:
	VEXTRACTF128 $1, Y5, X1
	VMAXPS       X1, X5, X5
	VMOVHLPS     X5, X5, X1
	VMAXPS       X1, X5, X5
	VMOVSHDUP    X5, X1
	VMAXSS       X1, X5, X5
	VMOVSS       X5, ret+40(FP)
	VZEROUPPER
	RET

// func sumSqAVX512(x *float32, n int) float64
// Sum of squares of n (a multiple of 8) elements: each run of 8 widened
// to float64 and fused-multiply-added into the eight-lane accumulator in
// order (acc[l] of SumSqTwin), reduced as hsum8f64.
TEXT ·sumSqAVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORQ Z5, Z5, Z5

sumsq5_loop16:
	CMPQ        CX, $16
	JL          sumsq5_rest8
	VCVTPS2PD   (SI), Z0
	VCVTPS2PD   32(SI), Z1
	VFMADD231PD Z0, Z0, Z5
	VFMADD231PD Z1, Z1, Z5
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         sumsq5_loop16

sumsq5_rest8:
	CMPQ        CX, $8
	JL          sumsq5_done
	VCVTPS2PD   (SI), Z0
	VFMADD231PD Z0, Z0, Z5

sumsq5_done:
	VEXTRACTF64X4 $1, Z5, Y1
	VADDPD        Y1, Y5, Y5
	VEXTRACTF128  $1, Y5, X1
	VADDPD        X1, X5, X5
	VUNPCKHPD     X5, X5, X1
	VADDSD        X1, X5, X5
	VMOVSD        X5, ret+16(FP)
	VZEROUPPER
	RET

// func mulToAVX512(out, x *float32, n int, s float32)
// out = x*s for n elements; out may be x.
TEXT ·mulToAVX512(SB), NOSPLIT, $0-28
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Z7

multo5_loop64:
	CMPQ    CX, $64
	JL      multo5_loop16
	VMULPS  (SI), Z7, Z0
	VMULPS  64(SI), Z7, Z1
	VMULPS  128(SI), Z7, Z2
	VMULPS  192(SI), Z7, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, CX
	JMP     multo5_loop64

multo5_loop16:
	CMPQ    CX, $16
	JL      multo5_tail
	VMULPS  (SI), Z7, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     multo5_loop16

multo5_tail:
	TESTQ     CX, CX
	JEQ       multo5_done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMULPS    Z0, Z7, Z0
	VMOVUPS   Z0, K1, (DI)

multo5_done:
	VZEROUPPER
	RET

// func axpyAVX512(acc, x *float32, n int, s float32)
// acc = fma(x, s, acc) for n elements.
TEXT ·axpyAVX512(SB), NOSPLIT, $0-28
	MOVQ         acc+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Z7

axpy5_loop64:
	CMPQ        CX, $64
	JL          axpy5_loop16
	VMOVUPS     (DI), Z0
	VMOVUPS     64(DI), Z1
	VMOVUPS     128(DI), Z2
	VMOVUPS     192(DI), Z3
	VFMADD231PS (SI), Z7, Z0
	VFMADD231PS 64(SI), Z7, Z1
	VFMADD231PS 128(SI), Z7, Z2
	VFMADD231PS 192(SI), Z7, Z3
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z1, 64(DI)
	VMOVUPS     Z2, 128(DI)
	VMOVUPS     Z3, 192(DI)
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         axpy5_loop64

axpy5_loop16:
	CMPQ        CX, $16
	JL          axpy5_tail
	VMOVUPS     (DI), Z0
	VFMADD231PS (SI), Z7, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         axpy5_loop16

axpy5_tail:
	TESTQ       CX, CX
	JEQ         axpy5_done
	TAILMASK
	VMOVUPS.Z   (DI), K1, Z0
	VMOVUPS.Z   (SI), K1, Z4
	VFMADD231PS Z4, Z7, Z0
	VMOVUPS     Z0, K1, (DI)

axpy5_done:
	VZEROUPPER
	RET

// func axpyF16AVX512(acc *float32, x *uint16, n int, s float32)
// acc = fma(float32(x), s, acc) for n binary16 x.
TEXT ·axpyF16AVX512(SB), NOSPLIT, $0-28
	MOVQ         acc+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Z7

axpyh5_loop64:
	CMPQ        CX, $64
	JL          axpyh5_loop16
	VCVTPH2PS   (SI), Z4
	VCVTPH2PS   32(SI), Z5
	VCVTPH2PS   64(SI), Z6
	VCVTPH2PS   96(SI), Z8
	VMOVUPS     (DI), Z0
	VMOVUPS     64(DI), Z1
	VMOVUPS     128(DI), Z2
	VMOVUPS     192(DI), Z3
	VFMADD231PS Z4, Z7, Z0
	VFMADD231PS Z5, Z7, Z1
	VFMADD231PS Z6, Z7, Z2
	VFMADD231PS Z8, Z7, Z3
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z1, 64(DI)
	VMOVUPS     Z2, 128(DI)
	VMOVUPS     Z3, 192(DI)
	ADDQ        $128, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         axpyh5_loop64

axpyh5_loop16:
	CMPQ        CX, $16
	JL          axpyh5_tail
	VCVTPH2PS   (SI), Z4
	VMOVUPS     (DI), Z0
	VFMADD231PS Z4, Z7, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $32, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         axpyh5_loop16

axpyh5_tail:
	TESTQ       CX, CX
	JEQ         axpyh5_done
	TAILMASK
	VCVTPH2PS.Z (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z0
	VFMADD231PS Z4, Z7, Z0
	VMOVUPS     Z0, K1, (DI)

axpyh5_done:
	VZEROUPPER
	RET

// func axpy4AVX512(acc, x0, x1, x2, x3 *float32, n int, s0, s1, s2, s3 float32)
// acc = fma(x3, s3, fma(x2, s2, fma(x1, s1, fma(x0, s0, acc)))) for n
// elements: four axpyAVX512 calls in one pass over acc.
TEXT ·axpy4AVX512(SB), NOSPLIT, $0-64
	MOVQ         acc+0(FP), DI
	MOVQ         x0+8(FP), R8
	MOVQ         x1+16(FP), R9
	MOVQ         x2+24(FP), R10
	MOVQ         x3+32(FP), R11
	MOVQ         n+40(FP), CX
	VBROADCASTSS s0+48(FP), Z12
	VBROADCASTSS s1+52(FP), Z13
	VBROADCASTSS s2+56(FP), Z14
	VBROADCASTSS s3+60(FP), Z15
	XORQ         BX, BX

axpy45_loop64:
	CMPQ        CX, $64
	JL          axpy45_loop16
	VMOVUPS     (DI)(BX*1), Z0
	VMOVUPS     64(DI)(BX*1), Z1
	VMOVUPS     128(DI)(BX*1), Z2
	VMOVUPS     192(DI)(BX*1), Z3
	VFMADD231PS (R8)(BX*1), Z12, Z0
	VFMADD231PS 64(R8)(BX*1), Z12, Z1
	VFMADD231PS 128(R8)(BX*1), Z12, Z2
	VFMADD231PS 192(R8)(BX*1), Z12, Z3
	VFMADD231PS (R9)(BX*1), Z13, Z0
	VFMADD231PS 64(R9)(BX*1), Z13, Z1
	VFMADD231PS 128(R9)(BX*1), Z13, Z2
	VFMADD231PS 192(R9)(BX*1), Z13, Z3
	VFMADD231PS (R10)(BX*1), Z14, Z0
	VFMADD231PS 64(R10)(BX*1), Z14, Z1
	VFMADD231PS 128(R10)(BX*1), Z14, Z2
	VFMADD231PS 192(R10)(BX*1), Z14, Z3
	VFMADD231PS (R11)(BX*1), Z15, Z0
	VFMADD231PS 64(R11)(BX*1), Z15, Z1
	VFMADD231PS 128(R11)(BX*1), Z15, Z2
	VFMADD231PS 192(R11)(BX*1), Z15, Z3
	VMOVUPS     Z0, (DI)(BX*1)
	VMOVUPS     Z1, 64(DI)(BX*1)
	VMOVUPS     Z2, 128(DI)(BX*1)
	VMOVUPS     Z3, 192(DI)(BX*1)
	ADDQ        $256, BX
	SUBQ        $64, CX
	JMP         axpy45_loop64

axpy45_loop16:
	CMPQ        CX, $16
	JL          axpy45_tail
	VMOVUPS     (DI)(BX*1), Z0
	VFMADD231PS (R8)(BX*1), Z12, Z0
	VFMADD231PS (R9)(BX*1), Z13, Z0
	VFMADD231PS (R10)(BX*1), Z14, Z0
	VFMADD231PS (R11)(BX*1), Z15, Z0
	VMOVUPS     Z0, (DI)(BX*1)
	ADDQ        $64, BX
	SUBQ        $16, CX
	JMP         axpy45_loop16

axpy45_tail:
	TESTQ       CX, CX
	JEQ         axpy45_done
	TAILMASK
	VMOVUPS.Z   (DI)(BX*1), K1, Z0
	VMOVUPS.Z   (R8)(BX*1), K1, Z4
	VMOVUPS.Z   (R9)(BX*1), K1, Z5
	VMOVUPS.Z   (R10)(BX*1), K1, Z6
	VMOVUPS.Z   (R11)(BX*1), K1, Z8
	VFMADD231PS Z4, Z12, Z0
	VFMADD231PS Z5, Z13, Z0
	VFMADD231PS Z6, Z14, Z0
	VFMADD231PS Z8, Z15, Z0
	VMOVUPS     Z0, K1, (DI)(BX*1)

axpy45_done:
	VZEROUPPER
	RET

// func axpy4F16AVX512(acc *float32, x0, x1, x2, x3 *uint16, n int, s0, s1, s2, s3 float32)
// acc = fma(float32(x3), s3, ... fma(float32(x0), s0, acc)) for n
// binary16 elements of each row: four axpyF16AVX512 calls in one pass
// over acc.
TEXT ·axpy4F16AVX512(SB), NOSPLIT, $0-64
	MOVQ         acc+0(FP), DI
	MOVQ         x0+8(FP), R8
	MOVQ         x1+16(FP), R9
	MOVQ         x2+24(FP), R10
	MOVQ         x3+32(FP), R11
	MOVQ         n+40(FP), CX
	VBROADCASTSS s0+48(FP), Z12
	VBROADCASTSS s1+52(FP), Z13
	VBROADCASTSS s2+56(FP), Z14
	VBROADCASTSS s3+60(FP), Z15
	XORQ         BX, BX
	XORQ         DX, DX

axpy4h5_loop32:
	CMPQ        CX, $32
	JL          axpy4h5_loop16
	VCVTPH2PS   (R8)(DX*1), Z4
	VCVTPH2PS   32(R8)(DX*1), Z5
	VCVTPH2PS   (R9)(DX*1), Z6
	VCVTPH2PS   32(R9)(DX*1), Z7
	VCVTPH2PS   (R10)(DX*1), Z8
	VCVTPH2PS   32(R10)(DX*1), Z9
	VCVTPH2PS   (R11)(DX*1), Z10
	VCVTPH2PS   32(R11)(DX*1), Z11
	VMOVUPS     (DI)(BX*1), Z0
	VMOVUPS     64(DI)(BX*1), Z1
	VFMADD231PS Z4, Z12, Z0
	VFMADD231PS Z5, Z12, Z1
	VFMADD231PS Z6, Z13, Z0
	VFMADD231PS Z7, Z13, Z1
	VFMADD231PS Z8, Z14, Z0
	VFMADD231PS Z9, Z14, Z1
	VFMADD231PS Z10, Z15, Z0
	VFMADD231PS Z11, Z15, Z1
	VMOVUPS     Z0, (DI)(BX*1)
	VMOVUPS     Z1, 64(DI)(BX*1)
	ADDQ        $128, BX
	ADDQ        $64, DX
	SUBQ        $32, CX
	JMP         axpy4h5_loop32

axpy4h5_loop16:
	CMPQ        CX, $16
	JL          axpy4h5_tail
	VCVTPH2PS   (R8)(DX*1), Z4
	VCVTPH2PS   (R9)(DX*1), Z6
	VCVTPH2PS   (R10)(DX*1), Z8
	VCVTPH2PS   (R11)(DX*1), Z10
	VMOVUPS     (DI)(BX*1), Z0
	VFMADD231PS Z4, Z12, Z0
	VFMADD231PS Z6, Z13, Z0
	VFMADD231PS Z8, Z14, Z0
	VFMADD231PS Z10, Z15, Z0
	VMOVUPS     Z0, (DI)(BX*1)
	ADDQ        $64, BX
	ADDQ        $32, DX
	SUBQ        $16, CX
	JMP         axpy4h5_loop16

axpy4h5_tail:
	TESTQ       CX, CX
	JEQ         axpy4h5_done
	TAILMASK
	VCVTPH2PS.Z (R8)(DX*1), K1, Z4
	VCVTPH2PS.Z (R9)(DX*1), K1, Z6
	VCVTPH2PS.Z (R10)(DX*1), K1, Z8
	VCVTPH2PS.Z (R11)(DX*1), K1, Z10
	VMOVUPS.Z   (DI)(BX*1), K1, Z0
	VFMADD231PS Z4, Z12, Z0
	VFMADD231PS Z6, Z13, Z0
	VFMADD231PS Z8, Z14, Z0
	VFMADD231PS Z10, Z15, Z0
	VMOVUPS     Z0, K1, (DI)(BX*1)

axpy4h5_done:
	VZEROUPPER
	RET

// func axpyQ8_0AVX512(acc *float32, x *byte, nb int, s float32)
// acc = fma(d*q, s, acc) over nb q8_0 blocks (34 bytes: the binary16
// scale d, then 32 int8 q), 32 elements each in two zmm registers, as
// axpyQ8_0AVX2.
TEXT ·axpyQ8_0AVX512(SB), NOSPLIT, $0-28
	MOVQ         acc+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         nb+16(FP), CX
	VBROADCASTSS s+24(FP), Z7

axpyq85_loop:
	TESTQ        CX, CX
	JEQ          axpyq85_done
	MOVWLZX      (SI), AX
	VMOVD        AX, X6
	VCVTPH2PS    X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD    2(SI), Z0
	VPMOVSXBD    18(SI), Z1
	VCVTDQ2PS    Z0, Z0
	VCVTDQ2PS    Z1, Z1
	VMULPS       Z6, Z0, Z0
	VMULPS       Z6, Z1, Z1
	VMOVUPS      (DI), Z8
	VMOVUPS      64(DI), Z9
	VFMADD231PS  Z0, Z7, Z8
	VFMADD231PS  Z1, Z7, Z9
	VMOVUPS      Z8, (DI)
	VMOVUPS      Z9, 64(DI)
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JMP          axpyq85_loop

axpyq85_done:
	VZEROUPPER
	RET

// func dot2F16AVX512(k0, k1 *uint16, q *float32, n int) (s0, s1 float32)
// dot2F16AVX2 in zmm: the four eight-lane accumulators a0-a3 of each key
// are two zmm registers ([a0|a1], [a2|a3]) over runs of 32; after them
// the runs of 8 go into a0 alone, then (a0+a1)+(a2+a3) and the
// horizontal sum as dot2F16AVX2. n is a multiple of 8.
TEXT ·dot2F16AVX512(SB), NOSPLIT, $0-40
	MOVQ   k0+0(FP), SI
	MOVQ   k1+8(FP), DI
	MOVQ   q+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

dot2h5_loop32:
	CMPQ        CX, $32
	JL          dot2h5_split
	VCVTPH2PS   (SI), Z8
	VCVTPH2PS   32(SI), Z9
	VCVTPH2PS   (DI), Z10
	VCVTPH2PS   32(DI), Z11
	VFMADD231PS (DX), Z8, Z0
	VFMADD231PS 64(DX), Z9, Z1
	VFMADD231PS (DX), Z10, Z2
	VFMADD231PS 64(DX), Z11, Z3
	ADDQ        $64, SI
	ADDQ        $64, DI
	ADDQ        $128, DX
	SUBQ        $32, CX
	JMP         dot2h5_loop32

dot2h5_split:
	// Y4, Y5 = a1, a3 of k0; Y6, Y7 = those of k1. Y0-Y3 keep a0, a2
	// (the VEX writes below clear the upper halves).
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7

dot2h5_loop8:
	CMPQ        CX, $8
	JL          dot2h5_reduce
	VCVTPH2PS   (SI), Y8
	VCVTPH2PS   (DI), Y10
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS (DX), Y10, Y2
	ADDQ        $16, SI
	ADDQ        $16, DI
	ADDQ        $32, DX
	SUBQ        $8, CX
	JMP         dot2h5_loop8

dot2h5_reduce:
	VADDPS       Y4, Y0, Y0
	VADDPS       Y5, Y1, Y1
	VADDPS       Y1, Y0, Y0
	VADDPS       Y6, Y2, Y2
	VADDPS       Y7, Y3, Y3
	VADDPS       Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPS       X3, X2, X2
	VMOVHLPS     X2, X2, X3
	VADDPS       X3, X2, X2
	VMOVSHDUP    X2, X3
	VADDSS       X3, X2, X2
	VMOVSS       X0, s0+32(FP)
	VMOVSS       X2, s1+36(FP)
	VZEROUPPER
	RET
