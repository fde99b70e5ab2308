//go:build amd64 && !purego

#include "textflag.h"

// VNNI forms of the panel kernels of qgemm_amd64.s (same panels, same
// packed groups, same outputs): the four-product int32 sums of a weight
// vector come from one VPDPBUSD instead of VPMADDUBSW, VPMADDWD and
// VPADDD. The int32 block sums are exact in both, so the float32 steps,
// which are the AVX2 kernels' (per block and column one FMA of the block
// sum with d_x*d_y, and for q4_1 and q5_1 a second of m_x with s_y),
// give the same outputs bit for bit (twin: Twin). With no int16 partial
// sums to keep in range, the q4_0 and q5_0 kernels are one
// (qgemmQ4_0VNNI), and so are the q4_1 and q5_1 ones (qgemmQ4_1VNNI).
//
// Each zmm register holds two activation columns (lanes 0-7 column 2p,
// rows 0-7; lanes 8-15 column 2p+1), so one VPDPBUSD covers two columns:
// the weight vectors are broadcast to both halves, the activation dwords
// come from one 64-byte load of the column pair, its 128-bit lanes
// rearranged by VSHUFI64X2 (one register with each column's dwords 0-3
// twice in its half, one with dwords 4-7) and spread by VPSHUFD. The
// outputs of a pair are 16 consecutive float32, one register. (On ymm
// registers, one column each with broadcast activation dwords, VPDPBUSD
// measured hardly faster than the AVX2 kernels; these about twice as
// fast, BenchmarkQTileKernelVNNI.)
//
// Registers: SI walks the panel, DI the packed group, CX counts blocks,
// DX points at the 32 outputs; Z16, Z17 accumulate column pairs 0 and 1;
// Z20-Z27 hold the weight vectors (broadcast); Z28 the negated
// corrections (q4_0, q5_0, q8_0) or m_x (q4_1, q5_1), Z29 d_x, both
// halves;
// Z30, Z31 VPERMPS indexes spreading d_y of columns 0, 1 (2, 3) over the
// halves; Z15 zero; Z0-Z14 scratch.

#define QP_D 256
#define QP_CORR 288

// qdyidx: dword indexes 0 (x8), 1 (x8), then 2 (x8), 3 (x8).
DATA qdyidx<>+0(SB)/8, $0x0000000000000000
DATA qdyidx<>+8(SB)/8, $0x0000000000000000
DATA qdyidx<>+16(SB)/8, $0x0000000000000000
DATA qdyidx<>+24(SB)/8, $0x0000000000000000
DATA qdyidx<>+32(SB)/8, $0x0000000100000001
DATA qdyidx<>+40(SB)/8, $0x0000000100000001
DATA qdyidx<>+48(SB)/8, $0x0000000100000001
DATA qdyidx<>+56(SB)/8, $0x0000000100000001
DATA qdyidx<>+64(SB)/8, $0x0000000200000002
DATA qdyidx<>+72(SB)/8, $0x0000000200000002
DATA qdyidx<>+80(SB)/8, $0x0000000200000002
DATA qdyidx<>+88(SB)/8, $0x0000000200000002
DATA qdyidx<>+96(SB)/8, $0x0000000300000003
DATA qdyidx<>+104(SB)/8, $0x0000000300000003
DATA qdyidx<>+112(SB)/8, $0x0000000300000003
DATA qdyidx<>+120(SB)/8, $0x0000000300000003
GLOBL qdyidx<>(SB), RODATA|NOPTR, $128

// QZ_SETUP loads the accumulators from (DX) and the constants.
#define QZ_SETUP \
	VMOVUPS 0(DX), Z16; \
	VMOVUPS 64(DX), Z17; \
	VMOVDQU32 qdyidx<>+0(SB), Z30; \
	VMOVDQU32 qdyidx<>+64(SB), Z31; \
	VPXORD Z15, Z15, Z15

// QZ_STORE stores the accumulators at (DX).
#define QZ_STORE \
	VMOVUPS Z16, 0(DX); \
	VMOVUPS Z17, 64(DX)

