//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ1_S against q8_K (iqgrid.go's IQ1_S, block by block):
// the grid part sum_j (2*ls_j+1) * sum(g*y), g the grid's int8 values in
// {-1, 0, 1}, and the shift part sum_j (2*ls_j+1) * delta_j * (sum of the
// sub-block's 32 codes, the q8_K block's two sums of 16). A sub-block's
// four 11-bit grid indices are its four qs bytes with bits 3l..3l+2 of
// its qh word as bits 8..10, made in scalar registers (building them in
// a vector and moving them out was slower); the 8-byte entries are
// loaded one by one and inserted (VPGATHERDQ
// is microcoded and slower on AMD Zen 2 and 3). The scales are built
// once per super-block (SCALE1J picks each sub-block's), and the shift
// part is done for the eight sub-blocks at once. Both sums are stored and joined into a float32 sum
// as the generic kernel does (FSCALE1), so the kernel equals it bit for
// bit.

// iq1sSeven: dwords 7.
DATA iq1sSeven<>+0(SB)/4, $7
GLOBL iq1sSeven<>(SB), RODATA|NOPTR, $4

// func iq1sSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[2b] = the grid part and out[2b+1] the shift part of the
// iq1_s block at x + 50b with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq1sSumsAVX2(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	VPBROADCASTD iq1sSeven<>(SB), Y8
	VPCMPEQD Y15, Y15, Y15
	VPSRLD $31, Y15, Y15 // dwords 1
	VPCMPEQW Y14, Y14, Y14
	VPSRLW $15, Y14, Y14 // words 1

iq1sblock:
	TESTQ CX, CX
	JZ    iq1sdone
	VPXOR Y0, Y0, Y0
	// Y10: dword j = 2*ls_j+1 (bits 12..14 of qh word j); Y12: the same
	// in both words of each dword, for SCALE1J.
	VPMOVZXWD 34(SI), Y1
	VPSRLD $12, Y1, Y10
	VPAND Y8, Y10, Y10
	VPADDD Y10, Y10, Y10
	VPADDD Y15, Y10, Y10
	VPSLLD $16, Y10, Y12
	VPOR Y10, Y12, Y12
	VPXOR Y13, Y13, Y13
	LEAQ  4(DI), R13
	XORQ  R10, R10

iq1ssub:
	// The four 11-bit indices (qs bytes, bits 3l..3l+2 of the qh word as
	// bits 8..10), made in scalar registers two at a time; Y2: their
	// entries' 32 values.
	MOVWLZX 34(SI)(R10*2), R15
	MOVBLZX 2(SI)(R10*4), AX
	MOVL R15, R9
	SHLL $8, R9
	ANDL $0x700, R9
	ORL R9, AX
	MOVBLZX 3(SI)(R10*4), BX
	MOVL R15, R9
	SHLL $5, R9
	ANDL $0x700, R9
	ORL R9, BX
	VMOVQ (R8)(AX*8), X2
	VPINSRQ $1, (R8)(BX*8), X2, X2
	MOVBLZX 4(SI)(R10*4), AX
	MOVL R15, R9
	SHLL $2, R9
	ANDL $0x700, R9
	ORL R9, AX
	MOVBLZX 5(SI)(R10*4), BX
	SHRL $1, R15
	ANDL $0x700, R15
	ORL R15, BX
	VMOVQ (R8)(AX*8), X3
	VPINSRQ $1, (R8)(BX*8), X3, X3
	VINSERTI128 $1, X3, Y2, Y2
	LOADY((R13))
	SCALE1J
	GDOT(Y2, Y0)
	ADDQ $32, R13
	INCQ R10
	CMPQ R10, $8
	JNE  iq1ssub

	HSUM(Y0, X0, (DX))
	// The shift part: lane j = (2*ls_j+1) * (sums[2j] + sums[2j+1]),
	// negated where bit 15 of qh word j is set.
	VPMOVZXWD 34(SI), Y1
	VPMADDWD 260(DI), Y14, Y3
	VPMULLD Y3, Y10, Y2
	VPSLLD $16, Y1, Y1
	VPSRAD $31, Y1, Y1
	VPXOR Y1, Y2, Y2
	VPSUBD Y1, Y2, Y2
	HSUM(Y2, X2, 4(DX))
	MOVWLZX (SI), AX
	FDX(AX)
	FSCALE1(X0, X2, X11)
	ADDQ $50, SI
	ADDQ $292, DI
	ADDQ $8, DX
	DECQ CX
	JMP  iq1sblock

iq1sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
