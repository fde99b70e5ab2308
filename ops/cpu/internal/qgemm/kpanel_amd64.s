//go:build amd64 && !purego

#include "textflag.h"

// The K-format panel kernels (kq4.go, kq6.go): eight q4_K or q6_K
// weight rows by four q8_K activation rows read in place.
// TwinQ4_K and TwinQ6_K are their bit-exact twins.
//
// Registers: SI walks the panel, R10 the super-blocks of activation row
// 0 (row c at R10 + c*R8, R9 = 3*R8), DI its codes and BX its bsums
// within a super-block, CX counts sub-blocks, DX super-blocks, AX points
// at the 32 outputs. Y0-Y3 sum a sub-block's int16 products per column,
// Y4-Y7 the columns' int32 scaled sums, Y11-Y14 their int32 min sums,
// Y8 holds a weight vector (or the scales, the mins), Y9, Y10 and Y15
// are scratch.

// KQ4_STEP(J): weight vector J of the sub-block times four codes of each
// column, broadcast, added to the int16 sums.
#define KQ4_STEP(J) \
	VMOVDQU      (32*J)(SI), Y8; \
	VPBROADCASTD (4*J)(DI), Y9; \
	VPMADDUBSW   Y9, Y8, Y9; \
	VPADDW       Y9, Y0, Y0; \
	VPBROADCASTD (4*J)(DI)(R8*1), Y10; \
	VPMADDUBSW   Y10, Y8, Y10; \
	VPADDW       Y10, Y1, Y1; \
	VPBROADCASTD (4*J)(DI)(R8*2), Y9; \
	VPMADDUBSW   Y9, Y8, Y9; \
	VPADDW       Y9, Y2, Y2; \
	VPBROADCASTD (4*J)(DI)(R9*1), Y10; \
	VPMADDUBSW   Y10, Y8, Y10; \
	VPADDW       Y10, Y3, Y3

// KQ4_MIN(ADDR, ACC): the mins (Y8) times the sub-block's two bsums of
// one column, added to its min sum.
#define KQ4_MIN(ADDR, ACC) \
	VPBROADCASTD ADDR, Y9; \
	VPMADDWD     Y9, Y8, Y9; \
	VPADDD       Y9, ACC, ACC

// KQ4_OUT(YADDR, ISUM, MSUM, OFF): one column's outputs at OFF(AX) +=
// isum * (d_x*d_y), then -= msum * (dmin_x*d_y); SI points at d_x.
#define KQ4_OUT(YADDR, ISUM, MSUM, OFF) \
	VCVTDQ2PS    ISUM, ISUM; \
	VCVTDQ2PS    MSUM, MSUM; \
	VBROADCASTSS YADDR, Y9; \
	VMULPS       (SI), Y9, Y10; \
	VMOVUPS      OFF(AX), Y15; \
	VFMADD231PS  Y10, ISUM, Y15; \
	VMULPS       32(SI), Y9, Y10; \
	VFNMADD231PS Y10, MSUM, Y15; \
	VMOVUPS      Y15, OFF(AX)

// func q4KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)
TEXT ·q4KAVX2(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), DX
	MOVQ panel+8(FP), SI
	MOVQ y+16(FP), R10
	MOVQ ldy+24(FP), R8
	MOVQ out+32(FP), AX
	LEAQ (R8)(R8*2), R9
	TESTQ DX, DX
	JEQ  kq4done

kq4super:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	LEAQ  4(R10), DI
	LEAQ  260(R10), BX
	MOVQ  $8, CX

kq4sub:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	KQ4_STEP(0)
	KQ4_STEP(1)
	KQ4_STEP(2)
	KQ4_STEP(3)
	KQ4_STEP(4)
	KQ4_STEP(5)
	KQ4_STEP(6)
	KQ4_STEP(7)
	VMOVDQU  256(SI), Y8
	VPMADDWD Y8, Y0, Y0
	VPADDD   Y0, Y4, Y4
	VPMADDWD Y8, Y1, Y1
	VPADDD   Y1, Y5, Y5
	VPMADDWD Y8, Y2, Y2
	VPADDD   Y2, Y6, Y6
	VPMADDWD Y8, Y3, Y3
	VPADDD   Y3, Y7, Y7
	VMOVDQU  288(SI), Y8
	KQ4_MIN((BX), Y11)
	KQ4_MIN((BX)(R8*1), Y12)
	KQ4_MIN((BX)(R8*2), Y13)
	KQ4_MIN((BX)(R9*1), Y14)
	ADDQ     $320, SI
	ADDQ     $32, DI
	ADDQ     $4, BX
	DECQ     CX
	JNE      kq4sub

	KQ4_OUT((R10), Y4, Y11, 0)
	KQ4_OUT((R10)(R8*1), Y5, Y12, 32)
	KQ4_OUT((R10)(R8*2), Y6, Y13, 64)
	KQ4_OUT((R10)(R9*1), Y7, Y14, 96)
	ADDQ $64, SI
	ADDQ $292, R10
	DECQ DX
	JNE  kq4super

kq4done:
	VZEROUPPER
	RET

