//go:build amd64 && !purego

#include "textflag.h"

// VNNI forms of the K-format panel kernels of kpanel_amd64.s (same
// panels, q8_K rows read in place, same outputs bit for bit; twins
// TwinQ4_K, TwinQ5_K, TwinQ6_K). Where the AVX2 kernels sum VPMADDUBSW's
// int16 pairs over a run of vectors and widen them with VPMADDWD and the
// scales, these sum a run's four-product int32 sums by VPDPBUSD and
// multiply by the scale (VPMULLD): the twins' int16 sums never saturate
// or wrap for codes in range (kq4.go, kq5.go, kq6.go), so both give the
// exact integer sc*sum(q*y), and all later integer steps are the AVX2
// kernels' (wrapping int32 adds and shifts); the float32 steps are
// theirs too. With no int16 runs to bound, the q4_K and q5_K kernels
// are one (q4KVNNI).
//
// As in qgemm_vnni_amd64.s, each zmm register holds two activation
// columns (lanes 0-7 column 2p, lanes 8-15 column 2p+1, rows in order):
// the weight vectors and per-row values broadcast to both halves, the
// activation dwords of a column pair from a 32-byte load of each column
// (VINSERTI64X4), VSHUFI64X2 and VPSHUFD, and a per-column value of the
// pair (bsums, d_y) by a broadcast and a broadcast into the high half
// under K1 (0xff00).
//
// Registers: SI walks the panel, R10 the super-blocks of activation row
// 0 (row c at R10 + c*R8, R9 = 3*R8), DI its codes and BX its bsums
// within a super-block, CX counts sub-blocks, DX super-blocks, AX points
// at the 32 outputs. Z16, Z17 accumulate the outputs of column pairs 0
// and 1, Z18, Z19 their int32 scaled sums, Z20, Z21 their min sums
// (q6_K: scale-times-bsum sums), Z22-Z29 hold a sub-block's weight
// vectors, Z30, Z31 and Z14 the sub-block's scales and mins; Z0-Z13
// scratch.

// KV_SETUP loads the arguments, K1 and the outputs.
#define KV_SETUP \
	MOVQ    nb+0(FP), DX; \
	MOVQ    panel+8(FP), SI; \
	MOVQ    y+16(FP), R10; \
	MOVQ    ldy+24(FP), R8; \
	MOVQ    out+32(FP), AX; \
	LEAQ    (R8)(R8*2), R9; \
	MOVL    $0xff00, R11; \
	KMOVW   R11, K1; \
	VMOVUPS 0(AX), Z16; \
	VMOVUPS 64(AX), Z17

// KV_SUPER starts a super-block: zero sums, DI and BX at row 0's codes
// and bsums, eight sub-blocks.
#define KV_SUPER \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	LEAQ   4(R10), DI; \
	LEAQ   260(R10), BX; \
	MOVQ   $8, CX

// KV_LOADW broadcasts the sub-block's eight weight vectors into Z22-Z29.
#define KV_LOADW \
	VBROADCASTI64X4 0(SI), Z22; \
	VBROADCASTI64X4 32(SI), Z23; \
	VBROADCASTI64X4 64(SI), Z24; \
	VBROADCASTI64X4 96(SI), Z25; \
	VBROADCASTI64X4 128(SI), Z26; \
	VBROADCASTI64X4 160(SI), Z27; \
	VBROADCASTI64X4 192(SI), Z28; \
	VBROADCASTI64X4 224(SI), Z29

// KV_SCALE(OFF, Z): Z = the rows' int16 scales at OFF(SI) (the low one
// of each pair, as the twins read them) as int32, both halves.
#define KV_SCALE(OFF, Z) \
	VBROADCASTI64X4 OFF(SI), Z; \
	VPSLLD $16, Z, Z; \
	VPSRAD $16, Z, Z

// KV_ACTS(A0, A1): Z1 (Z2) = the sub-block's codes of the column pair
// at A0 and A1, each half's 128-bit lanes holding its column's dwords 0-3
// (4-7).
#define KV_ACTS(A0, A1) \
	VMOVDQU      A0, Y0; \
	VINSERTI64X4 $1, A1, Z0, Z0; \
	VSHUFI64X2   $0xa0, Z0, Z0, Z1; \
	VSHUFI64X2   $0xf5, Z0, Z0, Z2

