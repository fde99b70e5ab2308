//go:build amd64 && !purego

#include "textflag.h"
#include "dotk_amd64.h"

// The tiled K-format kernels: see dotk_amd64.s for the common scheme.

// The constants (·knib, ·wbcast, ...) are dotk_amd64.s's, package-level
// symbols shared by both files.

// Register-tiled kernels: one weight row against four q8_K activation
// rows y, y+ldy, y+2*ldy, y+3*ldy (DI, R12 = ldy, R13 = 3*ldy), with four
// int32 accumulators Y0-Y3 and the float32 sums in out (R11). Per column
// they perform the vector dot product's integer and float operations, so
// each output equals the generic function bit for bit.

// KCOLQ(ACC, LO, HI): ACC += scaled products of the nibbles in Y4 with the
// codes at LO, and of Y5 with those at HI (scale words in Y6, Y7).
#define KCOLQ(ACC, LO, HI) \
	VPMADDUBSW LO, Y4, Y8; \
	VPMADDWD Y6, Y8, Y8; \
	VPADDD Y8, ACC, ACC; \
	VPMADDUBSW HI, Y5, Y9; \
	VPMADDWD Y7, Y9, Y9; \
	VPADDD Y9, ACC, ACC

#define Q4KX4_PAIR(JJ) \
	VMOVDQU 16+32*JJ(SI), Y4; \
	VPSRLW $4, Y4, Y5; \
	VPAND Y15, Y4, Y4; \
	VPAND Y15, Y5, Y5; \
	VPSHUFB ·wbcast+64*JJ(SB), Y14, Y6; \
	VPSHUFB ·wbcast+64*JJ+32(SB), Y14, Y7; \
	KCOLQ(Y0, 4+64*JJ(DI), 36+64*JJ(DI)); \
	KCOLQ(Y1, 4+64*JJ(DI)(R12*1), 36+64*JJ(DI)(R12*1)); \
	KCOLQ(Y2, 4+64*JJ(DI)(R12*2), 36+64*JJ(DI)(R12*2)); \
	KCOLQ(Y3, 4+64*JJ(DI)(R13*1), 36+64*JJ(DI)(R13*1))

// REDUCE4(A, B, C, D, X, T): X = the four lane sums of A, B, C, D.
// Clobbers A, C.
#define REDUCE4(A, B, C, D, X, T) \
	VPHADDD B, A, A; \
	VPHADDD D, C, C; \
	VPHADDD C, A, A; \
	VEXTRACTI128 $1, A, T; \
	VPADDD T, X, X

// YD4: X4 = the four activation rows' float32 scales.
#define YD4 \
	VMOVSS (DI), X4; \
	VINSERTPS $0x10, (DI)(R12*1), X4, X4; \
	VINSERTPS $0x20, (DI)(R12*2), X4, X4; \
	VINSERTPS $0x30, (DI)(R13*1), X4, X4

// Q6KX4_ACC(YOFF, PAT, SC): the codes in Y10 against the four columns.
#define Q6KX4_ACC(YOFF, PAT, SC) \
	VPSHUFB PAT, SC, Y11; \
	VPMADDUBSW YOFF(DI), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y0, Y0; \
	VPMADDUBSW YOFF(DI)(R12*1), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y1, Y1; \
	VPMADDUBSW YOFF(DI)(R12*2), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y2, Y2; \
	VPMADDUBSW YOFF(DI)(R13*1), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y3, Y3

#define Q6KX4_HALF(H, SC) \
	VMOVDQU 64*H(SI), Y7; \
	VMOVDQU 64*H+32(SI), Y8; \
	VMOVDQU 128+32*H(SI), Y9; \
	VPAND Y15, Y7, Y10; \
	VPSLLW $4, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	Q6KX4_ACC(4+128*H, ·wpair+0(SB), SC); \
	VPAND Y15, Y8, Y10; \
	VPSLLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	Q6KX4_ACC(36+128*H, ·wpair+32(SB), SC); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y15, Y10, Y10; \
	VPAND Y14, Y9, Y5; \
	VPOR Y5, Y10, Y10; \
	Q6KX4_ACC(68+128*H, ·wpair+64(SB), SC); \
	VPSRLW $4, Y8, Y10; \
	VPAND Y15, Y10, Y10; \
	VPSRLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	Q6KX4_ACC(100+128*H, ·wpair+96(SB), SC)

