//go:build amd64 && !purego

#include "textflag.h"

// The x8 kernels (see x8.go for the layout): eight interleaved weight
// rows against one q8_0 activation row, ng groups a call, each group one
// contiguous stream. A broadcast of four activation codes multiplies
// four codes of each of the eight rows (row r in bytes 4r..4r+3 of a code
// vector), so after VPMADDUBSW and VPMADDWD int32 lane r is row r's sum:
// no horizontal sums, one scale multiply and one FMA per block for all
// eight rows, and the outputs leave as one 8-float store per group.

DATA x8nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL x8nib<>(SB), RODATA|NOPTR, $8

// X8_Q4BLK: the q4_0 x8 block at SI with the q8_0 block at R8 and its
// side data (d_y, 8*sum(y)) at R9: Y0 += float32(sum(q*y) - 8*sum(y)) *
// (d_x*d_y), row r in lane r. The unsigned nibbles times the signed
// codes give pair sums of at most 2*15*128 in magnitude, so the eight
// vectors' words add up (VPADDW) without overflow before one VPMADDWD.
// Y14 = 0x0f bytes, Y15 = 1 words. Clobbers Y1-Y12.
#define X8_Q4BLK \
	VMOVDQU      16(SI), Y1; \
	VMOVDQU      48(SI), Y2; \
	VMOVDQU      80(SI), Y3; \
	VMOVDQU      112(SI), Y4; \
	VPSRLW       $4, Y1, Y5; \
	VPSRLW       $4, Y2, Y6; \
	VPSRLW       $4, Y3, Y7; \
	VPSRLW       $4, Y4, Y8; \
	VPAND        Y14, Y1, Y1; \
	VPAND        Y14, Y2, Y2; \
	VPAND        Y14, Y3, Y3; \
	VPAND        Y14, Y4, Y4; \
	VPAND        Y14, Y5, Y5; \
	VPAND        Y14, Y6, Y6; \
	VPAND        Y14, Y7, Y7; \
	VPAND        Y14, Y8, Y8; \
	VPBROADCASTD 2(R8), Y9; \
	VPBROADCASTD 18(R8), Y10; \
	VPBROADCASTD 6(R8), Y11; \
	VPBROADCASTD 22(R8), Y12; \
	VPMADDUBSW   Y9, Y1, Y1; \
	VPMADDUBSW   Y10, Y5, Y5; \
	VPMADDUBSW   Y11, Y2, Y2; \
	VPMADDUBSW   Y12, Y6, Y6; \
	VPBROADCASTD 10(R8), Y9; \
	VPBROADCASTD 26(R8), Y10; \
	VPBROADCASTD 14(R8), Y11; \
	VPBROADCASTD 30(R8), Y12; \
	VPMADDUBSW   Y9, Y3, Y3; \
	VPMADDUBSW   Y10, Y7, Y7; \
	VPMADDUBSW   Y11, Y4, Y4; \
	VPMADDUBSW   Y12, Y8, Y8; \
	VPADDW       Y5, Y1, Y1; \
	VPADDW       Y6, Y2, Y2; \
	VPADDW       Y7, Y3, Y3; \
	VPADDW       Y8, Y4, Y4; \
	VPADDW       Y2, Y1, Y1; \
	VPADDW       Y4, Y3, Y3; \
	VPADDW       Y3, Y1, Y1; \
	VPMADDWD     Y15, Y1, Y1; \
	VPBROADCASTD 4(R9), Y9; \
	VPSUBD       Y9, Y1, Y1; \
	VCVTDQ2PS    Y1, Y1; \
	VCVTPH2PS    (SI), Y10; \
	VBROADCASTSS (R9), Y11; \
	VMULPS       Y11, Y10, Y10; \
	VFMADD231PS  Y10, Y1, Y0

// func q4_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32)
//
// Twin: X8Q4_0Twin. nb, ng > 0.
TEXT ·q4_0x8AVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ x8nib<>(SB), Y14

x8q4group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y0, Y0, Y0

x8q4block:
	X8_Q4BLK
	ADDQ $144, SI
	ADDQ $34, R8
	ADDQ $8, R9
	DECQ R11
	JNE  x8q4block

	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q4group
	VZEROUPPER
	RET

// X8_Q8VEC(OFF, YOFF, X, T): code vector OFF(SI) times the activation
// codes YOFF(R8..R8+3) broadcast, by the sign trick (|x| times y with
// x's sign): X = the int32 lane sums, row r in lane r. Y15 = 1 words.
#define X8_Q8VEC(OFF, YOFF, X, T) \
	VMOVDQU      OFF(SI), X; \
	VPBROADCASTD YOFF(R8), T; \
	VPSIGNB      X, T, T; \
	VPABSB       X, X; \
	VPMADDUBSW   T, X, X; \
	VPMADDWD     Y15, X, X

// func q8_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32)
//
// Twin: X8Q8_0Twin. nb, ng > 0.
TEXT ·q8_0x8AVX2(SB), NOSPLIT, $0-48
	MOVQ     x+0(FP), SI
	MOVQ     y+8(FP), DI
	MOVQ     side+16(FP), BX
	MOVQ     nb+24(FP), CX
	MOVQ     ng+32(FP), R10
	MOVQ     out+40(FP), DX
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15

x8q8group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y0, Y0, Y0

x8q8block:
	X8_Q8VEC(16, 2, Y1, Y9)
	X8_Q8VEC(48, 6, Y2, Y10)
	X8_Q8VEC(80, 10, Y3, Y11)
	X8_Q8VEC(112, 14, Y4, Y12)
	VPADDD       Y2, Y1, Y1
	VPADDD       Y4, Y3, Y3
	X8_Q8VEC(144, 18, Y5, Y9)
	X8_Q8VEC(176, 22, Y6, Y10)
	X8_Q8VEC(208, 26, Y7, Y11)
	X8_Q8VEC(240, 30, Y8, Y12)
	VPADDD       Y6, Y5, Y5
	VPADDD       Y8, Y7, Y7
	VPADDD       Y3, Y1, Y1
	VPADDD       Y7, Y5, Y5
	VPADDD       Y5, Y1, Y1
	VCVTDQ2PS    Y1, Y1
	VCVTPH2PS    (SI), Y10
	VBROADCASTSS (R9), Y11
	VMULPS       Y11, Y10, Y10
	VFMADD231PS  Y10, Y1, Y0
	ADDQ         $272, SI
	ADDQ         $34, R8
	ADDQ         $4, R9
	DECQ         R11
	JNE          x8q8block

	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q8group
	VZEROUPPER
	RET