// QZ_LOADW broadcasts the block's eight weight vectors into Z20-Z27.
#define QZ_LOADW \
	VBROADCASTI64X4 0(SI), Z20; \
	VBROADCASTI64X4 32(SI), Z21; \
	VBROADCASTI64X4 64(SI), Z22; \
	VBROADCASTI64X4 96(SI), Z23; \
	VBROADCASTI64X4 128(SI), Z24; \
	VBROADCASTI64X4 160(SI), Z25; \
	VBROADCASTI64X4 192(SI), Z26; \
	VBROADCASTI64X4 224(SI), Z27

// QZ_ACTS(SRC): Z1 (Z2) = the codes of the column pair in SRC (a
// register, or memory loaded into Z0) with each half's 128-bit lanes
// holding its column's dwords 0-3 (4-7).
#define QZ_ACTS(SRC) \
	VMOVDQU32 SRC, Z0; \
	VSHUFI64X2 $0xa0, Z0, Z0, Z1; \
	VSHUFI64X2 $0xf5, Z0, Z0, Z2

// QZ_UDOT(SRC, IMM, W, T, SUM): SUM += VPDPBUSD(the activation dword
// picked by IMM from SRC, unsigned; weights W, signed).
#define QZ_UDOT(SRC, IMM, W, T, SUM) \
	VPSHUFD $IMM, SRC, T; \
	VPDPBUSD W, T, SUM

// QZ_SCALE(IDX, ACC): Z11 holds the int32 block sums of a column pair:
// ACC += float32(Z11) * (d_x * d_y), d_y of the pair's columns spread
// over the halves by VPERMPS with IDX.
#define QZ_SCALE(IDX, ACC) \
	VCVTDQ2PS Z11, Z11; \
	VPERMPS 0(DI), IDX, Z13; \
	VMULPS Z29, Z13, Z13; \
	VFMADD231PS Z13, Z11, ACC

// QZ_UCHAIN(IDX, ACC): with the unsigned activation dwords of a column
// pair in Z1, Z2 (QZ_ACTS) and the negated corrections in Z28: the pair's
// block sums sum(w*u) - 128*sum(w) in two chains of four vectors, then
// ACC += float32(sum) * (d_x*d_y) (QZ_SCALE).
#define QZ_UCHAIN(IDX, ACC) \
	VMOVDQA32 Z28, Z11; \
	VPXORD Z12, Z12, Z12; \
	QZ_UDOT(Z1, 0x00, Z20, Z3, Z11); \
	QZ_UDOT(Z1, 0x55, Z21, Z4, Z12); \
	QZ_UDOT(Z1, 0xaa, Z22, Z5, Z11); \
	QZ_UDOT(Z1, 0xff, Z23, Z6, Z12); \
	QZ_UDOT(Z2, 0x00, Z24, Z7, Z11); \
	QZ_UDOT(Z2, 0x55, Z25, Z8, Z12); \
	QZ_UDOT(Z2, 0xaa, Z26, Z9, Z11); \
	QZ_UDOT(Z2, 0xff, Z27, Z10, Z12); \
	VPADDD Z12, Z11, Z11; \
	QZ_SCALE(IDX, ACC)

// func qgemmQ4_0VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of panel row r with group column c, for
// a q4_0 or q5_0 panel (320 bytes per block) and a biased packed group
// (144 bytes per block): per pair, the sum starts from the negated
// corrections, so that it is sum(w*u) - 128*sum(w), the AVX2 kernels'.
// Twin: Twin.
TEXT ·qgemmQ4_0VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QZ_SETUP
	TESTQ CX, CX
	JEQ   z40done

z40loop:
	QZ_LOADW
	VBROADCASTI64X4 QP_CORR(SI), Z28
	VPSUBD Z28, Z15, Z28
	VBROADCASTF64X4 QP_D(SI), Z29
	QZ_ACTS(16(DI))
	QZ_UCHAIN(Z30, Z16)
	QZ_ACTS(80(DI))
	QZ_UCHAIN(Z31, Z17)
	ADDQ $320, SI
	ADDQ $144, DI
	DECQ CX
	JNE  z40loop

z40done:
	QZ_STORE
	VZEROUPPER
	RET

// q80bytes: the byte 0x80 (the bias 128, and -128 as a code) four times.
DATA q80bytes<>+0(SB)/4, $0x80808080
GLOBL q80bytes<>(SB), RODATA|NOPTR, $4

