//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_k_amd64.h"

// K-format four-row kernels (q2_K to q6_K): four q8_K-activation dot products side by side, each
// row's integer lanes formed exactly as in its dot product, the rows'
// totals reduced together (exact integer sums, so the order does not
// matter), and the dot product's float32 step run on the four rows' lanes
// at once with the same operations in the same order, so every out[r]
// equals the dot product (and the generic function) bit for bit. Besides
// the next-step prefetch, q3_K, q4_K and q5_K unpack the packed 6-bit
// scale codes of two rows at once in vector registers, where the dot
// products spend some thirty scalar instructions per row and block.
// internal/dot's K-format macros and constants (dotk_amd64.s,
// gemmk_amd64.s) are copied here with a K2_ / gv2 prefix (assembler
// macros and static data are per file); those the q2_K and q3_K kernels
// (gemv_q2k_q3k_amd64.s) share are in gemv_k_amd64.h.

DATA ·gv2knib+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL ·gv2knib(SB), RODATA|NOPTR, $8

DATA gv2k10<>+0(SB)/8, $0x1010101010101010
GLOBL gv2k10<>(SB), RODATA|NOPTR, $8

DATA gv2k30<>+0(SB)/8, $0x3030303030303030
GLOBL gv2k30<>(SB), RODATA|NOPTR, $8

DATA ·gv2wpair+0(SB)/8, $0x0100010001000100
DATA ·gv2wpair+8(SB)/8, $0x0100010001000100
DATA ·gv2wpair+16(SB)/8, $0x0302030203020302
DATA ·gv2wpair+24(SB)/8, $0x0302030203020302
DATA ·gv2wpair+32(SB)/8, $0x0504050405040504
DATA ·gv2wpair+40(SB)/8, $0x0504050405040504
DATA ·gv2wpair+48(SB)/8, $0x0706070607060706
DATA ·gv2wpair+56(SB)/8, $0x0706070607060706
DATA ·gv2wpair+64(SB)/8, $0x0908090809080908
DATA ·gv2wpair+72(SB)/8, $0x0908090809080908
DATA ·gv2wpair+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·gv2wpair+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA ·gv2wpair+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·gv2wpair+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA ·gv2wpair+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA ·gv2wpair+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL ·gv2wpair(SB), RODATA|NOPTR, $128

// K2_Q5K_PAIR(JJ, LOP, LS, HOP, HS): as K2B_Q4K_PAIR with the fifth bits of Y13
// (bit j of byte l is element l of sub-block j) moved to bit 4 by
// LOP and HOP (BITS_SLL, BITS_SRL, BITS_AND by LS and HS; Y14 = 0x10) into
// Y9 and Y10.
#define K2_Q5K_PAIR(JJ, LOP, LS, HOP, HS) \
	VMOVDQU 48+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	LOP(LS, Y13, Y14, Y9); \
	VPOR Y9, Y7, Y7; \
	HOP(HS, Y13, Y14, Y10); \
	VPOR Y10, Y8, Y8; \
	K2_ACCUM(Y7, 4+64*JJ, gv2bbcast<>+64*JJ(SB), Y3); \
	K2_ACCUM(Y8, 36+64*JJ, gv2bbcast<>+64*JJ+32(SB), Y3)

// K2_Q6K_HALF(H, SC): the 128 elements of half H; SC holds the eight scale
// words of the half in both lanes. Y15 = 0x0f, Y14 = 0x30.
#define K2_Q6K_HALF(H, SC) \
	VMOVDQU 64*H(SI), Y7; \
	VMOVDQU 64*H+32(SI), Y8; \
	VMOVDQU 128+32*H(SI), Y9; \
	VPAND Y15, Y7, Y10; \
	VPSLLW $4, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 4+128*H, ·gv2wpair+0(SB), SC); \
	VPAND Y15, Y8, Y10; \
	VPSLLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 36+128*H, ·gv2wpair+32(SB), SC); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y15, Y10, Y10; \
	VPAND Y14, Y9, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 68+128*H, ·gv2wpair+64(SB), SC); \
	VPSRLW $4, Y8, Y10; \
	VPAND Y15, Y10, Y10; \
	VPSRLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 100+128*H, ·gv2wpair+96(SB), SC)

