//go:build amd64 && !purego

#include "textflag.h"
#include "dotk_amd64.h"

// The vnni tier's q2_K and q3_K quad kernels: gemmk_amd64.s's
// gemmQ2_Kx4AVX2 and gemmQ3_Kx4AVX2 (one weight row against four q8_K
// rows) with the codes of two 32-element chunks in one zmm register and
// each column's products summed by VPDPBUSD from zero, weighted by the
// scale of each 16 elements with VPMULLD, in place of VPMADDUBSW and
// VPMADDWD by the scale words. The AVX2 kernels' word sums never
// saturate (codes at most 7), each column's integer sums per
// super-block are exact in both, and the min / offset terms and the
// float32 steps are the AVX2 kernels' instructions, so every output
// equals the AVX2 kernel's (and the generic function) bit for bit.
// AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

// gkv6idx: VPERMD indexes, dword 4k+i in lanes 4i..4i+3 for chunk pair
// k; gkvshr02, gkvshr46, gkvshr1: word shift counts (low half, high
// half) = (0, 2), (4, 6), (0, 1).
DATA gkv6idx<>+0(SB)/8, $0x0000000000000000
DATA gkv6idx<>+8(SB)/8, $0x0000000000000000
DATA gkv6idx<>+16(SB)/8, $0x0000000100000001
DATA gkv6idx<>+24(SB)/8, $0x0000000100000001
DATA gkv6idx<>+32(SB)/8, $0x0000000200000002
DATA gkv6idx<>+40(SB)/8, $0x0000000200000002
DATA gkv6idx<>+48(SB)/8, $0x0000000300000003
DATA gkv6idx<>+56(SB)/8, $0x0000000300000003
DATA gkv6idx<>+64(SB)/8, $0x0000000400000004
DATA gkv6idx<>+72(SB)/8, $0x0000000400000004
DATA gkv6idx<>+80(SB)/8, $0x0000000500000005
DATA gkv6idx<>+88(SB)/8, $0x0000000500000005
DATA gkv6idx<>+96(SB)/8, $0x0000000600000006
DATA gkv6idx<>+104(SB)/8, $0x0000000600000006
DATA gkv6idx<>+112(SB)/8, $0x0000000700000007
DATA gkv6idx<>+120(SB)/8, $0x0000000700000007
DATA gkv6idx<>+128(SB)/8, $0x0000000800000008
DATA gkv6idx<>+136(SB)/8, $0x0000000800000008
DATA gkv6idx<>+144(SB)/8, $0x0000000900000009
DATA gkv6idx<>+152(SB)/8, $0x0000000900000009
DATA gkv6idx<>+160(SB)/8, $0x0000000a0000000a
DATA gkv6idx<>+168(SB)/8, $0x0000000a0000000a
DATA gkv6idx<>+176(SB)/8, $0x0000000b0000000b
DATA gkv6idx<>+184(SB)/8, $0x0000000b0000000b
DATA gkv6idx<>+192(SB)/8, $0x0000000c0000000c
DATA gkv6idx<>+200(SB)/8, $0x0000000c0000000c
DATA gkv6idx<>+208(SB)/8, $0x0000000d0000000d
DATA gkv6idx<>+216(SB)/8, $0x0000000d0000000d
DATA gkv6idx<>+224(SB)/8, $0x0000000e0000000e
DATA gkv6idx<>+232(SB)/8, $0x0000000e0000000e
DATA gkv6idx<>+240(SB)/8, $0x0000000f0000000f
DATA gkv6idx<>+248(SB)/8, $0x0000000f0000000f
GLOBL gkv6idx<>(SB), RODATA|NOPTR, $256

DATA gkvshr02<>+0(SB)/8, $0x0000000000000000
DATA gkvshr02<>+8(SB)/8, $0x0000000000000000
DATA gkvshr02<>+16(SB)/8, $0x0000000000000000
DATA gkvshr02<>+24(SB)/8, $0x0000000000000000
DATA gkvshr02<>+32(SB)/8, $0x0002000200020002
DATA gkvshr02<>+40(SB)/8, $0x0002000200020002
DATA gkvshr02<>+48(SB)/8, $0x0002000200020002
DATA gkvshr02<>+56(SB)/8, $0x0002000200020002
GLOBL gkvshr02<>(SB), RODATA|NOPTR, $64