// KQ6_WIDEN(SCALES): the four columns' int16 sums of two vectors times
// the group's scales at SCALES(SI), added to their int32 sums.
#define KQ6_WIDEN(SCALES) \
	VMOVDQU  SCALES(SI), Y8; \
	VPMADDWD Y8, Y0, Y0; \
	VPADDD   Y0, Y4, Y4; \
	VPMADDWD Y8, Y1, Y1; \
	VPADDD   Y1, Y5, Y5; \
	VPMADDWD Y8, Y2, Y2; \
	VPADDD   Y2, Y6, Y6; \
	VPMADDWD Y8, Y3, Y3; \
	VPADDD   Y3, Y7, Y7

// KQ6_PAIR(J0, J1, SCALES): vectors J0 and J1 of the sub-block.
#define KQ6_PAIR(J0, J1, SCALES) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3; \
	KQ4_STEP(J0); \
	KQ4_STEP(J1); \
	KQ6_WIDEN(SCALES)

// KQ6_OUT(YADDR, ISUM, BSUM, OFF): one column's outputs at OFF(AX) +=
// (isum - 32*bsum) * (d_x*d_y); SI points at d_x.
#define KQ6_OUT(YADDR, ISUM, BSUM, OFF) \
	VPSLLD       $5, BSUM, BSUM; \
	VPSUBD       BSUM, ISUM, ISUM; \
	VCVTDQ2PS    ISUM, ISUM; \
	VBROADCASTSS YADDR, Y9; \
	VMULPS       (SI), Y9, Y10; \
	VMOVUPS      OFF(AX), Y15; \
	VFMADD231PS  Y10, ISUM, Y15; \
	VMOVUPS      Y15, OFF(AX)

// func q6KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)
//
// Registers as in q4KAVX2; Y11-Y14 sum the columns' scales times
// bsums.
TEXT ·q6KAVX2(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), DX
	MOVQ panel+8(FP), SI
	MOVQ y+16(FP), R10
	MOVQ ldy+24(FP), R8
	MOVQ out+32(FP), AX
	LEAQ (R8)(R8*2), R9
	TESTQ DX, DX
	JEQ  kq6done

kq6super:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	LEAQ  4(R10), DI
	LEAQ  260(R10), BX
	MOVQ  $8, CX

kq6sub:
	KQ6_PAIR(0, 1, 256)
	KQ6_PAIR(2, 3, 256)
	KQ6_PAIR(4, 5, 288)
	KQ6_PAIR(6, 7, 288)
	VMOVDQU 320(SI), Y8
	KQ4_MIN((BX), Y11)
	KQ4_MIN((BX)(R8*1), Y12)
	KQ4_MIN((BX)(R8*2), Y13)
	KQ4_MIN((BX)(R9*1), Y14)
	ADDQ    $352, SI
	ADDQ    $32, DI
	ADDQ    $4, BX
	DECQ    CX
	JNE     kq6sub

	KQ6_OUT((R10), Y4, Y11, 0)
	KQ6_OUT((R10)(R8*1), Y5, Y12, 32)
	KQ6_OUT((R10)(R8*2), Y6, Y13, 64)
	KQ6_OUT((R10)(R9*1), Y7, Y14, 96)
	ADDQ $32, SI
	ADDQ $292, R10
	DECQ DX
	JNE  kq6super

kq6done:
	VZEROUPPER
	RET

// KQ5_HALF(J0, J1, J2, J3): four vectors of the sub-block, their int16
// sums widened with the sub-block's scales at 256(SI).
#define KQ5_HALF(J0, J1, J2, J3) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3; \
	KQ4_STEP(J0); \
	KQ4_STEP(J1); \
	KQ4_STEP(J2); \
	KQ4_STEP(J3); \
	KQ6_WIDEN(256)

// func q5KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)
//
// The q4_K kernel with 5-bit codes: int16 sums over four vectors.
TEXT ·q5KAVX2(SB), NOSPLIT, $0-40
	MOVQ nb+0(FP), DX
	MOVQ panel+8(FP), SI
	MOVQ y+16(FP), R10
	MOVQ ldy+24(FP), R8
	MOVQ out+32(FP), AX
	LEAQ (R8)(R8*2), R9
	TESTQ DX, DX
	JEQ  kq5done

kq5super:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	LEAQ  4(R10), DI
	LEAQ  260(R10), BX
	MOVQ  $8, CX

kq5sub:
	KQ5_HALF(0, 1, 2, 3)
	KQ5_HALF(4, 5, 6, 7)
	VMOVDQU 288(SI), Y8
	KQ4_MIN((BX), Y11)
	KQ4_MIN((BX)(R8*1), Y12)
	KQ4_MIN((BX)(R8*2), Y13)
	KQ4_MIN((BX)(R9*1), Y14)
	ADDQ    $320, SI
	ADDQ    $32, DI
	ADDQ    $4, BX
	DECQ    CX
	JNE     kq5sub

	KQ4_OUT((R10), Y4, Y11, 0)
	KQ4_OUT((R10)(R8*1), Y5, Y12, 32)
	KQ4_OUT((R10)(R8*2), Y6, Y13, 64)
	KQ4_OUT((R10)(R9*1), Y7, Y14, 96)
	ADDQ $64, SI
	ADDQ $292, R10
	DECQ DX
	JNE  kq5super

kq5done:
	VZEROUPPER
	RET