TEXT ·gemmQ4_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R11
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·knib(SB), Y15
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R11)
	TESTQ        CX, CX
	JEQ          g4kdone

g4kloop:
	KSCALES
	VPMOVZXBW    X1, Y2
	VPERMQ       $0x44, Y2, Y14
	VEXTRACTI128 $1, Y2, X13
	VPMOVZXWD    X13, Y13
	VPSLLD       $16, Y13, Y12
	VPOR         Y12, Y13, Y13
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPXOR        Y2, Y2, Y2
	VPXOR        Y3, Y3, Y3
	Q4KX4_PAIR(0)
	Q4KX4_PAIR(1)
	Q4KX4_PAIR(2)
	Q4KX4_PAIR(3)
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	VPMADDWD     260(DI), Y13, Y8
	VPMADDWD     260(DI)(R12*1), Y13, Y9
	VPMADDWD     260(DI)(R12*2), Y13, Y10
	VPMADDWD     260(DI)(R13*1), Y13, Y11
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9)

	// out[c] += (d*yd[c])*isum[c] - (dmin*yd[c])*mins[c].
	YD4
	VMOVD        (SI), X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, X6
	VMOVSHDUP    X5, X7
	VBROADCASTSS X7, X7
	VMULPS       X4, X6, X6
	VMULPS       X4, X7, X7
	VCVTDQ2PS    X0, X0
	VCVTDQ2PS    X8, X8
	VMULPS       X0, X6, X6
	VMULPS       X8, X7, X7
	VSUBPS       X7, X6, X6
	VADDPS       (R11), X6, X6
	VMOVUPS      X6, (R11)
	ADDQ         $144, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          g4kloop

g4kdone:
	VZEROUPPER
	RET

// func gemmQ6_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
TEXT ·gemmQ6_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R11
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k30(SB), Y14
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R11)
	TESTQ        CX, CX
	JEQ          g6kdone

g6kloop:
	// Accumulators start at -32 * sum_j sc_j*bsum_j (the code offset).
	VPMOVSXBW 192(SI), Y4
	VPMADDWD  260(DI), Y4, Y0
	VPMADDWD  260(DI)(R12*1), Y4, Y1
	VPMADDWD  260(DI)(R12*2), Y4, Y2
	VPMADDWD  260(DI)(R13*1), Y4, Y3
	VPSLLD    $5, Y0, Y0
	VPSLLD    $5, Y1, Y1
	VPSLLD    $5, Y2, Y2
	VPSLLD    $5, Y3, Y3
	VPXOR     Y5, Y5, Y5
	VPSUBD    Y0, Y5, Y0
	VPSUBD    Y1, Y5, Y1
	VPSUBD    Y2, Y5, Y2
	VPSUBD    Y3, Y5, Y3
	VPERMQ    $0x44, Y4, Y13
	VPERMQ    $0xee, Y4, Y12
	Q6KX4_HALF(0, Y13)
	Q6KX4_HALF(1, Y12)
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)

	// out[c] += (d*yd[c])*isum[c].
	YD4
	MOVWLZX      208(SI), AX
	VMOVD        AX, X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, X5
	VMULPS       X4, X5, X5
	VCVTDQ2PS    X0, X0
	VMULPS       X0, X5, X5
	VADDPS       (R11), X5, X5
	VMOVUPS      X5, (R11)
	ADDQ         $210, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          g6kloop

g6kdone:
	VZEROUPPER
	RET

