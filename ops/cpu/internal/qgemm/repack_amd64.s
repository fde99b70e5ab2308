//go:build amd64 && !purego

#include "textflag.h"
#include "panel_amd64.h"

// Panel repacking of the quantized gemm path (qgemm.go, kq4.go, kq6.go):
// eight weight rows (or an x8 group of them) into the panel layout the
// kernels of qgemm_amd64.s read.

// QR_ARGS loads the repacking functions' arguments (panel DI, rows SI,
// row stride R8, block count CX) and runs QR_SETUP (below).
#define QR_ARGS \
	MOVQ panel+0(FP), DI; \
	MOVQ w+8(FP), SI; \
	MOVQ ld+16(FP), R8; \
	MOVQ nb+24(FP), CX; \
	QR_SETUP

// Byte constants of the nibble unpacking.
DATA qnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL qnib<>(SB), RODATA|NOPTR, $8

DATA qeight<>+0(SB)/8, $0x0808080808080808
GLOBL qeight<>(SB), RODATA|NOPTR, $8

DATA qsixteen<>+0(SB)/8, $0x1010101010101010
GLOBL qsixteen<>(SB), RODATA|NOPTR, $8

// qqhshuf spreads a broadcast uint32 so that byte j holds its byte j/8.
DATA qqhshuf<>+0(SB)/8, $0x0000000000000000
DATA qqhshuf<>+8(SB)/8, $0x0101010101010101
DATA qqhshuf<>+16(SB)/8, $0x0202020202020202
DATA qqhshuf<>+24(SB)/8, $0x0303030303030303
GLOBL qqhshuf<>(SB), RODATA|NOPTR, $32

// qnotbit: byte j is ^(1 << (j%8)).
DATA qnotbit<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA qnotbit<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA qnotbit<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA qnotbit<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL qnotbit<>(SB), RODATA|NOPTR, $32

// Panel repacking: eight weight rows (SI, SI+R8, ..., row stride R8) of
// nb blocks (CX) into a panel (DI). Each row's 32 codes of a block go to
// one register as eight dwords (dword j = elements 4j..4j+3), and an 8x8
// transpose of dwords turns the eight rows into the eight panel vectors
// (vector j = dword j of rows 0-7).

// QR_ROWS(OP) runs OP(row address) for the eight rows into Y0-Y7; R9 =
// 3*R8, R10 = 5*R8, R11 = 7*R8.
#define QR_ROWS(OP) \
	OP(0(SI), Y0); \
	OP(0(SI)(R8*1), Y1); \
	OP(0(SI)(R8*2), Y2); \
	OP(0(SI)(R9*1), Y3); \
	OP(0(SI)(R8*4), Y4); \
	OP(0(SI)(R10*1), Y5); \
	OP(0(SI)(R9*2), Y6); \
	OP(0(SI)(R11*1), Y7)

// QR_NIB(ADDR, Y): Y = the 32 q4_0 codes q-8 of the block at ADDR.
#define QR_NIB(ADDR, Y) \
	VMOVDQU 2+ADDR, X8; \
	VPSRLW $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y; \
	VPAND Y12, Y, Y; \
	VPSUBB Y13, Y, Y

// QR_Q5(ADDR, Y): Y = the 32 q5_0 codes q-16 of the block at ADDR: the
// nibbles, with bit 4 set where the bit of qh is (qh broadcast, byte j
// taking qh's byte j/8, OR'd with all bits but bit j%8, all ones exactly
// when the bit is set). Y12 = 0x0f, Y13 = 0x10, Y14 = all ones.
#define QR_Q5(ADDR, Y) \
	VMOVDQU 6+ADDR, X8; \
	VPSRLW $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y; \
	VPAND Y12, Y, Y; \
	VPBROADCASTD 2+ADDR, Y9; \
	VPSHUFB qqhshuf<>(SB), Y9, Y9; \
	VPOR qnotbit<>(SB), Y9, Y9; \
	VPCMPEQB Y14, Y9, Y9; \
	VPAND Y13, Y9, Y9; \
	VPOR Y9, Y, Y; \
	VPSUBB Y13, Y, Y

