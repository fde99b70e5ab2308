//go:build amd64 && !purego

#include "textflag.h"

// VNNI forms of the panel kernels of qgemm_amd64.s (same panels, same
// packed groups, same outputs): each weight vector's four-product int32
// sums come from one VPDPBUSD instead of VPMADDUBSW, VPMADDWD and VPADDD.
// The int32 block sums are exact in both, so the float32 steps, which
// are the AVX2 kernels' (per block and column one FMA of the block sum
// with d_x*d_y, and for q4_1 and q5_1 a second of m_x with s_y), give the
// same outputs bit for bit (twin: Twin). With no int16 partial sums to
// keep in range, the q4_0 and q5_0 kernels are one (qgemmQ4_0VNNI), and
// so are the q4_1 and q5_1 ones (qgemmQ4_1VNNI).
//
// Registers: SI walks the panel, DI the packed group, CX counts blocks,
// DX points at the 32 outputs. Y16-Y19 accumulate columns 0-3, Y20-Y27
// hold the block's eight weight vectors (or their magnitudes), Y0-Y15
// are scratch (VPSIGNB, which has no EVEX form, takes them).

#define QP_D 256
#define QP_CORR 288

// QV_SETUP loads the accumulators from (DX).
#define QV_SETUP \
	VMOVUPS 0(DX), Y16; \
	VMOVUPS 32(DX), Y17; \
	VMOVUPS 64(DX), Y18; \
	VMOVUPS 96(DX), Y19

// QV_STORE stores the four columns' accumulators at (DX).
#define QV_STORE \
	VMOVUPS Y16, 0(DX); \
	VMOVUPS Y17, 32(DX); \
	VMOVUPS Y18, 64(DX); \
	VMOVUPS Y19, 96(DX)

// QV_LOADW loads the block's eight weight vectors into Y20-Y27.
#define QV_LOADW \
	VMOVDQU32 0(SI), Y20; \
	VMOVDQU32 32(SI), Y21; \
	VMOVDQU32 64(SI), Y22; \
	VMOVDQU32 96(SI), Y23; \
	VMOVDQU32 128(SI), Y24; \
	VMOVDQU32 160(SI), Y25; \
	VMOVDQU32 192(SI), Y26; \
	VMOVDQU32 224(SI), Y27

// QV_SCALE(COL, ACC): Y0 holds the eight rows' int32 block sums of
// column COL: ACC += float32(Y0) * (d_x * d_y[COL]).
#define QV_SCALE(COL, ACC) \
	VCVTDQ2PS Y0, Y0; \
	VBROADCASTSS 4*COL(DI), Y1; \
	VMULPS QP_D(SI), Y1, Y1; \
	VFMADD231PS Y1, Y0, ACC

// QV_UDOT(COL, J, T, SUM): SUM (int32) += VPDPBUSD(the four biased
// activation codes J of column COL broadcast, unsigned; weight vector
// J, signed); T is scratch.
#define QV_UDOT(COL, J, W, T, SUM) \
	VPBROADCASTD 16+32*COL+4*J(DI), T; \
	VPDPBUSD W, T, SUM

// QV_Q4COL(COL, ACC): one column of a q4_0 or q5_0 block: two chains of
// four vectors, the first starting from the negated corrections (Y15),
// so that the sum is sum(w*u) - 128*sum(w), exactly the AVX2 kernels'.
#define QV_Q4COL(COL, ACC) \
	VMOVDQA Y15, Y0; \
	VPXOR Y2, Y2, Y2; \
	QV_UDOT(COL, 0, Y20, Y3, Y0); \
	QV_UDOT(COL, 1, Y21, Y4, Y2); \
	QV_UDOT(COL, 2, Y22, Y5, Y0); \
	QV_UDOT(COL, 3, Y23, Y6, Y2); \
	QV_UDOT(COL, 4, Y24, Y7, Y0); \
	QV_UDOT(COL, 5, Y25, Y8, Y2); \
	QV_UDOT(COL, 6, Y26, Y9, Y0); \
	QV_UDOT(COL, 7, Y27, Y10, Y2); \
	VPADDD Y2, Y0, Y0; \
	QV_SCALE(COL, ACC)

// func qgemmQ4_0VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of panel row r with group column c, for
// a q4_0 or q5_0 panel (320 bytes per block) and a biased packed group
// (144 bytes per block). Twin: Twin.
TEXT ·qgemmQ4_0VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QV_SETUP
	TESTQ CX, CX
	JEQ   v40done

v40loop:
	QV_LOADW
	VPXOR  Y15, Y15, Y15
	VPSUBD QP_CORR(SI), Y15, Y15
	QV_Q4COL(0, Y16)
	QV_Q4COL(1, Y17)
	QV_Q4COL(2, Y18)
	QV_Q4COL(3, Y19)
	ADDQ $320, SI
	ADDQ $144, DI
	DECQ CX
	JNE  v40loop

