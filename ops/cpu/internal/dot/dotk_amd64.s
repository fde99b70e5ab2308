//go:build amd64 && !purego

#include "textflag.h"
#include "dotk_amd64.h"

// AVX2 dot products of the K formats with q8_K activations. Each
// super-block is reduced to exact int32 totals (the scaled code products,
// and for q2_K/q4_K/q5_K the min term; for q3_K/q6_K the code offset is
// taken out through the activation's bsums), then combined in float32
// with exactly the scalar operations of the generic functions in
// k.go, so the results equal the generic tier bit for bit. The
// activations' bsums must be the sums of their codes, as every q8_K
// quantizer writes them.
//
// Registers: SI walks x, DI walks y, CX counts super-blocks, X12 holds
// the float32 sum. Products are formed as VPMADDUBSW(unsigned weight
// codes, signed activation codes) and scaled by VPMADDWD with int16
// scales broadcast by VPSHUFB.

DATA ·knib+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL ·knib(SB), RODATA|NOPTR, $8

DATA ·k03+0(SB)/8, $0x0303030303030303
GLOBL ·k03(SB), RODATA|NOPTR, $8

DATA ·k04+0(SB)/8, $0x0404040404040404
GLOBL ·k04(SB), RODATA|NOPTR, $8

DATA ·k10+0(SB)/8, $0x1010101010101010
GLOBL ·k10(SB), RODATA|NOPTR, $8

DATA ·k30+0(SB)/8, $0x3030303030303030
GLOBL ·k30(SB), RODATA|NOPTR, $8

DATA ·k32w+0(SB)/8, $0x0020002000200020
GLOBL ·k32w(SB), RODATA|NOPTR, $8

// wbcast: pattern w (at offset 32*w) broadcasts int16 word w of each
// 128-bit lane to the whole lane.
DATA ·wbcast+0(SB)/8, $0x0100010001000100
DATA ·wbcast+8(SB)/8, $0x0100010001000100
DATA ·wbcast+16(SB)/8, $0x0100010001000100
DATA ·wbcast+24(SB)/8, $0x0100010001000100
DATA ·wbcast+32(SB)/8, $0x0302030203020302
DATA ·wbcast+40(SB)/8, $0x0302030203020302
DATA ·wbcast+48(SB)/8, $0x0302030203020302
DATA ·wbcast+56(SB)/8, $0x0302030203020302
DATA ·wbcast+64(SB)/8, $0x0504050405040504
DATA ·wbcast+72(SB)/8, $0x0504050405040504
DATA ·wbcast+80(SB)/8, $0x0504050405040504
DATA ·wbcast+88(SB)/8, $0x0504050405040504
DATA ·wbcast+96(SB)/8, $0x0706070607060706
DATA ·wbcast+104(SB)/8, $0x0706070607060706
DATA ·wbcast+112(SB)/8, $0x0706070607060706
DATA ·wbcast+120(SB)/8, $0x0706070607060706
DATA ·wbcast+128(SB)/8, $0x0908090809080908
DATA ·wbcast+136(SB)/8, $0x0908090809080908
DATA ·wbcast+144(SB)/8, $0x0908090809080908
DATA ·wbcast+152(SB)/8, $0x0908090809080908
DATA ·wbcast+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wbcast+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wbcast+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wbcast+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wbcast+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wbcast+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wbcast+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wbcast+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wbcast+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA ·wbcast+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA ·wbcast+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA ·wbcast+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL ·wbcast(SB), RODATA|NOPTR, $256

// wpair: pattern g (at offset 32*g) broadcasts word 2g of the low 128-bit
// lane over that lane and word 2g+1 of the high lane over that one: the
// scales of the two 16-element sub-blocks a 32-byte chunk spans.
DATA ·wpair+0(SB)/8, $0x0100010001000100
DATA ·wpair+8(SB)/8, $0x0100010001000100
DATA ·wpair+16(SB)/8, $0x0302030203020302
DATA ·wpair+24(SB)/8, $0x0302030203020302
DATA ·wpair+32(SB)/8, $0x0504050405040504
DATA ·wpair+40(SB)/8, $0x0504050405040504
DATA ·wpair+48(SB)/8, $0x0706070607060706
DATA ·wpair+56(SB)/8, $0x0706070607060706
DATA ·wpair+64(SB)/8, $0x0908090809080908
DATA ·wpair+72(SB)/8, $0x0908090809080908
DATA ·wpair+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wpair+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·wpair+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wpair+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·wpair+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA ·wpair+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL ·wpair(SB), RODATA|NOPTR, $128

