//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_k_amd64.h"

// The q2_K and q3_K four-row kernels: the K-format scheme of
// gemv_k_amd64.s (see there).

// gv2knib and gv2wpair are gemv_k_amd64.s's, package-level symbols
// shared by both files.

DATA gv2k03<>+0(SB)/8, $0x0303030303030303
GLOBL gv2k03<>(SB), RODATA|NOPTR, $8

DATA gv2k04<>+0(SB)/8, $0x0404040404040404
GLOBL gv2k04<>(SB), RODATA|NOPTR, $8

DATA gv2k32w<>+0(SB)/8, $0x0020002000200020
GLOBL gv2k32w<>(SB), RODATA|NOPTR, $8

// q2_K and q3_K had no four-row kernel in internal/dot; theirs follow
// the scheme of gemv_k_amd64.s (integer lanes as in dotQ2_KQ8_KAVX2 /
// dotQ3_KQ8_KAVX2).

// K2_Q2K_CHUNK(H, G, LOW, SC): elements 128H+32G..+31, codes (qs >> 2G) &
// 3 of Y7 into Y10 by LOW (BITS_SRL, BITS_AND for G = 0; Y14 = 0x03).
#define K2_Q2K_CHUNK(H, G, LOW, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	K2_ACCUM(Y10, 4+128*H+32*G, ·gv2wpair+32*G(SB), SC)

// K2_Q2K_ROW(H): H = VPHADDD(scaled-product lanes, min-term lanes) of
// the q2_K block at SI. Clobbers Y1-Y4, Y6, Y7, Y10, Y11.
#define K2_Q2K_ROW(H) \
	VMOVDQU   (SI), X1; \
	VPAND     X15, X1, X2; \
	VPSRLW    $4, X1, X3; \
	VPAND     X15, X3, X3; \
	VPMOVZXBW X2, Y2; \
	VPMOVZXBW X3, Y3; \
	VPMADDWD  260(DI), Y3, Y3; \
	VPERMQ    $0x44, Y2, Y4; \
	VPERMQ    $0xee, Y2, Y2; \
	VPXOR     Y6, Y6, Y6; \
	VMOVDQU   16(SI), Y7; \
	K2_Q2K_CHUNK(0, 0, BITS_AND, Y4); \
	K2_Q2K_CHUNK(0, 1, BITS_SRL, Y4); \
	K2_Q2K_CHUNK(0, 2, BITS_SRL, Y4); \
	K2_Q2K_CHUNK(0, 3, BITS_SRL, Y4); \
	VMOVDQU   48(SI), Y7; \
	K2_Q2K_CHUNK(1, 0, BITS_AND, Y2); \
	K2_Q2K_CHUNK(1, 1, BITS_SRL, Y2); \
	K2_Q2K_CHUNK(1, 2, BITS_SRL, Y2); \
	K2_Q2K_CHUNK(1, 3, BITS_SRL, Y2); \
	VPHADDD   Y3, Y6, H

// func q2_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// Twin: the generic q2_K dot product per row.
TEXT ·q2_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R11
	MOVQ         y+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), DX
	LEAQ         (R11)(R11*2), R12
	VPBROADCASTQ ·gv2knib(SB), Y15
	VPBROADCASTQ gv2k03<>(SB), Y14
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          gv2q2kdone