// KV_DOT(SRC, IMM, W, T, SUM): SUM += VPDPBUSD(unsigned weight codes W,
// the signed activation dword picked by IMM from SRC).
#define KV_DOT(SRC, IMM, W, T, SUM) \
	VPSHUFD  $IMM, SRC, T; \
	VPDPBUSD T, W, SUM

// KV_PAIRSUM(B0, B1, PAIRS, ACC): ACC += the pair's two bsums (at B0 and
// B1, one column each) times the rows' int16 pairs PAIRS, by VPDPWSSD
// (the AVX2 kernels' VPMADDWD and VPADDD).
#define KV_PAIRSUM(B0, B1, PAIRS, ACC) \
	VPBROADCASTD B0, Z3; \
	VPBROADCASTD B1, K1, Z3; \
	VPDPWSSD     Z3, PAIRS, ACC

// KV_Q4PAIR(A0, A1, B0, B1, ISUM, MSUM): one column pair of a q4_K or
// q5_K sub-block: ISUM += sc * sum(q*y) (two chains of four vectors),
// MSUM += m*bs0 + m*bs1. Z30 holds the scales, Z31 the mins.
#define KV_Q4PAIR(A0, A1, B0, B1, ISUM, MSUM) \
	KV_ACTS(A0, A1); \
	VPXORD  Z11, Z11, Z11; \
	VPXORD  Z12, Z12, Z12; \
	KV_DOT(Z1, 0x00, Z22, Z3, Z11); \
	KV_DOT(Z1, 0x55, Z23, Z4, Z12); \
	KV_DOT(Z1, 0xaa, Z24, Z5, Z11); \
	KV_DOT(Z1, 0xff, Z25, Z6, Z12); \
	KV_DOT(Z2, 0x00, Z26, Z7, Z11); \
	KV_DOT(Z2, 0x55, Z27, Z8, Z12); \
	KV_DOT(Z2, 0xaa, Z28, Z9, Z11); \
	KV_DOT(Z2, 0xff, Z29, Z10, Z12); \
	VPADDD  Z12, Z11, Z11; \
	VPMULLD Z30, Z11, Z11; \
	VPADDD  Z11, ISUM, ISUM; \
	KV_PAIRSUM(B0, B1, Z31, MSUM)

// KV_DY(Y0, Y1): Z4 = d_y of the column pair's super-blocks at Y0, Y1.
#define KV_DY(Y0, Y1) \
	VBROADCASTSS Y0, Z4; \
	VBROADCASTSS Y1, K1, Z4

// KV_Q4OUT(Y0, Y1, ISUM, MSUM, ACC): ACC += isum * (d_x*d_y), then -=
// msum * (dmin_x*d_y); Z12 holds d_x, Z13 dmin_x.
#define KV_Q4OUT(Y0, Y1, ISUM, MSUM, ACC) \
	VCVTDQ2PS    ISUM, ISUM; \
	VCVTDQ2PS    MSUM, MSUM; \
	KV_DY(Y0, Y1); \
	VMULPS       Z12, Z4, Z5; \
	VFMADD231PS  Z5, ISUM, ACC; \
	VMULPS       Z13, Z4, Z5; \
	VFNMADD231PS Z5, MSUM, ACC

// func q4KVNNI(nb int, panel, y *byte, ldy int, out *[32]float32)
//
// The q4_K and q5_K panel kernel (PanelQ4_K bytes per super-block).
TEXT ·q4KVNNI(SB), NOSPLIT, $0-40
	KV_SETUP
	TESTQ DX, DX
	JEQ   kv4done

kv4super:
	KV_SUPER

kv4sub:
	KV_LOADW
	KV_SCALE(256, Z30)
	VBROADCASTI64X4 288(SI), Z31
	KV_Q4PAIR((DI), (DI)(R8*1), (BX), (BX)(R8*1), Z18, Z20)
	KV_Q4PAIR((DI)(R8*2), (DI)(R9*1), (BX)(R8*2), (BX)(R9*1), Z19, Z21)
	ADDQ $320, SI
	ADDQ $32, DI
	ADDQ $4, BX
	DECQ CX
	JNE  kv4sub

	VBROADCASTF64X4 0(SI), Z12
	VBROADCASTF64X4 32(SI), Z13
	KV_Q4OUT((R10), (R10)(R8*1), Z18, Z20, Z16)
	KV_Q4OUT((R10)(R8*2), (R10)(R9*1), Z19, Z21, Z17)
	ADDQ $64, SI
	ADDQ $292, R10
	DECQ DX
	JNE  kv4super

