//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// Four-row kernels of the table-coded 32-element formats, IQ4_NL and
// MXFP4, against a q8_0 row whose block scales dy holds widened (see
// gemv_amd64.go; twins IQ4_NLTwin, MXFP4Twin). Per block the activation
// codes are loaded once and their magnitudes |y| (read unsigned, so -128
// is 128) taken once for the four rows; each row's 16 index bytes are
// split into 32 nibbles as q4_0's kernel splits them (VBROADCASTI128, one
// VPSRLVD, one VPAND), looked up in the value table (VPSHUFB), given y's
// signs (|x| <= 127: no wrap) and multiplied with |y| by VPMADDUBSW, so
// every int32 lane is the exact sum of x*y over its four elements; the
// lanes are converted and FMA'd with d = d_x*d_y into one accumulator per
// row, d_x widened by a broadcast load from a table indexed by the scale
// bits (halfTable for IQ4_NL's f16, e8m0Table for MXFP4's E8M0 byte).
//
// Registers: SI walks row 0 of x (rows r at SI + r*R8, R9 = 3*R8), DI
// walks y, BX walks dy, CX counts blocks, DX = out, R14 = the scale
// table; Y13 = the value table in both halves, Y14 = 0x0f bytes, Y15 =
// 1 words, Y11 = gvtshift, Y4 = y, Y12 = |y|, Y5 = d_y.

DATA gvtshift<>+0(SB)/8, $0
DATA gvtshift<>+8(SB)/8, $0
DATA gvtshift<>+16(SB)/8, $0x0000000400000004
DATA gvtshift<>+24(SB)/8, $0x0000000400000004
GLOBL gvtshift<>(SB), RODATA|NOPTR, $32

DATA gvtnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gvtnib<>(SB), RODATA|NOPTR, $8

// GVT_ROW(QS, XD, ACC): ACC += the lanes of the row's block with index
// bytes at QS times d_x*d_y, d_x the float32 at (R14)(XD*4). Clobbers
// Y6, Y7.
#define GVT_ROW(QS, XD, ACC) \
	VBROADCASTI128 QS, Y6; \
	VPSRLVD        Y11, Y6, Y6; \
	VPAND          Y14, Y6, Y6; \
	VPSHUFB        Y6, Y13, Y6; \
	VPSIGNB        Y4, Y6, Y6; \
	VPMADDUBSW     Y6, Y12, Y6; \
	VPMADDWD       Y15, Y6, Y6; \
	VCVTDQ2PS      Y6, Y6; \
	VBROADCASTSS   (R14)(XD*4), Y7; \
	VMULPS         Y5, Y7, Y7; \
	VFMADD231PS    Y7, Y6, ACC

// GVT_BODY(TABLE, SCALES, LOAD, HEAD, XS, LOOP, DONE): the kernel body
// for blocks of XS bytes whose index bytes start at HEAD, the value table
// at TABLE, the scale table's pointer at SCALES, LOAD the zero-extending
// load of a scale's bits.
#define GVT_BODY(TABLE, SCALES, LOAD, HEAD, XS, LOOP, DONE) \
	MOVQ           x+0(FP), SI; \
	MOVQ           ldx+8(FP), R8; \
	MOVQ           y+16(FP), DI; \
	MOVQ           dy+24(FP), BX; \
	MOVQ           nb+32(FP), CX; \
	MOVQ           out+40(FP), DX; \
	LEAQ           (R8)(R8*2), R9; \
	VPCMPEQW       Y15, Y15, Y15; \
	VPSRLW         $15, Y15, Y15; \
	VPBROADCASTQ   gvtnib<>(SB), Y14; \
	VBROADCASTI128 TABLE, Y13; \
	VMOVDQU        gvtshift<>(SB), Y11; \
	VXORPS         Y0, Y0, Y0; \
	VXORPS         Y1, Y1, Y1; \
	VXORPS         Y2, Y2, Y2; \
	VXORPS         Y3, Y3, Y3; \
	TESTQ          CX, CX; \
	JEQ            DONE; \
	MOVQ           SCALES, R14; \
LOOP: \
	GV2_PFN; \
	LOAD           (SI), AX; \
	LOAD           (SI)(R8*1), R10; \
	LOAD           (SI)(R8*2), R11; \
	LOAD           (SI)(R9*1), R12; \
	VBROADCASTSS   (BX), Y5; \
	VMOVDQU        2(DI), Y4; \
	VPSIGNB        Y4, Y4, Y12; \
	GVT_ROW(HEAD(SI), AX, Y0); \
	GVT_ROW(HEAD(SI)(R8*1), R10, Y1); \
	GVT_ROW(HEAD(SI)(R8*2), R11, Y2); \
	GVT_ROW(HEAD(SI)(R9*1), R12, Y3); \
	ADDQ           $XS, SI; \
	ADDQ           $34, DI; \
	ADDQ           $4, BX; \
	DECQ           CX; \
	JNE            LOOP; \
DONE: \
	GV2_HSUM8(Y0, X0, X10); \
	GV2_HSUM8(Y1, X1, X10); \
	GV2_HSUM8(Y2, X2, X10); \
	GV2_HSUM8(Y3, X3, X10); \
	VMOVSS         X0, (DX); \
	VMOVSS         X1, 4(DX); \
	VMOVSS         X2, 8(DX); \
	VMOVSS         X3, 12(DX); \
	VZEROUPPER; \
	RET

// func iq4_nlx4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// Twin: IQ4_NLTwin.
TEXT ·iq4_nlx4AVX2(SB), NOSPLIT, $0-48
	GVT_BODY(·iq4nlValues(SB), ·halfTable(SB), MOVWLZX, 2, 18, gvtnlloop, gvtnldone)

// func mxfp4x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// Twin: MXFP4Twin.
TEXT ·mxfp4x4AVX2(SB), NOSPLIT, $0-48
	GVT_BODY(·mxfp4Values(SB), ·e8m0Table(SB), MOVBLZX, 1, 17, gvtmxloop, gvtmxdone)
