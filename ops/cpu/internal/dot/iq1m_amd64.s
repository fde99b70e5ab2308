//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ1_M against q8_K (iqgrid.go's IQ1_M, block by block):
// the grid part sum(ls * sum(g*y)) and the shift part
// sum(ls * delta * sum(y)), ls = 2*code+1 per 16 elements and delta = -1
// or +1 per 8. A group of 8's 11-bit grid index is its qs byte with the
// low 3 bits of its qh nibble as bits 8..10, built in scalar registers,
// and the four 8-byte entries of a sub-block are loaded one by one and
// inserted (VPGATHERDQ is microcoded and slower on AMD Zen 2 and 3); the
// nibble's bit 3 is delta's sign, expanded to a vector of -1 and +1 bytes
// that goes through the same multiply-add as the grid values. Both sums
// are stored and joined into a float32 sum with the super-block scale
// (assembled from the scale words' top nibbles) as the generic kernel
// does (FSCALE1), so the kernel equals it bit for bit.

// IQ1MIDX sets AX to the 11-bit index of group l: qs byte l (at
// qsoff+l(R12)) with the low 3 bits of nibble l of the qh word in R15 as
// bits 8..10 (sh shifts them there). Clobbers BX.
#define IQ1MIDX(qsoff, l, sh) \
	MOVBLZX qsoff+l(R12), AX; \
	MOVL R15, BX; \
	sh, BX; \
	ANDL $0x700, BX; \
	ORL BX, AX

// iq1mExpand: VPSHUFB indexes that copy byte 0 of a broadcast dword to
// elements 0..15 and byte 1 to 16..31 (the qh bytes of groups 0, 1 and
// 2, 3).
DATA iq1mExpand<>+0x00(SB)/8, $0x0000000000000000
DATA iq1mExpand<>+0x08(SB)/8, $0x0000000000000000
DATA iq1mExpand<>+0x10(SB)/8, $0x0101010101010101
DATA iq1mExpand<>+0x18(SB)/8, $0x0101010101010101
GLOBL iq1mExpand<>(SB), RODATA|NOPTR, $32

// iq1mSign: the delta sign bit of each element's group: bit 3 of its qh
// byte for groups 0 and 2, bit 7 for groups 1 and 3.
DATA iq1mSign<>+0x00(SB)/8, $0x0808080808080808
DATA iq1mSign<>+0x08(SB)/8, $0x8080808080808080
DATA iq1mSign<>+0x10(SB)/8, $0x0808080808080808
DATA iq1mSign<>+0x18(SB)/8, $0x8080808080808080
GLOBL iq1mSign<>(SB), RODATA|NOPTR, $32

// IQ1MSUB adds sub-block's sums to Y0 (grid) and Y14 (shift): its qs at
// qsoff(R12), its qh word at qhoff(R14), its codes at yoff(R13), its
// scale codes in bits shift..shift+5 of R11. Clobbers AX, BX, R15.
#define IQ1MSUB(qsoff, qhoff, yoff, shift) \
	MOVWLZX qhoff(R14), R15; \
	IQ1MIDX(qsoff, 0, SHLL $8); \
	VMOVQ (R8)(AX*8), X2; \
	IQ1MIDX(qsoff, 1, SHLL $4); \
	VPINSRQ $1, (R8)(AX*8), X2, X2; \
	IQ1MIDX(qsoff, 2, SHLL $0); \
	VMOVQ (R8)(AX*8), X3; \
	IQ1MIDX(qsoff, 3, SHRL $4); \
	VPINSRQ $1, (R8)(AX*8), X3, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VMOVD R15, X4; \
	VPBROADCASTD X4, Y4; \
	VPSHUFB Y9, Y4, Y4; \
	VPAND Y10, Y4, Y4; \
	VPCMPEQB Y10, Y4, Y4; \
	VPOR Y15, Y4, Y4; \
	VMOVDQU yoff(R13), Y5; \
	VPSIGNB Y5, Y5, Y6; \
	MOVL R11, AX; \
	SHRL $shift, AX; \
	MOVL AX, BX; \
	ANDL $7, AX; \
	SHRL $3, BX; \
	ANDL $7, BX; \
	SCALE2(AX, BX); \
	GDOT(Y2, Y0); \
	GDOT(Y4, Y14)

// func iq1mSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[2b] = the grid part and out[2b+1] the shift part of the
// iq1_m block at x + 56b with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq1mSumsAVX2(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	VMOVDQU iq1mExpand<>(SB), Y9
	VMOVDQU iq1mSign<>(SB), Y10
	VPCMPEQB Y15, Y15, Y15
	VPABSB Y15, Y15 // bytes 1

iq1mblock:
	TESTQ CX, CX
	JZ    iq1mdone
	VPXOR Y0, Y0, Y0
	VPXOR Y14, Y14, Y14
	MOVQ  SI, R12
	LEAQ  32(SI), R14
	LEAQ  48(SI), R9
	LEAQ  4(DI), R13
	MOVQ  $4, R10

iq1mpair:
	// Sub-blocks 2p and 2p+1 share scale word p.
	MOVWLZX (R9), R11
	IQ1MSUB(0, 0, 0, 0)
	IQ1MSUB(4, 2, 32, 6)
	ADDQ $8, R12
	ADDQ $4, R14
	ADDQ $2, R9
	ADDQ $64, R13
	DECQ R10
	JNZ  iq1mpair

	HSUM(Y0, X0, (DX))
	HSUM(Y14, X14, 4(DX))
	// The super-block scale: the top nibbles of the four scale words.
	MOVWLZX 48(SI), AX
	SHRL $12, AX
	MOVWLZX 50(SI), BX
	SHRL $8, BX
	ANDL $0xf0, BX
	ORL BX, AX
	MOVWLZX 52(SI), BX
	SHRL $4, BX
	ANDL $0xf00, BX
	ORL BX, AX
	MOVWLZX 54(SI), BX
	ANDL $0xf000, BX
	ORL BX, AX
	FDX(AX)
	FSCALE1(X0, X14, X11)
	ADDQ $56, SI
	ADDQ $292, DI
	ADDQ $8, DX
	DECQ CX
	JMP  iq1mblock

iq1mdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