// K2_Q6K_ROW: Y6 and Y3 for the q6_K block at SI.
#define K2_Q6K_ROW \
	VPMOVSXBW 192(SI), Y2; \
	VPMADDWD 260(DI), Y2, Y3; \
	VPERMQ $0x44, Y2, Y4; \
	VPERMQ $0xee, Y2, Y2; \
	VPXOR Y6, Y6, Y6; \
	K2_Q6K_HALF(0, Y4); \
	K2_Q6K_HALF(1, Y2); \
	K2_GV_FOLD(Y3)

// K2_GV_ROWS(ROW): the four rows' folds into Y0 and Y12, SI back at row 0.
#define K2_GV_ROWS(ROW) \
	ROW; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	ROW; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	ROW; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	ROW; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI

// Scale unpacking of two q4_K/q5_K rows at once, in vector registers
// (instead of internal/dot's KSCALES scalar code, about a fifth of the
// four-row kernel's time): for the 12 packed bytes s0..s11 of a row, the result
// bytes are s0-3 & 63 (scales 0-3), (s8-11 & 15) | (s0-3 >> 6) << 4
// (scales 4-7), s4-7 & 63 (mins 0-3), (s8-11 >> 4) | (s4-7 >> 6) << 4
// (mins 4-7), exactly KSCALES's.
DATA gv2ksh1<>+0(SB)/8, $0x0b0a090803020100
DATA gv2ksh1<>+8(SB)/8, $0x0b0a090807060504
DATA gv2ksh1<>+16(SB)/8, $0x0b0a090803020100
DATA gv2ksh1<>+24(SB)/8, $0x0b0a090807060504
GLOBL gv2ksh1<>(SB), RODATA|NOPTR, $32

DATA gv2ksh2<>+0(SB)/8, $0x0302010080808080
DATA gv2ksh2<>+8(SB)/8, $0x0706050480808080
DATA gv2ksh2<>+16(SB)/8, $0x0302010080808080
DATA gv2ksh2<>+24(SB)/8, $0x0706050480808080
GLOBL gv2ksh2<>(SB), RODATA|NOPTR, $32

DATA gv2km1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL gv2km1<>(SB), RODATA|NOPTR, $32

DATA gv2km3<>+0(SB)/8, $0x3030303000000000
DATA gv2km3<>+8(SB)/8, $0x3030303000000000
DATA gv2km3<>+16(SB)/8, $0x3030303000000000
DATA gv2km3<>+24(SB)/8, $0x3030303000000000
GLOBL gv2km3<>(SB), RODATA|NOPTR, $32

// K2_KSCALES2: Y12 = KSCALES's X1 for the block at SI (low half) and the
// one at SI + R11 (high half). A = bytes [s0-3, s8-11, s4-7, s8-11];
// dword 3 is taken from A >> 4; B = [0, s0-3, 0, s4-7] gives the high
// two bits. Clobbers Y1, Y2.
#define K2_KSCALES2 \
	VMOVDQU      4(SI), X12; \
	VINSERTI128  $1, 4(SI)(R11*1), Y12, Y12; \
	VPSHUFB      gv2ksh1<>(SB), Y12, Y1; \
	VPSHUFB      gv2ksh2<>(SB), Y12, Y12; \
	VPSRLW       $4, Y1, Y2; \
	VPBLENDD     $0x88, Y2, Y1, Y1; \
	VPAND        gv2km1<>(SB), Y1, Y1; \
	VPSRLW       $2, Y12, Y12; \
	VPAND        gv2km3<>(SB), Y12, Y12; \
	VPOR         Y1, Y12, Y12