v40done:
	QV_STORE
	VZEROUPPER
	RET

// QV_SDOT(COL, J, W, T, SUM): with |w| of vector J in W: SUM (int32) +=
// VPDPBUSD(|w|, y*sign(w)), y the four signed codes J of column COL
// broadcast, its sign flipped by VPSIGNB as in the AVX2 kernel (-(-128)
// wraps to -128; the twin does the same). T (Y0-Y15) is scratch.
#define QV_SDOT(COL, J, W, T, SUM) \
	VPBROADCASTD 16+32*COL+4*J(DI), T; \
	VPSIGNB 32*J(SI), T, T; \
	VPDPBUSD T, W, SUM

// QV_Q8COL(COL, ACC): one column of a q8_0 block, in two chains of four.
#define QV_Q8COL(COL, ACC) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y2, Y2, Y2; \
	QV_SDOT(COL, 0, Y20, Y3, Y0); \
	QV_SDOT(COL, 1, Y21, Y4, Y2); \
	QV_SDOT(COL, 2, Y22, Y5, Y0); \
	QV_SDOT(COL, 3, Y23, Y6, Y2); \
	QV_SDOT(COL, 4, Y24, Y7, Y0); \
	QV_SDOT(COL, 5, Y25, Y8, Y2); \
	QV_SDOT(COL, 6, Y26, Y9, Y0); \
	QV_SDOT(COL, 7, Y27, Y10, Y2); \
	VPADDD Y2, Y0, Y0; \
	QV_SCALE(COL, ACC)

// func qgemmQ8_0VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// qgemmQ4_0VNNI for a q8_0 panel (288 bytes per block) and a signed
// packed group. Twin: Twin.
TEXT ·qgemmQ8_0VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QV_SETUP
	TESTQ CX, CX
	JEQ   v80done

v80loop:
	VPABSB 0(SI), Y20
	VPABSB 32(SI), Y21
	VPABSB 64(SI), Y22
	VPABSB 96(SI), Y23
	VPABSB 128(SI), Y24
	VPABSB 160(SI), Y25
	VPABSB 192(SI), Y26
	VPABSB 224(SI), Y27
	QV_Q8COL(0, Y16)
	QV_Q8COL(1, Y17)
	QV_Q8COL(2, Y18)
	QV_Q8COL(3, Y19)
	ADDQ $288, SI
	ADDQ $144, DI
	DECQ CX
	JNE  v80loop

v80done:
	QV_STORE
	VZEROUPPER
	RET

// QV_MDOT(COL, J, W, SUM): SUM (int32) += VPDPBUSD(unsigned weight codes
// W of vector J, the four signed codes J of column COL of a q8_1 group,
// broadcast by the instruction).
#define QV_MDOT(COL, J, W, SUM) \
	VPDPBUSD.BCST 32+32*COL+4*J(DI), W, SUM

// QV_Q41COL(COL, ACC): one column of a q4_1 or q5_1 block: the int32
// sum in two chains, then ACC += float32(isum) * (d_x*d_y[COL]) and ACC
// += m_x * s_y[COL], as the AVX2 kernel.
#define QV_Q41COL(COL, ACC) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y2, Y2, Y2; \
	QV_MDOT(COL, 0, Y20, Y0); \
	QV_MDOT(COL, 1, Y21, Y2); \
	QV_MDOT(COL, 2, Y22, Y0); \
	QV_MDOT(COL, 3, Y23, Y2); \
	QV_MDOT(COL, 4, Y24, Y0); \
	QV_MDOT(COL, 5, Y25, Y2); \
	QV_MDOT(COL, 6, Y26, Y0); \
	QV_MDOT(COL, 7, Y27, Y2); \
	VPADDD Y2, Y0, Y0; \
	VCVTDQ2PS Y0, Y0; \
	VBROADCASTSS 4*COL(DI), Y1; \
	VMULPS QP_D(SI), Y1, Y1; \
	VFMADD231PS Y1, Y0, ACC; \
	VBROADCASTSS 16+4*COL(DI), Y1; \
	VFMADD231PS QP_CORR(SI), Y1, ACC

// func qgemmQ4_1VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of q4_1 or q5_1 panel row r with column c
// of the packed q8_1 group grp (160 bytes per block). Twin: Twin.
TEXT ·qgemmQ4_1VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QV_SETUP
	TESTQ CX, CX
	JEQ   v41done

v41loop:
	QV_LOADW
	QV_Q41COL(0, Y16)
	QV_Q41COL(1, Y17)
	QV_Q41COL(2, Y18)
	QV_Q41COL(3, Y19)
	ADDQ $320, SI
	ADDQ $160, DI
	DECQ CX
	JNE  v41loop

v41done:
	QV_STORE
	VZEROUPPER
	RET