// QR_UNIB(ADDR, Y): Y = the 32 q4_1 codes of the block at ADDR.
#define QR_UNIB(ADDR, Y) \
	VMOVDQU 4+ADDR, X8; \
	VPSRLW $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y; \
	VPAND Y12, Y, Y

// QR_U5(ADDR, Y): Y = the 32 q5_1 codes of the block at ADDR (as
// QR_Q5, without the offset).
#define QR_U5(ADDR, Y) \
	VMOVDQU 8+ADDR, X8; \
	VPSRLW $4, X8, X9; \
	VINSERTI128 $1, X9, Y8, Y; \
	VPAND Y12, Y, Y; \
	VPBROADCASTD 4+ADDR, Y9; \
	VPSHUFB qqhshuf<>(SB), Y9, Y9; \
	VPOR qnotbit<>(SB), Y9, Y9; \
	VPCMPEQB Y14, Y9, Y9; \
	VPAND Y13, Y9, Y9; \
	VPOR Y9, Y, Y

// QR_Q8(ADDR, Y): Y = the 32 q8_0 codes of the block at ADDR.
#define QR_Q8(ADDR, Y) \
	VMOVDQU 2+ADDR, Y

// QR_TRANSPOSE stores the eight panel vectors of the rows in Y0-Y7 at
// 0..224(DI); clobbers Y0-Y11.
#define QR_TRANSPOSE QR_TRANSPOSE_TO(0, 32, 64, 96, 128, 160, 192, 224)

// QR_TRANSPOSE_TO(D0, ..., D7) transposes the 8x8 dwords of Y0-Y7 (row r
// in Yr) and stores vector j (dword j of rows 0-7) at Dj(DI); clobbers
// Y0-Y11.
#define QR_TRANSPOSE_TO(D0, D1, D2, D3, D4, D5, D6, D7) \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLDQ Y5, Y4, Y8; \
	VPUNPCKHDQ Y5, Y4, Y9; \
	VPUNPCKLDQ Y7, Y6, Y10; \
	VPUNPCKHDQ Y7, Y6, Y11; \
	VPUNPCKLQDQ Y10, Y8, Y4; \
	VPUNPCKHQDQ Y10, Y8, Y5; \
	VPUNPCKLQDQ Y11, Y9, Y6; \
	VPUNPCKHQDQ Y11, Y9, Y7; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y9; \
	VMOVDQU Y8, D0(DI); \
	VMOVDQU Y9, D4(DI); \
	VPERM2I128 $0x20, Y5, Y1, Y8; \
	VPERM2I128 $0x31, Y5, Y1, Y9; \
	VMOVDQU Y8, D1(DI); \
	VMOVDQU Y9, D5(DI); \
	VPERM2I128 $0x20, Y6, Y2, Y8; \
	VPERM2I128 $0x31, Y6, Y2, Y9; \
	VMOVDQU Y8, D2(DI); \
	VMOVDQU Y9, D6(DI); \
	VPERM2I128 $0x20, Y7, Y3, Y8; \
	VPERM2I128 $0x31, Y7, Y3, Y9; \
	VMOVDQU Y8, D3(DI); \
	VMOVDQU Y9, D7(DI)

// QR_SCALES_AT(XO, DST) stores the eight rows' f16 values at XO of the
// block as float32 at DST(DI); clobbers AX, Y8. QR_SCALES stores the
// scales d.
#define QR_SCALES_AT(XO, DST) \
	MOVWLZX XO(SI), AX; \
	VPINSRW $0, AX, X8, X8; \
	MOVWLZX XO(SI)(R8*1), AX; \
	VPINSRW $1, AX, X8, X8; \
	MOVWLZX XO(SI)(R8*2), AX; \
	VPINSRW $2, AX, X8, X8; \
	MOVWLZX XO(SI)(R9*1), AX; \
	VPINSRW $3, AX, X8, X8; \
	MOVWLZX XO(SI)(R8*4), AX; \
	VPINSRW $4, AX, X8, X8; \
	MOVWLZX XO(SI)(R10*1), AX; \
	VPINSRW $5, AX, X8, X8; \
	MOVWLZX XO(SI)(R9*2), AX; \
	VPINSRW $6, AX, X8, X8; \
	MOVWLZX XO(SI)(R11*1), AX; \
	VPINSRW $7, AX, X8, X8; \
	VCVTPH2PS X8, Y8; \
	VMOVUPS Y8, DST(DI)