// q4_K's and q5_K's scale vectors straight from the scale bytes (round
// 2): Y3 = the row's 16 scale-code bytes (K2_KSCALES2's: scales 0-7,
// then mins 0-7) in both lanes, by one VPERMQ; K2_ACCUM's VPSHUFB then
// picks scale byte j with a zero high byte (gv2bbcast: scale j as
// words), and one more VPSHUFB (gv2kminpat) spreads the mins as words
// [m_j, m_j] against the bsum pairs for the min term's VPMADDWD. Three
// instructions per row and block where the first version widened the
// codes to words, split and duplicated the mins (seven) and moved the
// row's codes into X1 first; every integer lane is the same, so the
// results are too (q4_K about 12% faster from L1).
DATA gv2bbcast<>+0(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+8(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+16(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+24(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+32(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+40(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+48(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+56(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+64(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+72(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+80(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+88(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+96(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+104(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+112(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+120(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+128(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+136(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+144(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+152(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+160(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+168(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+176(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+184(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+192(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+200(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+208(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+216(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+224(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+232(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+240(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+248(SB)/8, $0x8007800780078007
GLOBL gv2bbcast<>(SB), RODATA|NOPTR, $256

DATA gv2kminpat<>+0(SB)/8, $0x8009800980088008
DATA gv2kminpat<>+8(SB)/8, $0x800b800b800a800a
DATA gv2kminpat<>+16(SB)/8, $0x800d800d800c800c
DATA gv2kminpat<>+24(SB)/8, $0x800f800f800e800e
GLOBL gv2kminpat<>(SB), RODATA|NOPTR, $32

// K2B_Q4K_PAIR(JJ): sub-blocks 2JJ (low nibbles) and 2JJ+1 (high
// nibbles), their codes times y and then their scales (bytes in Y3),
// into Y6.
#define K2B_Q4K_PAIR(JJ) \
	VMOVDQU 16+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	K2_ACCUM(Y7, 4+64*JJ, gv2bbcast<>+64*JJ(SB), Y3); \
	K2_ACCUM(Y8, 36+64*JJ, gv2bbcast<>+64*JJ+32(SB), Y3)

// K2B_Q4K_ROWS(H, PERM): H = VPHADDD(scaled-product lanes, min-term
// lanes) of the q4_K block at SI, formed as in dotQ4_KQ8_KAVX2, for the
// row whose scale codes VPERMQ $PERM takes from Y12 (0x44: the low
// lane's row, 0xee: the high lane's). Clobbers Y3-Y8, Y11.
#define K2B_Q4K_ROWS(H, PERM) \
	VPERMQ $PERM, Y12, Y3; \
	VPSHUFB gv2kminpat<>(SB), Y3, Y4; \
	VPMADDWD 260(DI), Y4, Y4; \
	VPXOR Y6, Y6, Y6; \
	K2B_Q4K_PAIR(0); \
	K2B_Q4K_PAIR(1); \
	K2B_Q4K_PAIR(2); \
	K2B_Q4K_PAIR(3); \
	VPHADDD Y4, Y6, H

// K2_Q4K_FN2(LOOP, DONE, PF): the body of q4_Kx4AVX2, PF before each
// row's block, the scale codes of rows 0-1 and 2-3 unpacked together
// into Y12.
#define K2_Q4K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ ·gv2knib(SB), Y15; \
	VXORPS X14, X14, X14; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_KSCALES2; \
	K2B_Q4K_ROWS(Y0, 0x44); \
	ADDQ R11, SI; \
	PF; \
	K2B_Q4K_ROWS(Y9, 0xee); \
	ADDQ R11, SI; \
	PF; \
	K2_KSCALES2; \
	K2B_Q4K_ROWS(Y10, 0x44); \
	ADDQ R11, SI; \
	PF; \
	K2B_Q4K_ROWS(Y13, 0xee); \
	SUBQ R12, SI; \
	VPHADDD Y9, Y0, Y0; \
	VPHADDD Y13, Y10, Y10; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VEXTRACTI128 $1, Y10, X1; \
	VPADDD X1, X10, X10; \
	VSHUFPS $0x88, X10, X0, X2; \
	VSHUFPS $0xdd, X10, X0, X3; \
	VCVTDQ2PS X2, X2; \
	VCVTDQ2PS X3, X3; \
	VMOVD (SI), X4; \
	VPINSRD $1, (SI)(R11*1), X4, X4; \
	VPINSRD $2, (SI)(R11*2), X4, X4; \
	VPINSRD $3, (SI)(R12*1), X4, X4; \
	VCVTPH2PS X4, Y4; \
	VBROADCASTSS (DI), Y5; \
	VMULPS Y5, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VSHUFPS $0x88, X5, X4, X6; \
	VSHUFPS $0xdd, X5, X4, X7; \
	VMULPS X2, X6, X6; \
	VMULPS X3, X7, X7; \
	VSUBPS X7, X6, X6; \
	VADDPS X6, X14, X14; \
	ADDQ $144, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS X14, (DX); \
	VZEROUPPER; \
	RET

// K2_Q5K_ROWS: X6 = the fold (K2_GV_FOLD) of the q5_K block at SI's
// scaled-product and min-term lanes, formed as in dotQ5_KQ8_KAVX2, with
// the scale codes given in X1 (spread as for q4_K: gv2bbcast,
// gv2kminpat).
#define K2_Q5K_ROWS \
	VPERMQ $0x44, Y1, Y3; \
	VPSHUFB gv2kminpat<>(SB), Y3, Y4; \
	VPMADDWD 260(DI), Y4, Y4; \
	VMOVDQU 16(SI), Y13; \
	VPXOR Y6, Y6, Y6; \
	K2_Q5K_PAIR(0, BITS_SLL, 4, BITS_SLL, 3); \
	K2_Q5K_PAIR(1, BITS_SLL, 2, BITS_SLL, 1); \
	K2_Q5K_PAIR(2, BITS_AND, 0, BITS_SRL, 1); \
	K2_Q5K_PAIR(3, BITS_SRL, 2, BITS_SRL, 3); \
	K2_GV_FOLD(Y4)

// K2_Q5K_FN2(LOOP, DONE, PF): the body of q5_Kx4AVX2, PF before each
// row's block, the scale codes of two rows unpacked at once (K2_KSCALES2) and kept on the stack (scl, 32 bytes)
// until their row's turn: Y12 parks folds, no register is left.
#define K2_Q5K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ ·gv2knib(SB), Y15; \
	VPBROADCASTQ gv2k10<>(SB), Y14; \
	VXORPS X0, X0, X0; \
	VMOVUPS X0, acc-16(SP); \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_KSCALES2; \
	VMOVDQU Y12, scl-48(SP); \
	VMOVDQA X12, X1; \
	K2_Q5K_ROWS; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-32(SP), X1; \
	K2_Q5K_ROWS; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	PF; \
	K2_KSCALES2; \
	VMOVDQU Y12, scl-48(SP); \
	VMOVDQA X12, X1; \
	K2_Q5K_ROWS; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-32(SP), X1; \
	K2_Q5K_ROWS; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI; \
	K2_GV_COMBINE; \
	VCVTDQ2PS X4, X4; \
	VCVTDQ2PS X5, X5; \
	VMOVD (SI), X6; \
	VPINSRD $1, (SI)(R11*1), X6, X6; \
	VPINSRD $2, (SI)(R11*2), X6, X6; \
	VPINSRD $3, (SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, Y6; \
	VBROADCASTSS (DI), Y7; \
	VMULPS Y7, Y6, Y6; \
	VEXTRACTF128 $1, Y6, X7; \
	VSHUFPS $0x88, X7, X6, X8; \
	VSHUFPS $0xdd, X7, X6, X9; \
	VMULPS X4, X8, X8; \
	VMULPS X5, X9, X9; \
	VSUBPS X9, X8, X8; \
	VADDPS acc-16(SP), X8, X8; \
	VMOVUPS X8, acc-16(SP); \
	ADDQ $176, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS acc-16(SP), X0; \
	VMOVUPS X0, (DX); \
	VZEROUPPER; \
	RET

// K2_Q6K_FN(LOOP, DONE, PF): the body of q6_Kx4AVX2, PF before each
// row's block.
#define K2_Q6K_FN(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ ·gv2knib(SB), Y15; \
	VPBROADCASTQ gv2k30<>(SB), Y14; \
	VXORPS X13, X13, X13; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	K2_GV_ROWS(PF; K2_Q6K_ROW); \
	K2_GV_COMBINE; \
	VPSLLD $5, X5, X5; \
	VPSUBD X5, X4, X4; \
	VCVTDQ2PS X4, X4; \
	MOVWLZX 208(SI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, 208(SI)(R11*1), X6, X6; \
	VPINSRW $2, 208(SI)(R11*2), X6, X6; \
	VPINSRW $3, 208(SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VBROADCASTSS (DI), X7; \
	VMULPS X7, X6, X6; \
	VMULPS X4, X6, X6; \
	VADDPS X6, X13, X13; \
	ADDQ $210, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS X13, (DX); \
	VZEROUPPER; \
	RET

// func q4_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// The scale codes unpacked two rows at a time in vector registers
// (K2_KSCALES2) and next-step prefetch: equal to the dot product bit for
// bit.
TEXT ·q4_Kx4AVX2(SB), NOSPLIT, $0-40
	K2_Q4K_FN2(gv2q4kloop, gv2q4kdone, K2_PFN3)

// func q5_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// The scale codes unpacked two rows at a time and next-step prefetch:
// equal to the dot product bit for bit.
TEXT ·q5_Kx4AVX2(SB), NOSPLIT, $48-40
	K2_Q5K_FN2(gv2q5kloop, gv2q5kdone, K2_PFN3)

// func q6_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// With next-step prefetch: equal to the dot product bit for bit.
TEXT ·q6_Kx4AVX2(SB), NOSPLIT, $0-40
	K2_Q6K_FN(gv2q6kloop, gv2q6kdone, K2_PFN4)