DATA gkvshr46<>+0(SB)/8, $0x0004000400040004
DATA gkvshr46<>+8(SB)/8, $0x0004000400040004
DATA gkvshr46<>+16(SB)/8, $0x0004000400040004
DATA gkvshr46<>+24(SB)/8, $0x0004000400040004
DATA gkvshr46<>+32(SB)/8, $0x0006000600060006
DATA gkvshr46<>+40(SB)/8, $0x0006000600060006
DATA gkvshr46<>+48(SB)/8, $0x0006000600060006
DATA gkvshr46<>+56(SB)/8, $0x0006000600060006
GLOBL gkvshr46<>(SB), RODATA|NOPTR, $64

DATA gkvshr1<>+0(SB)/8, $0x0000000000000000
DATA gkvshr1<>+8(SB)/8, $0x0000000000000000
DATA gkvshr1<>+16(SB)/8, $0x0000000000000000
DATA gkvshr1<>+24(SB)/8, $0x0000000000000000
DATA gkvshr1<>+32(SB)/8, $0x0001000100010001
DATA gkvshr1<>+40(SB)/8, $0x0001000100010001
DATA gkvshr1<>+48(SB)/8, $0x0001000100010001
DATA gkvshr1<>+56(SB)/8, $0x0001000100010001
GLOBL gkvshr1<>(SB), RODATA|NOPTR, $64

// REDUCE4 and YD4: gemmk_amd64.s's (macros are per file).
#define REDUCE4(A, B, C, D, X, T) \
	VPHADDD B, A, A; \
	VPHADDD D, C, C; \
	VPHADDD C, A, A; \
	VEXTRACTI128 $1, A, T; \
	VPADDD T, X, X

#define YD4 \
	VMOVSS (DI), X4; \
	VINSERTPS $0x10, (DI)(R12*1), X4, X4; \
	VINSERTPS $0x20, (DI)(R12*2), X4, X4; \
	VINSERTPS $0x30, (DI)(R13*1), X4, X4

// GKV_CONSTS: Z16 = gkvshr02, Z17 = gkvshr46, Z28-Z31 = gkv6idx.
#define GKV_CONSTS \
	VMOVDQU64 gkvshr02<>(SB), Z16; \
	VMOVDQU64 gkvshr46<>(SB), Z17; \
	VMOVDQU64 gkv6idx<>+0(SB), Z28; \
	VMOVDQU64 gkv6idx<>+64(SB), Z29; \
	VMOVDQU64 gkv6idx<>+128(SB), Z30; \
	VMOVDQU64 gkv6idx<>+192(SB), Z31

// GKV_ZERO zeroes the four columns' accumulators Z24-Z27.
#define GKV_ZERO \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27

// GKV_PAIR(YOFF, CODES, I): column c's accumulator Z24+c += VPDPBUSD
// lanes of the chunk pair's codes CODES with its activation codes at
// YOFF(DI) (row c: + c*ldy), each times the scale of its 16 elements
// (Z18: the 16 scales as dwords, picked by the index I). Clobbers Z11,
// Z20-Z23.
#define GKV_PAIR(YOFF, CODES, I) \
	VPERMD   Z18, I, Z11; \
	VPXORD   Z20, Z20, Z20; \
	VPXORD   Z21, Z21, Z21; \
	VPXORD   Z22, Z22, Z22; \
	VPXORD   Z23, Z23, Z23; \
	VPDPBUSD YOFF(DI), CODES, Z20; \
	VPDPBUSD YOFF(DI)(R12*1), CODES, Z21; \
	VPDPBUSD YOFF(DI)(R12*2), CODES, Z22; \
	VPDPBUSD YOFF(DI)(R13*1), CODES, Z23; \
	VPMULLD  Z11, Z20, Z20; \
	VPMULLD  Z11, Z21, Z21; \
	VPMULLD  Z11, Z22, Z22; \
	VPMULLD  Z11, Z23, Z23; \
	VPADDD   Z20, Z24, Z24; \
	VPADDD   Z21, Z25, Z25; \
	VPADDD   Z22, Z26, Z26; \
	VPADDD   Z23, Z27, Z27