#define QR_SCALES QR_SCALES_AT(0, QP_D)

// QR_CORR stores at QP_CORR(DI) each row's 128*sum of its codes, summed
// from the stored panel vectors (VPMADDUBSW with byte ones, int16 pair
// sums added, widened); clobbers Y8-Y10.
#define QR_CORR \
	VPMADDUBSW 0(DI), Y15, Y8; \
	VPMADDUBSW 32(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 64(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 96(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 128(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 160(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 192(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPMADDUBSW 224(DI), Y15, Y9; \
	VPADDW Y9, Y8, Y8; \
	VPCMPEQW Y10, Y10, Y10; \
	VPSRLW $15, Y10, Y10; \
	VPMADDWD Y10, Y8, Y8; \
	VPSLLD $7, Y8, Y8; \
	VMOVDQU Y8, QP_CORR(DI)

// QR_SETUP (with R8 = ld) computes the row stride multiples R9 = 3*R8,
// R10 = 5*R8, R11 = 7*R8 and the byte constants (QR_CONSTS).
#define QR_SETUP \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11; \
	QR_CONSTS

// QR_CONSTS loads the byte constants: Y12 = 0x0f, Y13 = 0x08, Y15 = byte
// ones.
#define QR_CONSTS \
	VPBROADCASTQ qnib<>(SB), Y12; \
	VPBROADCASTQ qeight<>(SB), Y13; \
	VPCMPEQB Y15, Y15, Y15; \
	VPABSB Y15, Y15

// QR_BLOCKS(BLOCK, loop, done) runs BLOCK, which writes one block's (or
// super-block's) panel and moves SI and DI past it, CX times, then
// returns: the loop of every repacking function.
#define QR_BLOCKS(BLOCK, loop, done) \
	TESTQ CX, CX; \
	JEQ   done; \
loop: \
	BLOCK; \
	DECQ  CX; \
	JNE   loop; \
done: \
	VZEROUPPER; \
	RET

// R40_BLOCK writes the q4_0 panel of a block of the eight rows.
#define R40_BLOCK \
	QR_ROWS(QR_NIB); \
	QR_TRANSPOSE; \
	QR_SCALES; \
	QR_CORR; \
	ADDQ $18, SI; \
	ADDQ $320, DI

// func repackQ4_0AVX2(panel, w *byte, ld, nb int)
//
// Writes the q4_0 panel of the eight rows w + r*ld (see repackQ4_0).
TEXT ·repackQ4_0AVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	QR_BLOCKS(R40_BLOCK, r40loop, r40done)

// R50_BLOCK writes the q5_0 panel of a block of the eight rows.
#define R50_BLOCK \
	QR_ROWS(QR_Q5); \
	QR_TRANSPOSE; \
	QR_SCALES; \
	QR_CORR; \
	ADDQ $22, SI; \
	ADDQ $320, DI

// func repackQ5_0AVX2(panel, w *byte, ld, nb int)
//
// Writes the q5_0 panel of the eight rows w + r*ld (see repackQ5_0).
TEXT ·repackQ5_0AVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	VPBROADCASTQ qsixteen<>(SB), Y13
	VPCMPEQB     Y14, Y14, Y14
	QR_BLOCKS(R50_BLOCK, r50loop, r50done)

// R80_BLOCK writes the q8_0 panel of a block of the eight rows.
#define R80_BLOCK \
	QR_ROWS(QR_Q8); \
	QR_TRANSPOSE; \
	QR_SCALES; \
	ADDQ $34, SI; \
	ADDQ $288, DI

// func repackQ8_0AVX2(panel, w *byte, ld, nb int)
//
// Writes the q8_0 panel of the eight rows w + r*ld (see repackQ8_0).
TEXT ·repackQ8_0AVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	QR_BLOCKS(R80_BLOCK, r80loop, r80done)

// R41_BLOCK writes the q4_1 panel of a block of the eight rows.
#define R41_BLOCK \
	QR_ROWS(QR_UNIB); \
	QR_TRANSPOSE; \
	QR_SCALES; \
	QR_SCALES_AT(2, QP_CORR); \
	ADDQ $20, SI; \
	ADDQ $320, DI

// func repackQ4_1AVX2(panel, w *byte, ld, nb int)
//
// Writes the q4_1 panel of the eight rows w + r*ld (see repackQ4_1).
TEXT ·repackQ4_1AVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	QR_BLOCKS(R41_BLOCK, r41loop, r41done)

// R51_BLOCK writes the q5_1 panel of a block of the eight rows.
#define R51_BLOCK \
	QR_ROWS(QR_U5); \
	QR_TRANSPOSE; \
	QR_SCALES; \
	QR_SCALES_AT(2, QP_CORR); \
	ADDQ $24, SI; \
	ADDQ $320, DI

// func repackQ5_1AVX2(panel, w *byte, ld, nb int)
//
// Writes the q5_1 panel of the eight rows w + r*ld (see repackQ5_1).
TEXT ·repackQ5_1AVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	VPBROADCASTQ qsixteen<>(SB), Y13
	VPCMPEQB     Y14, Y14, Y14
	QR_BLOCKS(R51_BLOCK, r51loop, r51done)

// X8_NIB(XO, PO): the x8 code vector at XO(SI) (bytes 4v..4v+3 of each
// row's q4_0 codes) split into panel vectors: its low nibbles less 8
// (elements 4v..4v+3 of each row) to PO(DI), its high nibbles less 8
// (elements 16+4v..) to 128+PO(DI). Y12 = 0x0f, Y13 = 0x08; clobbers
// Y0, Y1.
#define X8_NIB(XO, PO) \
	VMOVDQU XO(SI), Y0; \
	VPSRLW  $4, Y0, Y1; \
	VPAND   Y12, Y0, Y0; \
	VPAND   Y12, Y1, Y1; \
	VPSUBB  Y13, Y0, Y0; \
	VPSUBB  Y13, Y1, Y1; \
	VMOVDQU Y0, PO(DI); \
	VMOVDQU Y1, 128+PO(DI)

// X40_BLOCK writes the q4_0 panel of a block of an x8 group.
#define X40_BLOCK \
	X8_NIB(16, 0); \
	X8_NIB(48, 32); \
	X8_NIB(80, 64); \
	X8_NIB(112, 96); \
	VCVTPH2PS (SI), Y8; \
	VMOVUPS   Y8, QP_D(DI); \
	QR_CORR; \
	ADDQ      $144, SI; \
	ADDQ      $320, DI

// func panelQ4_0FromX8AVX2(panel, x8 *byte, nb int)
//
// Writes the q4_0 panel of the eight rows of the x8 group x8 (package
// gemv's x8 layout): what repackQ4_0AVX2 writes for the plain rows.
TEXT ·panelQ4_0FromX8AVX2(SB), NOSPLIT, $0-24
	MOVQ panel+0(FP), DI
	MOVQ x8+8(FP), SI
	MOVQ nb+16(FP), CX
	QR_CONSTS
	QR_BLOCKS(X40_BLOCK, x40loop, x40done)

// X80_BLOCK writes the q8_0 panel of a block of an x8 group: its code
// vectors as they are, its scales widened.
#define X80_BLOCK \
	VMOVDQU   16(SI), Y0; \
	VMOVDQU   48(SI), Y1; \
	VMOVDQU   80(SI), Y2; \
	VMOVDQU   112(SI), Y3; \
	VMOVDQU   144(SI), Y4; \
	VMOVDQU   176(SI), Y5; \
	VMOVDQU   208(SI), Y6; \
	VMOVDQU   240(SI), Y7; \
	VCVTPH2PS (SI), Y8; \
	VMOVDQU   Y0, 0(DI); \
	VMOVDQU   Y1, 32(DI); \
	VMOVDQU   Y2, 64(DI); \
	VMOVDQU   Y3, 96(DI); \
	VMOVDQU   Y4, 128(DI); \
	VMOVDQU   Y5, 160(DI); \
	VMOVDQU   Y6, 192(DI); \
	VMOVDQU   Y7, 224(DI); \
	VMOVUPS   Y8, QP_D(DI); \
	ADDQ      $272, SI; \
	ADDQ      $288, DI

// func panelQ8_0FromX8AVX2(panel, x8 *byte, nb int)
//
// Writes the q8_0 panel of the eight rows of the x8 group x8: its code
// vectors are the panel's, and the scales are widened.
TEXT ·panelQ8_0FromX8AVX2(SB), NOSPLIT, $0-24
	MOVQ panel+0(FP), DI
	MOVQ x8+8(FP), SI
	MOVQ nb+16(FP), CX
	QR_BLOCKS(X80_BLOCK, x80loop, x80done)

// The K-format panels (kq4.go): a super-block of eight q4_K or q5_K rows
// is eight sub-block panels of 320 bytes (eight code vectors, then the
// rows' scales and mins as int16 pairs at 256 and 288), then the rows'
// d and dmin as float32 (at 2560 and 2592). The code vectors are the 8x8
// dword transpose of the rows' 32 codes of the sub-block, as for the
// 32-element formats; the scales and mins are the transpose of each
// row's sixteen 6-bit values widened to int16 pairs.

// KR_ROWS(OP, OFF) runs OP(OFF + row address, Yr) for the eight rows (as
// QR_ROWS, at byte OFF of each row's super-block).
#define KR_ROWS(OP, OFF) \
	OP(OFF(SI), Y0); \
	OP(OFF(SI)(R8*1), Y1); \
	OP(OFF(SI)(R8*2), Y2); \
	OP(OFF(SI)(R9*1), Y3); \
	OP(OFF(SI)(R8*4), Y4); \
	OP(OFF(SI)(R10*1), Y5); \
	OP(OFF(SI)(R9*2), Y6); \
	OP(OFF(SI)(R11*1), Y7)

// KR_LO(ADDR, Y), KR_HI(ADDR, Y): Y = the low (high) nibbles of the 32
// code bytes at ADDR: the first (second) sub-block of the pair they
// hold. Y12 = 0x0f.
#define KR_LO(ADDR, Y) \
	VMOVDQU ADDR, Y; \
	VPAND   Y12, Y, Y

#define KR_HI(ADDR, Y) \
	VMOVDQU ADDR, Y; \
	VPSRLW  $4, Y, Y; \
	VPAND   Y12, Y, Y

// KR_CODES(LO, HI, OFF) writes the two sub-block panels of the code
// bytes at OFF of the rows (LO and HI each load one sub-block's codes)
// at 0(DI) and 320(DI) and moves DI past them.
#define KR_CODES(LO, HI, OFF) \
	KR_ROWS(LO, OFF); \
	QR_TRANSPOSE; \
	ADDQ $320, DI; \
	KR_ROWS(HI, OFF); \
	QR_TRANSPOSE; \
	ADDQ $320, DI

// KR_SC(ADDR, SLOT) unpacks the 12 scale bytes of the super-block at
// ADDR (at 4..15) into 16 bytes at SLOT(DI): the scales of sub-blocks
// 0-7, then their mins (6 bits each: bytes 0-3 and 4-7 hold the low six
// bits of scales and mins 0-3 and the top two bits of 4-7, bytes 8-11
// the low four of scales and mins 4-7). The slots are in the code
// vectors of the panel's last sub-block, which are written after them.
// Clobbers AX, BX, DX, R12, X8.
#define KR_SC(ADDR, SLOT) \
	MOVL    4+ADDR, AX; \
	MOVL    8+ADDR, BX; \
	MOVL    12+ADDR, DX; \
	MOVL    AX, R12; \
	ANDL    $0x3f3f3f3f, R12; \
	VMOVD   R12, X8; \
	MOVL    DX, R12; \
	ANDL    $0x0f0f0f0f, R12; \
	SHRL    $6, AX; \
	ANDL    $0x03030303, AX; \
	SHLL    $4, AX; \
	ORL     AX, R12; \
	VPINSRD $1, R12, X8, X8; \
	MOVL    BX, R12; \
	ANDL    $0x3f3f3f3f, R12; \
	VPINSRD $2, R12, X8, X8; \
	SHRL    $4, DX; \
	ANDL    $0x0f0f0f0f, DX; \
	SHRL    $6, BX; \
	ANDL    $0x03030303, BX; \
	SHLL    $4, BX; \
	ORL     BX, DX; \
	VPINSRD $3, DX, X8, X8; \
	VMOVDQU X8, SLOT(DI)

// KR_WIDEN(UNPCK) loads each row's 16 unpacked bytes from its slot,
// widens them to words (scales in the low lane, mins in the high one)
// and doubles each word of four with UNPCK (VPUNPCKLWD: sub-blocks 0-3,
// VPUNPCKHWD: 4-7): Yr = the int16 pairs of four scales, then of four
// mins.
#define KR_WIDEN(UNPCK) \
	VPMOVZXBW 2240(DI), Y0; \
	VPMOVZXBW 2256(DI), Y1; \
	VPMOVZXBW 2272(DI), Y2; \
	VPMOVZXBW 2288(DI), Y3; \
	VPMOVZXBW 2304(DI), Y4; \
	VPMOVZXBW 2320(DI), Y5; \
	VPMOVZXBW 2336(DI), Y6; \
	VPMOVZXBW 2352(DI), Y7; \
	UNPCK Y0, Y0, Y0; \
	UNPCK Y1, Y1, Y1; \
	UNPCK Y2, Y2, Y2; \
	UNPCK Y3, Y3, Y3; \
	UNPCK Y4, Y4, Y4; \
	UNPCK Y5, Y5, Y5; \
	UNPCK Y6, Y6, Y6; \
	UNPCK Y7, Y7, Y7

// KR_SCALES writes the eight sub-block panels' scales and mins of the
// super-block at SI to DI's panel (DI at its start).
#define KR_SCALES \
	KR_SC(0(SI), 2240); \
	KR_SC(0(SI)(R8*1), 2256); \
	KR_SC(0(SI)(R8*2), 2272); \
	KR_SC(0(SI)(R9*1), 2288); \
	KR_SC(0(SI)(R8*4), 2304); \
	KR_SC(0(SI)(R10*1), 2320); \
	KR_SC(0(SI)(R9*2), 2336); \
	KR_SC(0(SI)(R11*1), 2352); \
	KR_WIDEN(VPUNPCKLWD); \
	QR_TRANSPOSE_TO(256, 576, 896, 1216, 288, 608, 928, 1248); \
	KR_WIDEN(VPUNPCKHWD); \
	QR_TRANSPOSE_TO(1536, 1856, 2176, 2496, 1568, 1888, 2208, 2528)

// KR_DS writes the rows' d and dmin (DI at the super-block panel's
// 2560) and moves DI to the next super-block panel.
#define KR_DS \
	QR_SCALES_AT(0, 0); \
	QR_SCALES_AT(2, 32); \
	ADDQ $64, DI

// RK4_BLOCK writes the q4_K panel of a super-block of the eight rows.
#define RK4_BLOCK \
	KR_SCALES; \
	KR_CODES(KR_LO, KR_HI, 16); \
	KR_CODES(KR_LO, KR_HI, 48); \
	KR_CODES(KR_LO, KR_HI, 80); \
	KR_CODES(KR_LO, KR_HI, 112); \
	KR_DS; \
	ADDQ $144, SI

// func repackQ4_KAVX2(panel, w *byte, ld, nb int)
//
// Writes the q4_K panel of the eight rows w + r*ld (see RepackQ4_K).
TEXT ·repackQ4_KAVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	QR_BLOCKS(RK4_BLOCK, rk4loop, rk4done)

// KR5(QH, ADDR, Y, NIB, S): Y = the q5_K codes of sub-block S whose
// nibbles are at ADDR (NIB = KR_LO or KR_HI): the nibbles, plus 16 where
// bit S of the row's qh byte (the 32 bytes at QH) is set. Y15 = byte
// ones; clobbers Y9.
#define KR5(QH, ADDR, Y, NIB, S) \
	NIB(ADDR, Y); \
	VMOVDQU QH, Y9; \
	VPSRLW  $S, Y9, Y9; \
	VPAND   Y15, Y9, Y9; \
	VPSLLW  $4, Y9, Y9; \
	VPOR    Y9, Y, Y

// KR5_ROWS(NIB, OFF, S) loads the eight rows' q5_K codes of sub-block S
// (nibbles at OFF) into Y0-Y7.
#define KR5_ROWS(NIB, OFF, S) \
	KR5(16(SI), OFF(SI), Y0, NIB, S); \
	KR5(16(SI)(R8*1), OFF(SI)(R8*1), Y1, NIB, S); \
	KR5(16(SI)(R8*2), OFF(SI)(R8*2), Y2, NIB, S); \
	KR5(16(SI)(R9*1), OFF(SI)(R9*1), Y3, NIB, S); \
	KR5(16(SI)(R8*4), OFF(SI)(R8*4), Y4, NIB, S); \
	KR5(16(SI)(R10*1), OFF(SI)(R10*1), Y5, NIB, S); \
	KR5(16(SI)(R9*2), OFF(SI)(R9*2), Y6, NIB, S); \
	KR5(16(SI)(R11*1), OFF(SI)(R11*1), Y7, NIB, S)

// KR5_CODES(OFF, S, S1) is KR_CODES for q5_K: sub-blocks S and S1 =
// S+1 of the nibbles at OFF.
#define KR5_CODES(OFF, S, S1) \
	KR5_ROWS(KR_LO, OFF, S); \
	QR_TRANSPOSE; \
	ADDQ $320, DI; \
	KR5_ROWS(KR_HI, OFF, S1); \
	QR_TRANSPOSE; \
	ADDQ $320, DI

// RK5_BLOCK writes the q5_K panel of a super-block of the eight rows.
#define RK5_BLOCK \
	KR_SCALES; \
	KR5_CODES(48, 0, 1); \
	KR5_CODES(80, 2, 3); \
	KR5_CODES(112, 4, 5); \
	KR5_CODES(144, 6, 7); \
	KR_DS; \
	ADDQ $176, SI

// func repackQ5_KAVX2(panel, w *byte, ld, nb int)
//
// Writes the q5_K panel of the eight rows w + r*ld (see RepackQ5_K).
TEXT ·repackQ5_KAVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	QR_BLOCKS(RK5_BLOCK, rk5loop, rk5done)

// The q6_K panel (kq6.go): eight sub-block panels of 352 bytes (eight
// code vectors, then the rows' scales of the sub-block's two groups as
// int16 pairs at 256 and 288, and both as one pair at 320), then the
// rows' d as float32 (at 2816). Sub-block s = 4h+t of a row takes the
// nibbles (low for t < 2, high else) of its ql bytes 64h+32(t%2).. and
// bits 2t, 2t+1 of its qh bytes 32h.. as code bits 4 and 5.

// KR6(QL, QH, Y, NIB, SH): Y = the 32 codes whose nibbles are at QL
// (NIB = KR_LO or KR_HI) and whose top two bits are bits SH, SH+1 of the
// 32 bytes at QH. Y12 = 0x0f, Y14 = 0x03; clobbers Y9.
#define KR6(QL, QH, Y, NIB, SH) \
	NIB(QL, Y); \
	VMOVDQU QH, Y9; \
	VPSRLW  $SH, Y9, Y9; \
	VPAND   Y14, Y9, Y9; \
	VPSLLW  $4, Y9, Y9; \
	VPOR    Y9, Y, Y

// KR6_SUB(NIB, QL, QH, SH) writes the code vectors of one sub-block of
// the eight rows (their nibbles at QL, their top bits at QH, SH) at
// 0(DI) and moves DI to the next sub-block panel.
#define KR6_SUB(NIB, QL, QH, SH) \
	KR6(QL(SI), QH(SI), Y0, NIB, SH); \
	KR6(QL(SI)(R8*1), QH(SI)(R8*1), Y1, NIB, SH); \
	KR6(QL(SI)(R8*2), QH(SI)(R8*2), Y2, NIB, SH); \
	KR6(QL(SI)(R9*1), QH(SI)(R9*1), Y3, NIB, SH); \
	KR6(QL(SI)(R8*4), QH(SI)(R8*4), Y4, NIB, SH); \
	KR6(QL(SI)(R10*1), QH(SI)(R10*1), Y5, NIB, SH); \
	KR6(QL(SI)(R9*2), QH(SI)(R9*2), Y6, NIB, SH); \
	KR6(QL(SI)(R11*1), QH(SI)(R11*1), Y7, NIB, SH); \
	QR_TRANSPOSE; \
	ADDQ $352, DI

// KR6_WIDEN(UNPCK) sets Yr to row r's sixteen group scales (at 192 of
// its block) as int16, groups 0-7 in the low lane and 8-15 in the high
// one, then applies UNPCK (a word unpack of Yr with itself, or nothing
// when UNPCK is KR6_NONE).
#define KR6_WIDEN(UNPCK) \
	VPMOVSXBW 192(SI), Y0; \
	VPMOVSXBW 192(SI)(R8*1), Y1; \
	VPMOVSXBW 192(SI)(R8*2), Y2; \
	VPMOVSXBW 192(SI)(R9*1), Y3; \
	VPMOVSXBW 192(SI)(R8*4), Y4; \
	VPMOVSXBW 192(SI)(R10*1), Y5; \
	VPMOVSXBW 192(SI)(R9*2), Y6; \
	VPMOVSXBW 192(SI)(R11*1), Y7; \
	UNPCK(Y0); \
	UNPCK(Y1); \
	UNPCK(Y2); \
	UNPCK(Y3); \
	UNPCK(Y4); \
	UNPCK(Y5); \
	UNPCK(Y6); \
	UNPCK(Y7)

#define KR6_LOW(Y) VPUNPCKLWD Y, Y, Y
#define KR6_HIGH(Y) VPUNPCKHWD Y, Y, Y
#define KR6_NONE(Y)

// KR6_SCALES writes the scale pairs of the eight sub-block panels of the
// super-block at SI (DI at the panel's start). Doubled words: groups
// 0-3 and 8-11 (sub-blocks 0, 1, 4, 5), then 4-7 and 12-15 (2, 3, 6,
// 7); as they are, group pairs (2s, 2s+1) for sub-block s.
#define KR6_SCALES \
	KR6_WIDEN(KR6_LOW); \
	QR_TRANSPOSE_TO(256, 288, 608, 640, 1664, 1696, 2016, 2048); \
	KR6_WIDEN(KR6_HIGH); \
	QR_TRANSPOSE_TO(960, 992, 1312, 1344, 2368, 2400, 2720, 2752); \
	KR6_WIDEN(KR6_NONE); \
	QR_TRANSPOSE_TO(320, 672, 1024, 1376, 1728, 2080, 2432, 2784)

// RK6_BLOCK writes the q6_K panel of a super-block of the eight rows.
#define RK6_BLOCK \
	KR6_SCALES; \
	KR6_SUB(KR_LO, 0, 128, 0); \
	KR6_SUB(KR_LO, 32, 128, 2); \
	KR6_SUB(KR_HI, 0, 128, 4); \
	KR6_SUB(KR_HI, 32, 128, 6); \
	KR6_SUB(KR_LO, 64, 160, 0); \
	KR6_SUB(KR_LO, 96, 160, 2); \
	KR6_SUB(KR_HI, 64, 160, 4); \
	KR6_SUB(KR_HI, 96, 160, 6); \
	QR_SCALES_AT(208, 0); \
	ADDQ $32, DI; \
	ADDQ $210, SI

// func repackQ6_KAVX2(panel, w *byte, ld, nb int)
//
// Writes the q6_K panel of the eight rows w + r*ld (see RepackQ6_K).
TEXT ·repackQ6_KAVX2(SB), NOSPLIT, $0-32
	QR_ARGS
	VPADDB   Y15, Y15, Y14
	VPOR     Y15, Y14, Y14
	QR_BLOCKS(RK6_BLOCK, rk6loop, rk6done)