// HSUMD leaves the sum of Y's eight int32 lanes in the low lane of X (the
// low half of Y). T is a scratch register.
#define HSUMD(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4e, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xb1, X, T; \
	VPADDD T, X, X

// ACCUM(Q, YOFF, PAT, SC): Y6 += VPMADDWD(VPMADDUBSW(Q, y codes at
// YOFF(DI)), the words of SC picked by the VPSHUFB pattern at PAT).
// Clobbers Q and Y11.
#define ACCUM(Q, YOFF, PAT, SC) \
	VPMADDUBSW YOFF(DI), Q, Q; \
	VPSHUFB PAT, SC, Y11; \
	VPMADDWD Y11, Q, Q; \
	VPADDD Q, Y6, Y6

// KSCALE_VECS: from X1 (KSCALES), Y3 = the eight scale words in both
// lanes, Y4 = the min term's int32 lanes m_j*(bsum 2j + bsum 2j+1).
#define KSCALE_VECS \
	VPMOVZXBW X1, Y2; \
	VPERMQ $0x44, Y2, Y3; \
	VEXTRACTI128 $1, Y2, X4; \
	VPMOVZXWD X4, Y4; \
	VPSLLD $16, Y4, Y5; \
	VPOR Y5, Y4, Y4; \
	VPMADDWD 260(DI), Y4, Y4

// KFLOAT_MIN: X12 += (d*yd)*float(AX) - (dmin*yd)*float(BX), with d, dmin
// the f16 pair at DOFF(SI) and yd the float32 at (DI).
#define KFLOAT_MIN(DOFF) \
	VMOVD DOFF(SI), X7; \
	VCVTPH2PS X7, X7; \
	VBROADCASTSS (DI), X8; \
	VMULPS X8, X7, X7; \
	VCVTSI2SSL AX, X9, X9; \
	VCVTSI2SSL BX, X10, X10; \
	VMULSS X9, X7, X9; \
	VMOVSHDUP X7, X11; \
	VMULSS X10, X11, X10; \
	VSUBSS X10, X9, X9; \
	VADDSS X9, X12, X12

// KFLOAT: X12 += (d*yd)*float(AX), d the f16 at DOFF(SI).
#define KFLOAT(DOFF) \
	MOVWLZX DOFF(SI), DX; \
	VMOVD DX, X7; \
	VCVTPH2PS X7, X7; \
	VMULSS (DI), X7, X7; \
	VCVTSI2SSL AX, X9, X9; \
	VMULSS X9, X7, X9; \
	VADDSS X9, X12, X12

// Q4K_PAIR(JJ): sub-blocks 2JJ (low nibbles) and 2JJ+1 (high nibbles).
#define Q4K_PAIR(JJ) \
	VMOVDQU 16+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	ACCUM(Y7, 4+64*JJ, ·wbcast+64*JJ(SB), Y3); \
	ACCUM(Y8, 36+64*JJ, ·wbcast+64*JJ+32(SB), Y3)

// Q5K_PAIR(JJ, LOP, LS, HOP, HS): as Q4K_PAIR with the fifth bits of Y13
// (bit j of byte l is element l of sub-block j) moved to bit 4 by
// LOP and HOP (BITS_SLL, BITS_SRL, BITS_AND by LS and HS; Y14 = 0x10) into
// Y9 and Y10.
#define Q5K_PAIR(JJ, LOP, LS, HOP, HS) \
	VMOVDQU 48+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	LOP(LS, Y13, Y14, Y9); \
	VPOR Y9, Y7, Y7; \
	HOP(HS, Y13, Y14, Y10); \
	VPOR Y10, Y8, Y8; \
	ACCUM(Y7, 4+64*JJ, ·wbcast+64*JJ(SB), Y3); \
	ACCUM(Y8, 36+64*JJ, ·wbcast+64*JJ+32(SB), Y3)

// Q6K_HALF(H, SC): the 128 elements of half H; SC holds the eight scale
// words of the half in both lanes. Y15 = 0x0f, Y14 = 0x30.
#define Q6K_HALF(H, SC) \
	VMOVDQU 64*H(SI), Y7; \
	VMOVDQU 64*H+32(SI), Y8; \
	VMOVDQU 128+32*H(SI), Y9; \
	VPAND Y15, Y7, Y10; \
	VPSLLW $4, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	ACCUM(Y10, 4+128*H, ·wpair+0(SB), SC); \
	VPAND Y15, Y8, Y10; \
	VPSLLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	ACCUM(Y10, 36+128*H, ·wpair+32(SB), SC); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y15, Y10, Y10; \
	VPAND Y14, Y9, Y5; \
	VPOR Y5, Y10, Y10; \
	ACCUM(Y10, 68+128*H, ·wpair+64(SB), SC); \
	VPSRLW $4, Y8, Y10; \
	VPAND Y15, Y10, Y10; \
	VPSRLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	ACCUM(Y10, 100+128*H, ·wpair+96(SB), SC)

