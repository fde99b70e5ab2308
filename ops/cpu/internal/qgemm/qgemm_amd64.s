//go:build amd64 && !purego

#include "textflag.h"
#include "panel_amd64.h"

// Panel kernels of the quantized gemm path (qgemm.go): eight weight rows
// by four activation rows per call. The weights come repacked in a panel
// with the rows in the lanes: per 32-element block, vector j (32 bytes)
// holds elements 4j..4j+3 of rows 0..7 (row r in bytes 4r..4r+3), so one
// VPMADDUBSW of vector j with four activation codes broadcast to every
// lane yields, per row, two int16 sums of two products each, and the
// eight rows' block sums build up lane by lane with no horizontal
// reduction. Eight float32 accumulators lanes = rows, one register per
// activation column; per block and column each lane gets one FMA of its
// exact int32 block sum with d_x*d_y (see qgemmTwin).
//
// Registers: SI walks the panel, DI the packed activation group, CX
// counts blocks, DX points at the 32 outputs (column c's eight rows at
// 32c), which the kernels load first and accumulate into, so that k can
// be cut into chunks. Y0-Y3 accumulate columns 0-3, Y4-Y11 hold the
// block's eight weight vectors (or their magnitudes), Y12-Y14 are
// scratch, Y15 holds int16 ones.

// QT_UCHAIN4(COL, J0, W0, W1, W2, W3, ACC): ACC (int16) = the sums over
// vectors J0..J0+3 of VPMADDUBSW(biased activation codes of column COL,
// signed weight codes W); clobbers Y12. Each int16 lane sums at most
// eight products |w| <= 16, u <= 255: 32640 at most, exact.
#define QT_UCHAIN4(COL, J0, W0, W1, W2, W3, ACC) \
	VPBROADCASTD 16+32*COL+4*J0(DI), ACC; \
	VPMADDUBSW W0, ACC, ACC; \
	VPBROADCASTD 16+32*COL+4*J0+4(DI), Y12; \
	VPMADDUBSW W1, Y12, Y12; \
	VPADDW Y12, ACC, ACC; \
	VPBROADCASTD 16+32*COL+4*J0+8(DI), Y12; \
	VPMADDUBSW W2, Y12, Y12; \
	VPADDW Y12, ACC, ACC; \
	VPBROADCASTD 16+32*COL+4*J0+12(DI), Y12; \
	VPMADDUBSW W3, Y12, Y12; \
	VPADDW Y12, ACC, ACC

// QT_SCALE(COL, ACC): Y14 holds the eight rows' int32 block sums of
// column COL: ACC += float32(Y14) * (d_x * d_y[COL]).
#define QT_SCALE(COL, ACC) \
	VCVTDQ2PS Y14, Y14; \
	VBROADCASTSS 4*COL(DI), Y12; \
	VMULPS QP_D(SI), Y12, Y12; \
	VFMADD231PS Y12, Y14, ACC

// QT_Q4COL(COL, ACC): one column of a q4_0 block: weight codes q-8 in
// [-8, 7], so the int16 sums of all eight vectors fit (see QT_UCHAIN4);
// two chains of four halve the dependency chain. Then the lanes' int32
// sums less the bias term.
#define QT_Q4COL(COL, ACC) \
	QT_UCHAIN4(COL, 0, Y4, Y5, Y6, Y7, Y14); \
	QT_UCHAIN4(COL, 4, Y8, Y9, Y10, Y11, Y13); \
	VPADDW Y13, Y14, Y14; \
	VPMADDWD Y15, Y14, Y14; \
	VPSUBD QP_CORR(SI), Y14, Y14; \
	QT_SCALE(COL, ACC)

// QT_Q5COL(COL, ACC): one column of a q5_0 block: codes q-16 in
// [-16, 15] overflow an int16 chain of eight vectors, so two chains of
// four, widened and added.
#define QT_Q5COL(COL, ACC) \
	QT_UCHAIN4(COL, 0, Y4, Y5, Y6, Y7, Y14); \
	QT_UCHAIN4(COL, 4, Y8, Y9, Y10, Y11, Y13); \
	VPMADDWD Y15, Y14, Y14; \
	VPMADDWD Y15, Y13, Y13; \
	VPADDD Y13, Y14, Y14; \
	VPSUBD QP_CORR(SI), Y14, Y14; \
	QT_SCALE(COL, ACC)

// QT_LOADW loads the block's eight weight vectors into Y4-Y11.
#define QT_LOADW \
	VMOVDQU 0(SI), Y4; \
	VMOVDQU 32(SI), Y5; \
	VMOVDQU 64(SI), Y6; \
	VMOVDQU 96(SI), Y7; \
	VMOVDQU 128(SI), Y8; \
	VMOVDQU 160(SI), Y9; \
	VMOVDQU 192(SI), Y10; \
	VMOVDQU 224(SI), Y11