// GKV_Q2K_HALF(H, I0, I1): elements 128H..128H+127 of the q2_K row at
// SI: chunks 0, 1 (codes (qs >> 0, 2) & 3) then 2, 3 ((qs >> 4, 6) & 3)
// against the four columns. Z14 = 0x03 bytes. Clobbers Z9-Z11, Z20-Z23.
#define GKV_Q2K_HALF(H, I0, I1) \
	VBROADCASTI64X4 16+32*H(SI), Z9; \
	VPSRLVW         Z16, Z9, Z10; \
	VPANDD          Z14, Z10, Z10; \
	GKV_PAIR(4+128*H, Z10, I0); \
	VPSRLVW         Z17, Z9, Z10; \
	VPANDD          Z14, Z10, Z10; \
	GKV_PAIR(68+128*H, Z10, I1)

// GKV_Q3K_HALF(H, HB0, S0, HB1, S1, I0, I1): GKV_Q2K_HALF for the q3_K
// row at SI (low bits from qs at 32+32H) with the high bits of Z13 (the
// hmask bytes in both halves, the high half shifted right one bit per
// word) moved to bit 2 in Z7 by HB0 by S0 (chunks 0, 1) and HB1 by S1
// (2, 3) (ZBITS_SLL, ZBITS_SRL, ZBITS_AND).
// Z8 = 0x04 bytes. Clobbers Z7, Z9-Z11, Z20-Z23.
#define GKV_Q3K_HALF(H, HB0, S0, HB1, S1, I0, I1) \
	VBROADCASTI64X4 32+32*H(SI), Z9; \
	VPSRLVW         Z16, Z9, Z10; \
	VPANDD          Z14, Z10, Z10; \
	HB0(S0, Z13, Z8, Z7); \
	VPORD           Z7, Z10, Z10; \
	GKV_PAIR(4+128*H, Z10, I0); \
	VPSRLVW         Z17, Z9, Z10; \
	VPANDD          Z14, Z10, Z10; \
	HB1(S1, Z13, Z8, Z7); \
	VPORD           Z7, Z10, Z10; \
	GKV_PAIR(68+128*H, Z10, I1)

// GKV_FOLD: Y0-Y3 = the columns' accumulators folded to 8 lanes (exact
// integers), for REDUCE4. Clobbers Y20.
#define GKV_FOLD \
	VEXTRACTI64X4 $1, Z24, Y20; \
	VPADDD        Y20, Y24, Y0; \
	VEXTRACTI64X4 $1, Z25, Y20; \
	VPADDD        Y20, Y25, Y1; \
	VEXTRACTI64X4 $1, Z26, Y20; \
	VPADDD        Y20, Y26, Y2; \
	VEXTRACTI64X4 $1, Z27, Y20; \
	VPADDD        Y20, Y27, Y3

// func gemmQ2_Kx4VNNI(x, y *byte, ldy int, nb int, out *[4]float32)
//
// gemmQ2_Kx4AVX2 with VPDPBUSD (GKV_Q2K_HALF): each output equal bit
// for bit to it, dotQ2_KQ8_KAVX2 and the generic function.
TEXT ·gemmQ2_Kx4VNNI(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R11
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k03(SB), Z14
	GKV_CONSTS
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R11)
	TESTQ        CX, CX
	JEQ          gkvq2kdone

gkvq2kloop:
	VMOVDQU   (SI), X1
	VPAND     X15, X1, X2
	VPSRLW    $4, X1, X3
	VPAND     X15, X3, X3
	VPMOVZXBW X2, Y2
	VPMOVZXBW X3, Y6
	VPMADDWD  260(DI), Y6, Y8
	VPMADDWD  260(DI)(R12*1), Y6, Y9
	VPMADDWD  260(DI)(R12*2), Y6, Y10
	VPMADDWD  260(DI)(R13*1), Y6, Y11
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9)
	VMOVDQA   X8, X12
	VPMOVZXWD Y2, Z18
	GKV_ZERO
	GKV_Q2K_HALF(0, Z28, Z29)
	GKV_Q2K_HALF(1, Z30, Z31)
	GKV_FOLD
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)

	// out[c] += (d*yd[c])*isum[c] - (dmin*yd[c])*mins[c].
	YD4
	VMOVD        80(SI), X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, X6
	VMOVSHDUP    X5, X7
	VBROADCASTSS X7, X7
	VMULPS       X4, X6, X6
	VMULPS       X4, X7, X7
	VCVTDQ2PS    X0, X0
	VCVTDQ2PS    X12, X8
	VMULPS       X0, X6, X6
	VMULPS       X8, X7, X7
	VSUBPS       X7, X6, X6
	VADDPS       (R11), X6, X6
	VMOVUPS      X6, (R11)
	ADDQ         $84, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          gkvq2kloop