// Q5KX4_PAIR(JJ, LOP, LS, HOP, HS): Q4KX4_PAIR for q5_K, the fifth bits
// of Y13 moved to bit 4 in Y10 by LOP by LS and HOP by HS (BITS_SLL,
// BITS_SRL, BITS_AND; Y11 = 0x10).
#define Q5KX4_PAIR(JJ, LOP, LS, HOP, HS) \
	VMOVDQU 48+32*JJ(SI), Y4; \
	VPSRLW $4, Y4, Y5; \
	VPAND Y15, Y4, Y4; \
	VPAND Y15, Y5, Y5; \
	LOP(LS, Y13, Y11, Y10); \
	VPOR Y10, Y4, Y4; \
	HOP(HS, Y13, Y11, Y10); \
	VPOR Y10, Y5, Y5; \
	VPSHUFB ·wbcast+64*JJ(SB), Y14, Y6; \
	VPSHUFB ·wbcast+64*JJ+32(SB), Y14, Y7; \
	KCOLQ(Y0, 4+64*JJ(DI), 36+64*JJ(DI)); \
	KCOLQ(Y1, 4+64*JJ(DI)(R12*1), 36+64*JJ(DI)(R12*1)); \
	KCOLQ(Y2, 4+64*JJ(DI)(R12*2), 36+64*JJ(DI)(R12*2)); \
	KCOLQ(Y3, 4+64*JJ(DI)(R13*1), 36+64*JJ(DI)(R13*1))

// func gemmQ5_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
//
// gemmQ4_Kx4AVX2 for q5_K weights; the min term is reduced first (into
// X12) to free registers for the fifth bits.
TEXT ·gemmQ5_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R11
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·knib(SB), Y15
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R11)
	TESTQ        CX, CX
	JEQ          g5kdone

g5kloop:
	KSCALES
	VPMOVZXBW    X1, Y2
	VPERMQ       $0x44, Y2, Y14
	VEXTRACTI128 $1, Y2, X13
	VPMOVZXWD    X13, Y13
	VPSLLD       $16, Y13, Y12
	VPOR         Y12, Y13, Y13
	VPMADDWD     260(DI), Y13, Y8
	VPMADDWD     260(DI)(R12*1), Y13, Y9
	VPMADDWD     260(DI)(R12*2), Y13, Y10
	VPMADDWD     260(DI)(R13*1), Y13, Y11
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9)
	VMOVDQA      X8, X12
	VMOVDQU      16(SI), Y13
	VPBROADCASTQ ·k10(SB), Y11
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPXOR        Y2, Y2, Y2
	VPXOR        Y3, Y3, Y3
	Q5KX4_PAIR(0, BITS_SLL, 4, BITS_SLL, 3)
	Q5KX4_PAIR(1, BITS_SLL, 2, BITS_SLL, 1)
	Q5KX4_PAIR(2, BITS_AND, 0, BITS_SRL, 1)
	Q5KX4_PAIR(3, BITS_SRL, 2, BITS_SRL, 3)
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)

	// out[c] += (d*yd[c])*isum[c] - (dmin*yd[c])*mins[c].
	YD4
	VMOVD        (SI), X5
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
	ADDQ         $176, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          g5kloop

g5kdone:
	VZEROUPPER
	RET

// Q2KX4_CHUNK(H, G, LOW, SC): elements 128H+32G..+31 of the q2_K codes in
// Y7, (qs >> 2G) & 3 into Y10 by LOW (BITS_SRL, BITS_AND for G = 0),
// against the four columns.
#define Q2KX4_CHUNK(H, G, LOW, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	VPSHUFB ·wpair+32*G(SB), SC, Y11; \
	VPMADDUBSW 4+128*H+32*G(DI), Y10, Y8; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, Y0, Y0; \
	VPMADDUBSW 4+128*H+32*G(DI)(R12*1), Y10, Y8; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, Y1, Y1; \
	VPMADDUBSW 4+128*H+32*G(DI)(R12*2), Y10, Y8; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, Y2, Y2; \
	VPMADDUBSW 4+128*H+32*G(DI)(R13*1), Y10, Y8; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, Y3, Y3

// func gemmQ2_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
//
// One q2_K weight row against four q8_K rows, each output equal bit for
// bit to dotQ2_KQ8_KAVX2 and the generic function; the min term is
// reduced first, into X12.
TEXT ·gemmQ2_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R11
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k03(SB), Y14
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R11)
	TESTQ        CX, CX
	JEQ          g2kdone