gv2q2kloop:
	K2_PFN2
	K2_Q2K_ROW(Y0)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y5)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y8)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y9)
	SUBQ R12, SI

	// X2 = the rows' scaled-product totals, X3 their min totals.
	VPHADDD      Y5, Y0, Y0
	VPHADDD      Y9, Y8, Y8
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VEXTRACTI128 $1, Y8, X1
	VPADDD       X1, X8, X8
	VSHUFPS      $0x88, X8, X0, X2
	VSHUFPS      $0xdd, X8, X0, X3
	VCVTDQ2PS    X2, X2
	VCVTDQ2PS    X3, X3

	// out[r] += (d_r*yd)*isum_r - (dmin_r*yd)*mins_r, as KFLOAT_MIN.
	VMOVD        80(SI), X4
	VPINSRD      $1, 80(SI)(R11*1), X4, X4
	VPINSRD      $2, 80(SI)(R11*2), X4, X4
	VPINSRD      $3, 80(SI)(R12*1), X4, X4
	VCVTPH2PS    X4, Y4
	VBROADCASTSS (DI), Y5
	VMULPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VSHUFPS      $0x88, X5, X4, X6
	VSHUFPS      $0xdd, X5, X4, X7
	VMULPS       X2, X6, X6
	VMULPS       X3, X7, X7
	VSUBPS       X7, X6, X6
	VADDPS       X6, X12, X12
	ADDQ         $84, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          gv2q2kloop

gv2q2kdone:
	VMOVUPS X12, (DX)
	VZEROUPPER
	RET

// K2_Q3K_CHUNK(H, G, LOW, HOP, HS, SC): elements 128H+32G..+31: low bits
// (qs >> 2G) & 3 from Y7 into Y10 by LOW, high bit 4H+G of the hmask
// bytes (Y13) moved to bit 2 in Y5 by HOP by HS (BITS_SLL, BITS_SRL,
// BITS_AND). Y14 = 0x03, Y8 = 0x04.
#define K2_Q3K_CHUNK(H, G, LOW, HOP, HS, SC) \
	LOW((2*G), Y7, Y14, Y10); \
	HOP(HS, Y13, Y8, Y5); \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 4+128*H+32*G, ·gv2wpair+32*G(SB), SC)

