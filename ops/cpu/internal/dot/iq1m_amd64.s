//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ1_M against q8_K (iqgrid.go's IQ1_M, block by block):
// the grid part sum(ls * sum(g*y)) and the shift part
// sum(ls * delta * sum(y)), ls = 2*code+1 per 16 elements and delta = -1
// or +1 per 8. A group of 8's 11-bit grid index is its qs byte with the
// low 3 bits of its qh nibble as bits 8..10, made in scalar registers,
// and the four 8-byte entries of a sub-block are
// loaded one by one and inserted (VPGATHERDQ is microcoded and slower on
// AMD Zen 2 and 3); the scales of the eight sub-blocks are built once
// per super-block (SCALE2J picks each sub-block's); the nibble's bit 3
// is delta's sign, expanded to a vector of -1 and +1 bytes that goes
// through the same multiply-add as the grid values. Both sums
// are stored and joined into a float32 sum with the super-block scale
// (assembled from the scale words' top nibbles) as the generic kernel
// does (FSCALE1), so the kernel equals it bit for bit.

// iq1mSeven: dwords 7; iq1mOnes: bytes 1.
DATA iq1mSeven<>+0x00(SB)/8, $0x0000000700000007
DATA iq1mSeven<>+0x08(SB)/8, $0x0000000700000007
DATA iq1mSeven<>+0x10(SB)/8, $0x0000000700000007
DATA iq1mSeven<>+0x18(SB)/8, $0x0000000700000007
GLOBL iq1mSeven<>(SB), RODATA|NOPTR, $32
DATA iq1mOnes<>+0x00(SB)/8, $0x0101010101010101
DATA iq1mOnes<>+0x08(SB)/8, $0x0101010101010101
DATA iq1mOnes<>+0x10(SB)/8, $0x0101010101010101
DATA iq1mOnes<>+0x18(SB)/8, $0x0101010101010101
GLOBL iq1mOnes<>(SB), RODATA|NOPTR, $32

// iq1mDup: VPERMD indexes that copy dword i of the low lane to dwords
// 2i and 2i+1; iq1mScShift: the VPSRLVD counts that move a scale word's
// codes of sub-block 2p+(j%2) (bits 6*(j%2)..) to bit 0 in dword j;
// iq1mWord1: dwords 0x00010001.
DATA iq1mDup<>+0x00(SB)/8, $0x0000000000000000
DATA iq1mDup<>+0x08(SB)/8, $0x0000000100000001
DATA iq1mDup<>+0x10(SB)/8, $0x0000000200000002
DATA iq1mDup<>+0x18(SB)/8, $0x0000000300000003
GLOBL iq1mDup<>(SB), RODATA|NOPTR, $32
DATA iq1mScShift<>+0x00(SB)/8, $0x0000000600000000
DATA iq1mScShift<>+0x08(SB)/8, $0x0000000600000000
DATA iq1mScShift<>+0x10(SB)/8, $0x0000000600000000
DATA iq1mScShift<>+0x18(SB)/8, $0x0000000600000000
GLOBL iq1mScShift<>(SB), RODATA|NOPTR, $32
DATA iq1mWord1<>+0x00(SB)/8, $0x0001000100010001
DATA iq1mWord1<>+0x08(SB)/8, $0x0001000100010001
DATA iq1mWord1<>+0x10(SB)/8, $0x0001000100010001
DATA iq1mWord1<>+0x18(SB)/8, $0x0001000100010001
GLOBL iq1mWord1<>(SB), RODATA|NOPTR, $32

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

// IQ1MSUB adds a sub-block's sums to Y0 (grid) and Y8 (shift): its qs
// at qsoff(R12), its qh word at qhoff(R14), its codes at yoff(R13), its
// scales from SCALE2J. The four 11-bit grid indices (a qs byte, the low 3
// bits of its group's qh nibble as bits 8..10) are made in scalar
// registers from the bytes, two at a time (building them in a vector and
// moving them out took about a third longer a row). Clobbers AX, BX, R9,
// R15.
#define IQ1MSUB(qsoff, qhoff, yoff) \
	MOVWLZX qhoff(R14), R15; \
	MOVBLZX qsoff+0(R12), AX; \
	MOVL R15, R9; \
	SHLL $8, R9; \
	ANDL $0x700, R9; \
	ORL R9, AX; \
	MOVBLZX qsoff+1(R12), BX; \
	MOVL R15, R9; \
	SHLL $4, R9; \
	ANDL $0x700, R9; \
	ORL R9, BX; \
	VMOVQ (R8)(AX*8), X2; \
	VPINSRQ $1, (R8)(BX*8), X2, X2; \
	MOVBLZX qsoff+2(R12), AX; \
	MOVL R15, R9; \
	ANDL $0x700, R9; \
	ORL R9, AX; \
	MOVBLZX qsoff+3(R12), BX; \
	SHRL $4, R15; \
	ANDL $0x700, R15; \
	ORL R15, BX; \
	VMOVQ (R8)(AX*8), X3; \
	VPINSRQ $1, (R8)(BX*8), X3, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPBROADCASTW qhoff(R14), Y4; \
	VPSHUFB Y9, Y4, Y4; \
	VPAND Y10, Y4, Y4; \
	VPCMPEQB Y10, Y4, Y4; \
	VPOR iq1mOnes<>(SB), Y4, Y4; \
	LOADY(yoff(R13)); \
	SCALE2J; \
	GDOT(Y2, Y0); \
	GDOT(Y4, Y8)

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
	SCALES2SETUP

iq1mblock:
	TESTQ CX, CX
	JZ    iq1mdone
	VPXOR Y0, Y0, Y0
	VPXOR Y8, Y8, Y8
	// Y12: dword j = words 2*lo_j+1, 2*hi_j+1, the scale codes of
	// sub-block j (bits 6*(j%2).. of scale word j/2), for SCALE2J.
	VPMOVZXWD 48(SI), X7
	VMOVDQU iq1mDup<>(SB), Y12
	VPERMD Y7, Y12, Y7
	VPSRLVD iq1mScShift<>(SB), Y7, Y7
	VPSRLD $3, Y7, Y12
	VPAND iq1mSeven<>(SB), Y7, Y7
	VPAND iq1mSeven<>(SB), Y12, Y12
	VPSLLD $16, Y12, Y12
	VPOR Y7, Y12, Y12
	VPADDD Y12, Y12, Y12
	VPOR iq1mWord1<>(SB), Y12, Y12
	VPXOR Y13, Y13, Y13
	MOVQ  SI, R12
	LEAQ  32(SI), R14
	LEAQ  4(DI), R13
	MOVQ  $4, R10

iq1mpair:
	IQ1MSUB(0, 0, 0)
	IQ1MSUB(4, 2, 32)
	ADDQ $8, R12
	ADDQ $4, R14
	ADDQ $64, R13
	DECQ R10
	JNZ  iq1mpair

	HSUM(Y0, X0, (DX))
	HSUM(Y8, X8, 4(DX))
	// The super-block scale: the top nibbles of the four scale words.
	IQ1MD
	FDX(AX)
	FSCALE1(X0, X8, X11)
	ADDQ $56, SI
	ADDQ $292, DI
	ADDQ $8, DX
	DECQ CX
	JMP  iq1mblock

iq1mdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