// QZ_SDOT(SRC, IMM, W, K, T, SUM): SUM += VPDPBUSD(|w| in W, the
// activation dword picked by IMM from SRC with its sign flipped in the
// lanes K marks (w < 0): 0 - y, which wraps -128 to -128 as VPSIGNB).
#define QZ_SDOT(SRC, IMM, W, K, T, SUM) \
	VPSHUFD $IMM, SRC, T; \
	VPSUBB T, Z15, K, T; \
	VPDPBUSD T, W, SUM

// QZ_Q8VEC(J, IMM, W, K, SRC0, SRC1, S0, S1): vector J of a q8_0 block
// for both column pairs: W = |w| broadcast, K its sign mask, the
// activation dwords picked by IMM from SRC0 (pair 0) and SRC1 (pair 1),
// summed into S0 and S1.
#define QZ_Q8VEC(J, IMM, W, K, SRC0, SRC1, S0, S1) \
	VBROADCASTI64X4 32*J(SI), W; \
	VPMOVB2M W, K; \
	VPABSB W, W; \
	QZ_SDOT(SRC0, IMM, W, K, Z5, S0); \
	QZ_SDOT(SRC1, IMM, W, K, Z6, S1)

// QZ_MDOT(SRC, IMM, W, T, SUM): SUM += VPDPBUSD(unsigned weight codes W,
// the signed activation dword picked by IMM from SRC).
#define QZ_MDOT(SRC, IMM, W, T, SUM) \
	VPSHUFD $IMM, SRC, T; \
	VPDPBUSD T, W, SUM

// QZ_Q41PAIR(P, IDX, ACC): column pair P of a q4_1 or q5_1 block
// against a packed q8_1 group: ACC += float32(isum) * (d_x*d_y), then
// ACC += m_x * s_y (Z28 holds m_x).
#define QZ_Q41PAIR(P, IDX, ACC) \
	VMOVDQU32 32+64*P(DI), Z0; \
	VSHUFI64X2 $0xa0, Z0, Z0, Z1; \
	VSHUFI64X2 $0xf5, Z0, Z0, Z2; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	QZ_MDOT(Z1, 0x00, Z20, Z3, Z11); \
	QZ_MDOT(Z1, 0x55, Z21, Z4, Z12); \
	QZ_MDOT(Z1, 0xaa, Z22, Z5, Z11); \
	QZ_MDOT(Z1, 0xff, Z23, Z6, Z12); \
	QZ_MDOT(Z2, 0x00, Z24, Z7, Z11); \
	QZ_MDOT(Z2, 0x55, Z25, Z8, Z12); \
	QZ_MDOT(Z2, 0xaa, Z26, Z9, Z11); \
	QZ_MDOT(Z2, 0xff, Z27, Z10, Z12); \
	VPADDD Z12, Z11, Z11; \
	VCVTDQ2PS Z11, Z11; \
	VPERMPS 0(DI), IDX, Z13; \
	VMULPS Z29, Z13, Z13; \
	VFMADD231PS Z13, Z11, ACC; \
	VPERMPS 16(DI), IDX, Z14; \
	VFMADD231PS Z28, Z14, ACC

// func qgemmQ4_1VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// out[8c+r] += the dot product of q4_1 or q5_1 panel row r with column c
// of the packed q8_1 group grp (160 bytes per block). Twin: Twin.
TEXT ·qgemmQ4_1VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QZ_SETUP
	TESTQ CX, CX
	JEQ   z41done

z41loop:
	QZ_LOADW
	VBROADCASTF64X4 QP_CORR(SI), Z28
	VBROADCASTF64X4 QP_D(SI), Z29
	QZ_Q41PAIR(0, Z30, Z16)
	QZ_Q41PAIR(1, Z31, Z17)
	ADDQ $320, SI
	ADDQ $160, DI
	DECQ CX
	JNE  z41loop

z41done:
	QZ_STORE
	VZEROUPPER
	RET