// Q3K_CHUNK(H, G, LOW, HOP, HS, SC): elements 128H+32G..+31: low bits
// (qs >> 2G) & 3 from Y7 into Y10 by LOW (BITS_SRL, BITS_AND for G = 0),
// high bit 4H+G of the hmask bytes (Y13) moved to bit 2 in Y5 by HOP by HS
// (BITS_SLL, BITS_SRL, BITS_AND). Y14 = 0x03, Y8 = 0x04.
#define Q3K_CHUNK(H, G, LOW, HOP, HS, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	HOP(HS, Y13, Y8, Y5); \
	VPOR Y5, Y10, Y10; \
	ACCUM(Y10, 4+128*H+32*G, ·wpair+32*G(SB), SC)

// Q2K_CHUNK(H, G, LOW, SC): elements 128H+32G..+31, codes (qs >> 2G) & 3 of Y7 into Y10 by LOW.
// Y14 = 0x03.
#define Q2K_CHUNK(H, G, LOW, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	ACCUM(Y10, 4+128*H+32*G, ·wpair+32*G(SB), SC)

// func dotQ4_KQ8_KAVX2(x, y *byte, nb int) float32
TEXT ·dotQ4_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Y15
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          q4kdone

q4kloop:
	KSCALES
	KSCALE_VECS
	VPXOR Y6, Y6, Y6
	Q4K_PAIR(0)
	Q4K_PAIR(1)
	Q4K_PAIR(2)
	Q4K_PAIR(3)
	HSUMD(Y6, X6, X7)
	VMOVD X6, AX
	HSUMD(Y4, X4, X7)
	VMOVD X4, BX
	KFLOAT_MIN(0)
	ADDQ  $144, SI
	ADDQ  $292, DI
	DECQ  CX
	JNE   q4kloop

q4kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ5_KQ8_KAVX2(x, y *byte, nb int) float32
TEXT ·dotQ5_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k10(SB), Y14
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          q5kdone

q5kloop:
	KSCALES
	KSCALE_VECS
	VMOVDQU 16(SI), Y13
	VPXOR   Y6, Y6, Y6
	Q5K_PAIR(0, BITS_SLL, 4, BITS_SLL, 3)
	Q5K_PAIR(1, BITS_SLL, 2, BITS_SLL, 1)
	Q5K_PAIR(2, BITS_AND, 0, BITS_SRL, 1)
	Q5K_PAIR(3, BITS_SRL, 2, BITS_SRL, 3)
	HSUMD(Y6, X6, X7)
	VMOVD   X6, AX
	HSUMD(Y4, X4, X7)
	VMOVD   X4, BX
	KFLOAT_MIN(0)
	ADDQ    $176, SI
	ADDQ    $292, DI
	DECQ    CX
	JNE     q5kloop

q5kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ6_KQ8_KAVX2(x, y *byte, nb int) float32
TEXT ·dotQ6_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k30(SB), Y14
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          q6kdone

q6kloop:
	// Sixteen int8 scales as words; Y3 = the offset term's lanes
	// sc_j*bsum_j, subtracted 32 times at the end.
	VPMOVSXBW 192(SI), Y2
	VPMADDWD  260(DI), Y2, Y3
	VPERMQ    $0x44, Y2, Y4
	VPERMQ    $0xee, Y2, Y2
	VPXOR     Y6, Y6, Y6
	Q6K_HALF(0, Y4)
	Q6K_HALF(1, Y2)
	HSUMD(Y6, X6, X7)
	VMOVD     X6, AX
	HSUMD(Y3, X3, X7)
	VMOVD     X3, BX
	SHLL      $5, BX
	SUBL      BX, AX
	KFLOAT(208)
	ADDQ      $210, SI
	ADDQ      $292, DI
	DECQ      CX
	JNE       q6kloop

q6kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ3_KQ8_KAVX2(x, y *byte, nb int) float32
TEXT ·dotQ3_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·k03(SB), Y14
	VPBROADCASTQ ·k04(SB), Y8
	VPBROADCASTQ ·k32w(SB), Y15
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          q3kdone

