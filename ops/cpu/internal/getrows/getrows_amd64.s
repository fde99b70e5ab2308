//go:build amd64 && !purego

#include "textflag.h"

// AVX2 row dequantizers of GET_ROWS (package cpu's op_get_rows.go). Each element is the
// block's f16 scale times the integer code, one float32 rounding, exactly
// as quant.DequantizeRow computes it.

// SCALE32 converts a block's 32 codes, as int32 in Y4, Y5, Y8, Y9, to
// float32, multiplies them by the scale in Y0 and stores them at DI.
#define SCALE32 \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y5, Y5; \
	VCVTDQ2PS Y8, Y8; \
	VCVTDQ2PS Y9, Y9; \
	VMULPS    Y0, Y4, Y4; \
	VMULPS    Y0, Y5, Y5; \
	VMULPS    Y0, Y8, Y8; \
	VMULPS    Y0, Y9, Y9; \
	VMOVUPS   Y4, (DI); \
	VMOVUPS   Y5, 32(DI); \
	VMOVUPS   Y8, 64(DI); \
	VMOVUPS   Y9, 96(DI)

// func deqQ4_0AVX2(x *byte, y *float32, nb int)
// Writes the 32*nb values of nb q4_0 blocks at x to y.
TEXT ·deqQ4_0AVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X7
	VPBROADCASTD X7, X7
	MOVL         $0x08080808, AX
	VMOVD        AX, X6
	VPBROADCASTD X6, X6

deq40_loop:
	TESTQ        CX, CX
	JE           deq40_done
	VPBROADCASTW (SI), X0
	VCVTPH2PS    X0, Y0
	VMOVDQU      2(SI), X1
	VPAND        X7, X1, X2
	VPSRLW       $4, X1, X3
	VPAND        X7, X3, X3
	VPSUBB       X6, X2, X2
	VPSUBB       X6, X3, X3
	VPMOVSXBD    X2, Y4
	VPSRLDQ      $8, X2, X2
	VPMOVSXBD    X2, Y5
	VPMOVSXBD    X3, Y8
	VPSRLDQ      $8, X3, X3
	VPMOVSXBD    X3, Y9
	SCALE32
	ADDQ         $18, SI
	ADDQ         $128, DI
	DECQ         CX
	JMP          deq40_loop

deq40_done:
	VZEROUPPER
	RET

// func deqQ8_0AVX2(x *byte, y *float32, nb int)
// Writes the 32*nb values of nb q8_0 blocks at x to y.
TEXT ·deqQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX

deq80_loop:
	TESTQ        CX, CX
	JE           deq80_done
	VPBROADCASTW (SI), X0
	VCVTPH2PS    X0, Y0
	VPMOVSXBD    2(SI), Y4
	VPMOVSXBD    10(SI), Y5
	VPMOVSXBD    18(SI), Y8
	VPMOVSXBD    26(SI), Y9
	SCALE32
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JMP          deq80_loop

deq80_done:
	VZEROUPPER
	RET