// func qgemmQ8_0VNNI(panel, grp *byte, nb int, out *[32]float32)
//
// qgemmQ4_0VNNI for a q8_0 panel (288 bytes per block) and a signed
// packed group. The twin's sum is the AVX2 kernel's sign trick,
// sum(|w| * (y*sign(w))), which is sum(w*y) except where y = -128 meets w
// < 0 (-(-128) wraps to -128). So a block whose activation codes hold no
// -128 (quantized activations never do) takes the q4_0 kernel's path:
// the codes biased here (u = y+128), the corrections 128*sum(w) computed
// here (VPDPBUSD of 128 with the weights, two vectors per zmm, the
// halves folded), sum(w*u) - 128*sum(w) = sum(w*y). A block with a -128
// takes the sign trick itself (z80slow): per weight vector its
// magnitudes and sign mask (VPMOVB2M; VPSIGNB has no EVEX form), the
// activations negated under the mask (0 - y, wrapping as VPSIGNB), then
// VPDPBUSD. Z18 holds 0x80 bytes, Z0 and Z19 the two column pairs'
// codes. Twin: Twin.
TEXT ·qgemmQ8_0VNNI(SB), NOSPLIT, $0-32
	MOVQ  panel+0(FP), SI
	MOVQ  grp+8(FP), DI
	MOVQ  nb+16(FP), CX
	MOVQ  out+24(FP), DX
	QZ_SETUP
	VPBROADCASTD q80bytes<>(SB), Z18
	TESTQ CX, CX
	JEQ   z80done

z80loop:
	VMOVDQU32 16(DI), Z0
	VMOVDQU32 80(DI), Z19
	VPCMPEQB Z18, Z0, K2
	VPCMPEQB Z18, Z19, K3
	KORTESTQ K3, K2
	JNE z80slow
	VPXORD Z18, Z0, Z0
	VPXORD Z18, Z19, Z19
	QZ_LOADW
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPDPBUSD 0(SI), Z18, Z11
	VPDPBUSD 64(SI), Z18, Z12
	VPDPBUSD 128(SI), Z18, Z11
	VPDPBUSD 192(SI), Z18, Z12
	VPADDD Z12, Z11, Z11
	VSHUFI64X2 $0x4e, Z11, Z11, Z12
	VPADDD Z12, Z11, Z11
	VPSUBD Z11, Z15, Z28
	VBROADCASTF64X4 QP_D(SI), Z29
	QZ_ACTS(Z0)
	QZ_UCHAIN(Z30, Z16)
	QZ_ACTS(Z19)
	QZ_UCHAIN(Z31, Z17)

z80next:
	ADDQ $288, SI
	ADDQ $144, DI
	DECQ CX
	JNE  z80loop

z80done:
	QZ_STORE
	VZEROUPPER
	RET

z80slow:
	VSHUFI64X2 $0xa0, Z0, Z0, Z1
	VSHUFI64X2 $0xf5, Z0, Z0, Z2
	VSHUFI64X2 $0xa0, Z19, Z19, Z3
	VSHUFI64X2 $0xf5, Z19, Z19, Z4
	VBROADCASTF64X4 QP_D(SI), Z29
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	QZ_Q8VEC(0, 0x00, Z20, K1, Z1, Z3, Z11, Z13)
	QZ_Q8VEC(1, 0x55, Z21, K2, Z1, Z3, Z12, Z14)
	QZ_Q8VEC(2, 0xaa, Z22, K3, Z1, Z3, Z11, Z13)
	QZ_Q8VEC(3, 0xff, Z23, K4, Z1, Z3, Z12, Z14)
	QZ_Q8VEC(4, 0x00, Z24, K5, Z2, Z4, Z11, Z13)
	QZ_Q8VEC(5, 0x55, Z25, K6, Z2, Z4, Z12, Z14)
	QZ_Q8VEC(6, 0xaa, Z26, K7, Z2, Z4, Z11, Z13)
	QZ_Q8VEC(7, 0xff, Z27, K1, Z2, Z4, Z12, Z14)
	VPADDD Z12, Z11, Z11
	VPADDD Z14, Z13, Z13
	VCVTDQ2PS Z11, Z11
	VPERMPS 0(DI), Z30, Z7
	VMULPS Z29, Z7, Z7
	VFMADD231PS Z7, Z11, Z16
	VCVTDQ2PS Z13, Z13
	VPERMPS 0(DI), Z31, Z8
	VMULPS Z29, Z8, Z8
	VFMADD231PS Z8, Z13, Z17
	JMP z80next