// QT_SETUP loads the int16 ones and the accumulators from (DX), so that
// a product over k can run in chunks.
#define QT_SETUP \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW   $15, Y15, Y15; \
	VMOVUPS  0(DX), Y0; \
	VMOVUPS  32(DX), Y1; \
	VMOVUPS  64(DX), Y2; \
	VMOVUPS  96(DX), Y3

// QT_STORE stores the four columns' accumulators at (DX).
#define QT_STORE \
	VMOVUPS Y0, 0(DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, 64(DX); \
	VMOVUPS Y3, 96(DX)

// func qgemmQ4_0AVX2(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of panel row r with group column c. Twin: qgemmTwin of a q4_0 panel (320 bytes per block) with a biased
// packed group (144 bytes per block).
TEXT ·qgemmQ4_0AVX2(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QT_SETUP
	TESTQ CX, CX
	JEQ   q40done

q40loop:
	QT_LOADW
	QT_Q4COL(0, Y0)
	QT_Q4COL(1, Y1)
	QT_Q4COL(2, Y2)
	QT_Q4COL(3, Y3)
	ADDQ $320, SI
	ADDQ $144, DI
	DECQ CX
	JNE  q40loop

q40done:
	QT_STORE
	VZEROUPPER
	RET

// func qgemmQ5_0AVX2(panel, grp *byte, nb int, out *[32]float32)
//
// Twin: qgemmTwin of a q5_0 panel (320 bytes per block) with a biased
// packed group.
TEXT ·qgemmQ5_0AVX2(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QT_SETUP
	TESTQ CX, CX
	JEQ   q50done

q50loop:
	QT_LOADW
	QT_Q5COL(0, Y0)
	QT_Q5COL(1, Y1)
	QT_Q5COL(2, Y2)
	QT_Q5COL(3, Y3)
	ADDQ $320, SI
	ADDQ $144, DI
	DECQ CX
	JNE  q50loop

q50done:
	QT_STORE
	VZEROUPPER
	RET

// QT_SVEC(COL, J, ACC): with |w| of vector J in register WA: ACC (int32)
// += VPMADDWD(VPMADDUBSW(|w|, y*sign(w)), ones), y the four signed codes
// J of column COL broadcast. Clobbers Y12.
#define QT_SVEC(COL, J, WA, ACC) \
	VPBROADCASTD 16+32*COL+4*J(DI), Y12; \
	VPSIGNB 32*J(SI), Y12, Y12; \
	VPMADDUBSW Y12, WA, Y12; \
	VPMADDWD Y15, Y12, Y12; \
	VPADDD Y12, ACC, ACC

// QT_Q8COL(COL, ACC): one column of a q8_0 block: the sign trick per
// vector (pair sums reach 32512, so every vector is widened to int32).
#define QT_Q8COL(COL, ACC) \
	VPBROADCASTD 16+32*COL(DI), Y14; \
	VPSIGNB 0(SI), Y14, Y14; \
	VPMADDUBSW Y14, Y4, Y14; \
	VPMADDWD Y15, Y14, Y14; \
	QT_SVEC(COL, 1, Y5, Y14); \
	QT_SVEC(COL, 2, Y6, Y14); \
	QT_SVEC(COL, 3, Y7, Y14); \
	QT_SVEC(COL, 4, Y8, Y14); \
	QT_SVEC(COL, 5, Y9, Y14); \
	QT_SVEC(COL, 6, Y10, Y14); \
	QT_SVEC(COL, 7, Y11, Y14); \
	QT_SCALE(COL, ACC)

// func qgemmQ8_0AVX2(panel, grp *byte, nb int, out *[32]float32)
//
// Twin: qgemmTwin of a q8_0 panel (288 bytes per block) with a signed
// packed group (144 bytes per block).
TEXT ·qgemmQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QT_SETUP
	TESTQ CX, CX
	JEQ   q80done

q80loop:
	VPABSB 0(SI), Y4
	VPABSB 32(SI), Y5
	VPABSB 64(SI), Y6
	VPABSB 96(SI), Y7
	VPABSB 128(SI), Y8
	VPABSB 160(SI), Y9
	VPABSB 192(SI), Y10
	VPABSB 224(SI), Y11
	QT_Q8COL(0, Y0)
	QT_Q8COL(1, Y1)
	QT_Q8COL(2, Y2)
	QT_Q8COL(3, Y3)
	ADDQ $288, SI
	ADDQ $144, DI
	DECQ CX
	JNE  q80loop

q80done:
	QT_STORE
	VZEROUPPER
	RET

// Kernels of the q4_1 and q5_1 panels against packed q8_1 groups (per
// block the four d_y and the four s_y as float32, then the four columns'
// codes: 160 bytes). The panel holds the unsigned codes q, the rows' d_x
// and, at QP_CORR, their m_x as float32; the codes are VPMADDUBSW's
// unsigned operand, the broadcast signed activation codes the other, and
// no correction is needed. Per block and column: ACC = fma(float32(isum),
// d_x*d_y, ACC), then ACC = fma(m_x, s_y, ACC).

// QS_CHAIN4(COL, J0, W0, W1, W2, W3, ACC): ACC (int16) = the sums over
// vectors J0..J0+3 of VPMADDUBSW(unsigned weight codes W, signed codes of
// column COL); clobbers Y12.
#define QS_CHAIN4(COL, J0, W0, W1, W2, W3, ACC) \
	VPBROADCASTD 32+32*COL+4*J0(DI), ACC; \
	VPMADDUBSW ACC, W0, ACC; \
	VPBROADCASTD 32+32*COL+4*J0+4(DI), Y12; \
	VPMADDUBSW Y12, W1, Y12; \
	VPADDW Y12, ACC, ACC; \
	VPBROADCASTD 32+32*COL+4*J0+8(DI), Y12; \
	VPMADDUBSW Y12, W2, Y12; \
	VPADDW Y12, ACC, ACC; \
	VPBROADCASTD 32+32*COL+4*J0+12(DI), Y12; \
	VPMADDUBSW Y12, W3, Y12; \
	VPADDW Y12, ACC, ACC

// QS_SCALE(COL, ACC): Y14 holds the int32 block sums of column COL: ACC
// += float32(Y14) * (d_x*d_y[COL]), then ACC += m_x * s_y[COL].
#define QS_SCALE(COL, ACC) \
	VCVTDQ2PS Y14, Y14; \
	VBROADCASTSS 4*COL(DI), Y12; \
	VMULPS QP_D(SI), Y12, Y12; \
	VFMADD231PS Y12, Y14, ACC; \
	VBROADCASTSS 16+4*COL(DI), Y12; \
	VFMADD231PS QP_CORR(SI), Y12, ACC

// QS_Q4COL(COL, ACC): one column of a q4_1 block: codes 0..15, products
// at most 15*128, so the int16 sums of all eight vectors fit.
#define QS_Q4COL(COL, ACC) \
	QS_CHAIN4(COL, 0, Y4, Y5, Y6, Y7, Y14); \
	QS_CHAIN4(COL, 4, Y8, Y9, Y10, Y11, Y13); \
	VPADDW Y13, Y14, Y14; \
	VPMADDWD Y15, Y14, Y14; \
	QS_SCALE(COL, ACC)

// QS_Q5COL(COL, ACC): one column of a q5_1 block: codes 0..31, two
// chains of four widened separately.
#define QS_Q5COL(COL, ACC) \
	QS_CHAIN4(COL, 0, Y4, Y5, Y6, Y7, Y14); \
	QS_CHAIN4(COL, 4, Y8, Y9, Y10, Y11, Y13); \
	VPMADDWD Y15, Y14, Y14; \
	VPMADDWD Y15, Y13, Y13; \
	VPADDD Y13, Y14, Y14; \
	QS_SCALE(COL, ACC)

// func qgemmQ4_1AVX2(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of q4_1 panel row r with column c of the
// packed q8_1 group grp. Twin: qgemmTwin.
TEXT ·qgemmQ4_1AVX2(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QT_SETUP
	TESTQ CX, CX
	JEQ   q41done

q41loop:
	QT_LOADW
	QS_Q4COL(0, Y0)
	QS_Q4COL(1, Y1)
	QS_Q4COL(2, Y2)
	QS_Q4COL(3, Y3)
	ADDQ $320, SI
	ADDQ $160, DI
	DECQ CX
	JNE  q41loop

q41done:
	QT_STORE
	VZEROUPPER
	RET

// func qgemmQ5_1AVX2(panel, grp *byte, nb int, out *[32]float32)
//
// qgemmQ4_1AVX2 for a q5_1 panel. Twin: qgemmTwin.
TEXT ·qgemmQ5_1AVX2(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QT_SETUP
	TESTQ CX, CX
	JEQ   q51done

q51loop:
	QT_LOADW
	QS_Q5COL(0, Y0)
	QS_Q5COL(1, Y1)
	QS_Q5COL(2, Y2)
	QS_Q5COL(3, Y3)
	ADDQ $320, SI
	ADDQ $160, DI
	DECQ CX
	JNE  q51loop

q51done:
	QT_STORE
	VZEROUPPER
	RET