q3kloop:
	// The sixteen 6-bit scale codes (12 packed bytes at 96(SI)): low four
	// bits from bytes 0-7, high two from bytes 8-11.
	MOVL  96(SI), AX
	MOVL  100(SI), BX
	MOVL  104(SI), DX
	MOVL  AX, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  DX, R13
	SHLL  $4, R13
	ANDL  $0x30303030, R13
	ORL   R13, R8
	MOVL  BX, R9
	ANDL  $0x0f0f0f0f, R9
	MOVL  DX, R13
	SHLL  $2, R13
	ANDL  $0x30303030, R13
	ORL   R13, R9
	MOVL  AX, R10
	SHRL  $4, R10
	ANDL  $0x0f0f0f0f, R10
	MOVL  DX, R13
	ANDL  $0x30303030, R13
	ORL   R13, R10
	MOVL  BX, R11
	SHRL  $4, R11
	ANDL  $0x0f0f0f0f, R11
	MOVL  DX, R13
	SHRL  $2, R13
	ANDL  $0x30303030, R13
	ORL   R13, R11
	VMOVD R8, X1
	VPINSRD $1, R9, X1, X1
	VPINSRD $2, R10, X1, X1
	VPINSRD $3, R11, X1, X1

	// Signed scale words; Y3 = the offset term's lanes sc_j*bsum_j,
	// subtracted 4 times at the end.
	VPMOVZXBW X1, Y2
	VPSUBW    Y15, Y2, Y2
	VPMADDWD  260(DI), Y2, Y3
	VPERMQ    $0x44, Y2, Y4
	VPERMQ    $0xee, Y2, Y2
	VMOVDQU   (SI), Y13
	VPXOR     Y6, Y6, Y6
	VMOVDQU   32(SI), Y7
	Q3K_CHUNK(0, 0, BITS_AND, BITS_SLL, 2, Y4)
	Q3K_CHUNK(0, 1, BITS_SRL, BITS_SLL, 1, Y4)
	Q3K_CHUNK(0, 2, BITS_SRL, BITS_AND, 0, Y4)
	Q3K_CHUNK(0, 3, BITS_SRL, BITS_SRL, 1, Y4)
	VMOVDQU   64(SI), Y7
	Q3K_CHUNK(1, 0, BITS_AND, BITS_SRL, 2, Y2)
	Q3K_CHUNK(1, 1, BITS_SRL, BITS_SRL, 3, Y2)
	Q3K_CHUNK(1, 2, BITS_SRL, BITS_SRL, 4, Y2)
	Q3K_CHUNK(1, 3, BITS_SRL, BITS_SRL, 5, Y2)
	HSUMD(Y6, X6, X7)
	VMOVD     X6, AX
	HSUMD(Y3, X3, X7)
	VMOVD     X3, BX
	SHLL      $2, BX
	SUBL      BX, AX
	KFLOAT(108)
	ADDQ      $110, SI
	ADDQ      $292, DI
	DECQ      CX
	JNE       q3kloop

q3kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ2_KQ8_KAVX2(x, y *byte, nb int) float32
TEXT ·dotQ2_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Y15
	VPBROADCASTQ ·k03(SB), Y14
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          q2kdone

q2kloop:
	// Scale codes (low nibbles) and min codes (high nibbles) as words;
	// Y3 = the min term's lanes m_j*bsum_j.
	VMOVDQU   (SI), X1
	VPAND     X15, X1, X2
	VPSRLW    $4, X1, X3
	VPAND     X15, X3, X3
	VPMOVZXBW X2, Y2
	VPMOVZXBW X3, Y3
	VPMADDWD  260(DI), Y3, Y3
	VPERMQ    $0x44, Y2, Y4
	VPERMQ    $0xee, Y2, Y2
	VPXOR     Y6, Y6, Y6
	VMOVDQU   16(SI), Y7
	Q2K_CHUNK(0, 0, BITS_AND, Y4)
	Q2K_CHUNK(0, 1, BITS_SRL, Y4)
	Q2K_CHUNK(0, 2, BITS_SRL, Y4)
	Q2K_CHUNK(0, 3, BITS_SRL, Y4)
	VMOVDQU   48(SI), Y7
	Q2K_CHUNK(1, 0, BITS_AND, Y2)
	Q2K_CHUNK(1, 1, BITS_SRL, Y2)
	Q2K_CHUNK(1, 2, BITS_SRL, Y2)
	Q2K_CHUNK(1, 3, BITS_SRL, Y2)
	HSUMD(Y6, X6, X7)
	VMOVD     X6, AX
	HSUMD(Y3, X3, X7)
	VMOVD     X3, BX
	KFLOAT_MIN(80)
	ADDQ      $84, SI
	ADDQ      $292, DI
	DECQ      CX
	JNE       q2kloop

q2kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func gemmQ4_Kx4AVX2(x, y *byte, ldy int, nb int, out *[4]float32)
