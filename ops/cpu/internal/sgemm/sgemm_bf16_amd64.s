//go:build amd64 && !purego

#include "textflag.h"
#include "sgemm_avx512_amd64.h"

// The six-row by thirty-two-column bfloat16 pair micro-kernel of the
// packed gemm path (package cpu's mul_mat_sgemm.go) in AVX-512 BF16: two
// adjacent sixteen-column panels, packed in pairs of k (PairIndex), and
// six bfloat16 weight rows read in place; k unrolled by eight (four
// VDPBF16PS steps). TwinBF16 (bf16.go) is its bit-exact twin.

// DPBF16(dst, s1, s2) is VDPBF16PS Z(s2), Z(s1), Z(dst): lane i of Z(dst)
// plus the products of the bfloat16 pairs in lane i of Z(s1) and Z(s2).
// The Go assembler lacks AVX-512 BF16, so it is written as its EVEX
// bytes (EVEX.512.F3.0F38.W0 52 /r, register operands): the prefix
// carries the inverted high bits of dst (R, R'), s2 (B, X) and s1
// (vvvv, V'), ModRM dst's and s2's low three bits.
#define DPBF16(dst, s1, s2) \
	BYTE $0x62; \
	BYTE $(((1-((dst>>3)&1))<<7) | ((1-((s2>>4)&1))<<6) | ((1-((s2>>3)&1))<<5) | ((1-((dst>>4)&1))<<4) | 0x02); \
	BYTE $(((15-(s1&15))<<3) | 0x06); \
	BYTE $(0x40 | ((1-((s1>>4)&1))<<3)); \
	BYTE $0x52; \
	BYTE $(0xC0 | ((dst&7)<<3) | (s2&7))

// SG6BF(boff, aoff) is one pair of k steps: the pairs of panel 0 at
// boff(DI) and of panel 1 at boff(DI)(R10*1) with each of the six weight
// rows' pair at aoff, into Z0-Z11 (row r in Z(2r) for panel 0, Z(2r+1)
// for panel 1).
#define SG6BF(boff, aoff) \
	VMOVDQU32    boff(DI), Z12; \
	VMOVDQU32    boff(DI)(R10*1), Z13; \
	VPBROADCASTD aoff(SI), Z14; \
	VPBROADCASTD aoff(SI)(R8*1), Z15; \
	VPBROADCASTD aoff(SI)(R8*2), Z16; \
	VPBROADCASTD aoff(R9), Z17; \
	VPBROADCASTD aoff(R9)(R8*1), Z18; \
	VPBROADCASTD aoff(R9)(R8*2), Z19; \
	DPBF16(0, 12, 14); \
	DPBF16(1, 13, 14); \
	DPBF16(2, 12, 15); \
	DPBF16(3, 13, 15); \
	DPBF16(4, 12, 16); \
	DPBF16(5, 13, 16); \
	DPBF16(6, 12, 17); \
	DPBF16(7, 13, 17); \
	DPBF16(8, 12, 18); \
	DPBF16(9, 13, 18); \
	DPBF16(10, 12, 19); \
	DPBF16(11, 13, 19)

// func sgemm6x32BF16(pairs int, a *uint16, lda int, b *uint16, bstride int, c *float32, ldc int, pf *byte, pfstep int)
//
// c[r*ldc + p*16 + j] += the sum over the pairs of k, in order, of
// VDPBF16PS of weight row r's pair (a, row stride lda) and column j's
// pair of panel p (b, panel 1 bstride elements on), for r < 6, p < 2,
// j < 16, each summed from zero and then added to c. lda and bstride
// are in bfloat16 elements, ldc in float32 elements. Each pass of the
// unrolled loop (four pairs) prefetches the line at pf, pf advancing
// pfstep bytes a pass (floor(pairs/4) lines in all).
TEXT ·sgemm6x32BF16(SB), NOSPLIT, $0-72
	MOVQ pairs+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ bstride+32(FP), R10
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R11
	MOVQ pf+56(FP), R12
	MOVQ pfstep+64(FP), R13
	SHLQ $1, R8
	SHLQ $1, R10
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
	ADDQ SI, R9
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ CX, BX
	SHRQ $2, BX
	JEQ  sg6bftail

sg6bfloop4:
	PREFETCHT0 (R12)
	SG6BF(0, 0)
	SG6BF(64, 4)
	SG6BF(128, 8)
	SG6BF(192, 12)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $256, DI
	ADDQ R13, R12
	DECQ BX
	JNE  sg6bfloop4

sg6bftail:
	ANDQ $3, CX
	JEQ  sg6bfstore

sg6bfloop1:
	SG6BF(0, 0)
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $64, DI
	DECQ CX
	JNE  sg6bfloop1

sg6bfstore:
	SG6ZSTORE(Z0, Z1)
	ADDQ R11, DX
	SG6ZSTORE(Z2, Z3)
	ADDQ R11, DX
	SG6ZSTORE(Z4, Z5)
	ADDQ R11, DX
	SG6ZSTORE(Z6, Z7)
	ADDQ R11, DX
	SG6ZSTORE(Z8, Z9)
	ADDQ R11, DX
	SG6ZSTORE(Z10, Z11)
	VZEROUPPER
	RET