gkvq2kdone:
	VZEROUPPER
	RET

// func gemmQ3_Kx4VNNI(x, y *byte, ldy int, nb int, out *[4]float32)
//
// gemmQ3_Kx4AVX2 with VPDPBUSD (GKV_Q3K_HALF): each output equal bit
// for bit to it, dotQ3_KQ8_KAVX2 and the generic function. R10 holds
// out.
TEXT ·gemmQ3_Kx4VNNI(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R10
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·k03(SB), Z14
	VPBROADCASTQ ·k04(SB), Z8
	GKV_CONSTS
	VMOVDQU64    gkvshr1<>(SB), Z19
	VPBROADCASTQ ·k32w(SB), Y15
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R10)
	TESTQ        CX, CX
	JEQ          gkvq3kdone

gkvq3kloop:
	// The sixteen 6-bit scale codes, as in dotQ3_KQ8_KAVX2.
	MOVL    96(SI), AX
	MOVL    100(SI), BX
	MOVL    104(SI), DX
	MOVL    AX, R8
	ANDL    $0x0f0f0f0f, R8
	MOVL    DX, R9
	SHLL    $4, R9
	ANDL    $0x30303030, R9
	ORL     R9, R8
	VMOVD   R8, X1
	MOVL    BX, R8
	ANDL    $0x0f0f0f0f, R8
	MOVL    DX, R9
	SHLL    $2, R9
	ANDL    $0x30303030, R9
	ORL     R9, R8
	VPINSRD $1, R8, X1, X1
	MOVL    AX, R8
	SHRL    $4, R8
	ANDL    $0x0f0f0f0f, R8
	MOVL    DX, R9
	ANDL    $0x30303030, R9
	ORL     R9, R8
	VPINSRD $2, R8, X1, X1
	MOVL    BX, R8
	SHRL    $4, R8
	ANDL    $0x0f0f0f0f, R8
	MOVL    DX, R9
	SHRL    $2, R9
	ANDL    $0x30303030, R9
	ORL     R9, R8
	VPINSRD $3, R8, X1, X1

	// Signed scale words; X12 = the columns' offset totals sum_j
	// sc_j*bsum_j, subtracted 4 times at the end.
	VPMOVZXBW X1, Y2
	VPSUBW    Y15, Y2, Y2
	VPMADDWD  260(DI), Y2, Y4
	VPMADDWD  260(DI)(R12*1), Y2, Y5
	VPMADDWD  260(DI)(R12*2), Y2, Y6
	VPMADDWD  260(DI)(R13*1), Y2, Y7
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5)
	VMOVDQA   X4, X12
	VPMOVSXWD Y2, Z18
	VBROADCASTI64X4 (SI), Z13
	VPSRLVW   Z19, Z13, Z13
	GKV_ZERO
	GKV_Q3K_HALF(0, ZBITS_SLL, 2, ZBITS_AND, 0, Z28, Z29)
	GKV_Q3K_HALF(1, ZBITS_SRL, 2, ZBITS_SRL, 4, Z30, Z31)
	GKV_FOLD
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	VPSLLD    $2, X12, X12
	VPSUBD    X12, X0, X0

	// out[c] += (d*yd[c])*float(isum[c] - 4*offset[c]).
	YD4
	MOVWLZX      108(SI), AX
	VMOVD        AX, X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, X5
	VMULPS       X4, X5, X5
	VCVTDQ2PS    X0, X0
	VMULPS       X0, X5, X5
	VADDPS       (R10), X5, X5
	VMOVUPS      X5, (R10)
	ADDQ         $110, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          gkvq3kloop

gkvq3kdone:
	VZEROUPPER
	RET