kv4done:
	VMOVUPS Z16, 0(AX)
	VMOVUPS Z17, 64(AX)
	VZEROUPPER
	RET

// KV_Q6PAIR(A0, A1, B0, B1, ISUM, BSUM): one column pair of a q6_K
// sub-block: ISUM += sc_2s * sum over vectors 0-3 + sc_2s+1 * sum over
// vectors 4-7; BSUM += sa*bs0 + sb*bs1. Z30, Z31 hold the two groups'
// scales, Z14 the scale pairs.
#define KV_Q6PAIR(A0, A1, B0, B1, ISUM, BSUM) \
	KV_ACTS(A0, A1); \
	VPXORD  Z11, Z11, Z11; \
	VPXORD  Z12, Z12, Z12; \
	KV_DOT(Z1, 0x00, Z22, Z3, Z11); \
	KV_DOT(Z2, 0x00, Z26, Z7, Z12); \
	KV_DOT(Z1, 0x55, Z23, Z4, Z11); \
	KV_DOT(Z2, 0x55, Z27, Z8, Z12); \
	KV_DOT(Z1, 0xaa, Z24, Z5, Z11); \
	KV_DOT(Z2, 0xaa, Z28, Z9, Z12); \
	KV_DOT(Z1, 0xff, Z25, Z6, Z11); \
	KV_DOT(Z2, 0xff, Z29, Z10, Z12); \
	VPMULLD Z30, Z11, Z11; \
	VPMULLD Z31, Z12, Z12; \
	VPADDD  Z11, ISUM, ISUM; \
	VPADDD  Z12, ISUM, ISUM; \
	KV_PAIRSUM(B0, B1, Z14, BSUM)

// KV_Q6OUT(Y0, Y1, ISUM, BSUM, ACC): ACC += (isum - 32*bsum) *
// (d_x*d_y); Z12 holds d_x.
#define KV_Q6OUT(Y0, Y1, ISUM, BSUM, ACC) \
	VPSLLD      $5, BSUM, BSUM; \
	VPSUBD      BSUM, ISUM, ISUM; \
	VCVTDQ2PS   ISUM, ISUM; \
	KV_DY(Y0, Y1); \
	VMULPS      Z12, Z4, Z5; \
	VFMADD231PS Z5, ISUM, ACC

// func q6KVNNI(nb int, panel, y *byte, ldy int, out *[32]float32)
//
// The q6_K panel kernel (PanelQ6_K bytes per super-block).
TEXT ·q6KVNNI(SB), NOSPLIT, $0-40
	KV_SETUP
	TESTQ DX, DX
	JEQ   kv6done

kv6super:
	KV_SUPER

kv6sub:
	KV_LOADW
	KV_SCALE(256, Z30)
	KV_SCALE(288, Z31)
	VBROADCASTI64X4 320(SI), Z14
	KV_Q6PAIR((DI), (DI)(R8*1), (BX), (BX)(R8*1), Z18, Z20)
	KV_Q6PAIR((DI)(R8*2), (DI)(R9*1), (BX)(R8*2), (BX)(R9*1), Z19, Z21)
	ADDQ $352, SI
	ADDQ $32, DI
	ADDQ $4, BX
	DECQ CX
	JNE  kv6sub

	VBROADCASTF64X4 0(SI), Z12
	KV_Q6OUT((R10), (R10)(R8*1), Z18, Z20, Z16)
	KV_Q6OUT((R10)(R8*2), (R10)(R9*1), Z19, Z21, Z17)
	ADDQ $32, SI
	ADDQ $292, R10
	DECQ DX
	JNE  kv6super

kv6done:
	VMOVUPS Z16, 0(AX)
	VMOVUPS Z17, 64(AX)
	VZEROUPPER
	RET