// Scale unpacking of two q3_K rows at once, in vector registers: for the
// 12 packed bytes s0..s11 at 96 (loaded from 94 so that the 16-byte load
// stays inside the 110-byte block), result byte j is (s[j%8] >> 4*(j/8))
// & 15 | ((s[8 + j%4] >> 2*(j/4)) & 3) << 4, the scale code j as the
// scalar code of dotQ3_KQ8_KAVX2 forms it.
DATA gv2q3lo<>+0(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+8(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+16(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+24(SB)/8, $0x0908070605040302
GLOBL gv2q3lo<>(SB), RODATA|NOPTR, $32

DATA gv2q3hi<>+0(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+8(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+16(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+24(SB)/8, $0x0d0c0b0a0d0c0b0a
GLOBL gv2q3hi<>(SB), RODATA|NOPTR, $32

DATA gv2q3slo<>+0(SB)/8, $0
DATA gv2q3slo<>+8(SB)/8, $0x0000000400000004
DATA gv2q3slo<>+16(SB)/8, $0
DATA gv2q3slo<>+24(SB)/8, $0x0000000400000004
GLOBL gv2q3slo<>(SB), RODATA|NOPTR, $32

DATA gv2q3shi<>+0(SB)/8, $0x0000000200000000
DATA gv2q3shi<>+8(SB)/8, $0x0000000600000004
DATA gv2q3shi<>+16(SB)/8, $0x0000000200000000
DATA gv2q3shi<>+24(SB)/8, $0x0000000600000004
GLOBL gv2q3shi<>(SB), RODATA|NOPTR, $32

DATA gv2m0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gv2m0f<>(SB), RODATA|NOPTR, $32

DATA gv2m30<>+0(SB)/8, $0x3030303030303030
DATA gv2m30<>+8(SB)/8, $0x3030303030303030
DATA gv2m30<>+16(SB)/8, $0x3030303030303030
DATA gv2m30<>+24(SB)/8, $0x3030303030303030
GLOBL gv2m30<>(SB), RODATA|NOPTR, $32

// K2_Q3SCALES2: Y1 = the sixteen scale codes of the q3_K block at SI (low
// half) and of the one at SI + R11 (high half). Clobbers Y2.
#define K2_Q3SCALES2 \
	VMOVDQU     94(SI), X1; \
	VINSERTI128 $1, 94(SI)(R11*1), Y1, Y1; \
	VPSHUFB     gv2q3lo<>(SB), Y1, Y2; \
	VPSRLVD     gv2q3slo<>(SB), Y2, Y2; \
	VPAND       gv2m0f<>(SB), Y2, Y2; \
	VPSHUFB     gv2q3hi<>(SB), Y1, Y1; \
	VPSRLVD     gv2q3shi<>(SB), Y1, Y1; \
	VPSLLD      $4, Y1, Y1; \
	VPAND       gv2m30<>(SB), Y1, Y1; \
	VPOR        Y2, Y1, Y1

// K2_Q3K_ROWS: X6 = the fold (K2_GV_FOLD) of the q3_K block at SI's
// scaled-product and offset lanes, formed as in dotQ3_KQ8_KAVX2, with the
// scale codes given in X1.
#define K2_Q3K_ROWS \
	VPMOVZXBW X1, Y2; \
	VPSUBW    Y15, Y2, Y2; \
	VPMADDWD  260(DI), Y2, Y3; \
	VPERMQ    $0x44, Y2, Y4; \
	VPERMQ    $0xee, Y2, Y2; \
	VMOVDQU   (SI), Y13; \
	VPXOR     Y6, Y6, Y6; \
	VMOVDQU   32(SI), Y7; \
	K2_Q3K_CHUNK(0, 0, BITS_AND, BITS_SLL, 2, Y4); \
	K2_Q3K_CHUNK(0, 1, BITS_SRL, BITS_SLL, 1, Y4); \
	K2_Q3K_CHUNK(0, 2, BITS_SRL, BITS_AND, 0, Y4); \
	K2_Q3K_CHUNK(0, 3, BITS_SRL, BITS_SRL, 1, Y4); \
	VMOVDQU   64(SI), Y7; \
	K2_Q3K_CHUNK(1, 0, BITS_AND, BITS_SRL, 2, Y2); \
	K2_Q3K_CHUNK(1, 1, BITS_SRL, BITS_SRL, 3, Y2); \
	K2_Q3K_CHUNK(1, 2, BITS_SRL, BITS_SRL, 4, Y2); \
	K2_Q3K_CHUNK(1, 3, BITS_SRL, BITS_SRL, 5, Y2); \
	K2_GV_FOLD(Y3)

// K2_Q3K_FN2(LOOP, DONE, PF): the body of q3_Kx4AVX2, PF before each
// row's block, with the scale codes of two rows
// unpacked at once (K2_Q3SCALES2) and kept on the stack (scl, 32 bytes)
// until their row's turn.
#define K2_Q3K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gv2k03<>(SB), Y14; \
	VPBROADCASTQ gv2k04<>(SB), Y8; \
	VPBROADCASTQ gv2k32w<>(SB), Y15; \
	VXORPS X9, X9, X9; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	K2_Q3K_ROWS; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	K2_Q3K_ROWS; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	PF; \
	K2_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	K2_Q3K_ROWS; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	K2_Q3K_ROWS; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI; \
	K2_GV_COMBINE; \
	VPSLLD $2, X5, X5; \
	VPSUBD X5, X4, X4; \
	VCVTDQ2PS X4, X4; \
	MOVWLZX 108(SI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, 108(SI)(R11*1), X6, X6; \
	VPINSRW $2, 108(SI)(R11*2), X6, X6; \
	VPINSRW $3, 108(SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VBROADCASTSS (DI), X7; \
	VMULPS X7, X6, X6; \
	VMULPS X4, X6, X6; \
	VADDPS X6, X9, X9; \
	ADDQ $110, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	MOVQ out+32(FP), DX; \
	VMOVUPS X9, (DX); \
	VZEROUPPER; \
	RET

TEXT ·q3_Kx4AVX2(SB), NOSPLIT, $32-40
	K2_Q3K_FN2(gv2q3kloop, gv2q3kdone, K2_PFN2)