g2kloop:
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
	VPERMQ    $0x44, Y2, Y4
	VPERMQ    $0xee, Y2, Y5
	VPXOR     Y0, Y0, Y0
	VPXOR     Y1, Y1, Y1
	VPXOR     Y2, Y2, Y2
	VPXOR     Y3, Y3, Y3
	VMOVDQU   16(SI), Y7
	Q2KX4_CHUNK(0, 0, BITS_AND, Y4)
	Q2KX4_CHUNK(0, 1, BITS_SRL, Y4)
	Q2KX4_CHUNK(0, 2, BITS_SRL, Y4)
	Q2KX4_CHUNK(0, 3, BITS_SRL, Y4)
	VMOVDQU   48(SI), Y7
	Q2KX4_CHUNK(1, 0, BITS_AND, Y5)
	Q2KX4_CHUNK(1, 1, BITS_SRL, Y5)
	Q2KX4_CHUNK(1, 2, BITS_SRL, Y5)
	Q2KX4_CHUNK(1, 3, BITS_SRL, Y5)
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
	JNE          g2kloop

g2kdone:
	VZEROUPPER
	RET

// Q3KX4_CHUNK(H, G, LOW, HOP, HS, SC): Q3K_CHUNK against the four
// columns: codes (qs >> 2G) & 3 of Y7 by LOW with hmask bit 4H+G of Y13
// at bit 2 in Y5 by HOP by HS (Y14 = 0x03, Y8 = 0x04), scale words picked
// from SC.
#define Q3KX4_CHUNK(H, G, LOW, HOP, HS, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	HOP(HS, Y13, Y8, Y5); \
	VPOR Y5, Y10, Y10; \
	VPSHUFB ·wpair+32*G(SB), SC, Y11; \
	VPMADDUBSW 4+128*H+32*G(DI), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y0, Y0; \
	VPMADDUBSW 4+128*H+32*G(DI)(R12*1), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y1, Y1; \
	VPMADDUBSW 4+128*H+32*G(DI)(R12*2), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y2, Y2; \
	VPMADDUBSW 4+128*H+32*G(DI)(R13*1), Y10, Y6; \
	VPMADDWD Y11, Y6, Y6; \
	VPADDD Y6, Y3, Y3

// func gemmQ3_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
//
// One q3_K weight row against four q8_K rows, each output equal bit for
// bit to dotQ3_KQ8_KAVX2 and the generic function; the offset term is
// reduced first, into X12. R10 holds out.
TEXT ·gemmQ3_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         ldy+16(FP), R12
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), R10
	LEAQ         (R12)(R12*2), R13
	VPBROADCASTQ ·k03(SB), Y14
	VPBROADCASTQ ·k04(SB), Y8
	VPBROADCASTQ ·k32w(SB), Y15
	VXORPS       X0, X0, X0
	VMOVUPS      X0, (R10)
	TESTQ        CX, CX
	JEQ          g3kdone

g3kloop:
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
	VPERMQ    $0x44, Y2, Y4
	VPERMQ    $0xee, Y2, Y9
	VPXOR     Y0, Y0, Y0
	VPXOR     Y1, Y1, Y1
	VPXOR     Y2, Y2, Y2
	VPXOR     Y3, Y3, Y3
	VMOVDQU   (SI), Y13
	VMOVDQU   32(SI), Y7
	Q3KX4_CHUNK(0, 0, BITS_AND, BITS_SLL, 2, Y4)
	Q3KX4_CHUNK(0, 1, BITS_SRL, BITS_SLL, 1, Y4)
	Q3KX4_CHUNK(0, 2, BITS_SRL, BITS_AND, 0, Y4)
	Q3KX4_CHUNK(0, 3, BITS_SRL, BITS_SRL, 1, Y4)
	VMOVDQU   64(SI), Y7
	Q3KX4_CHUNK(1, 0, BITS_AND, BITS_SRL, 2, Y9)
	Q3KX4_CHUNK(1, 1, BITS_SRL, BITS_SRL, 3, Y9)
	Q3KX4_CHUNK(1, 2, BITS_SRL, BITS_SRL, 4, Y9)
	Q3KX4_CHUNK(1, 3, BITS_SRL, BITS_SRL, 5, Y9)
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
	JNE          g3kloop

g3kdone:
	VZEROUPPER
	RET
