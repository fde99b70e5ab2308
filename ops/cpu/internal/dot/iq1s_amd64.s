//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ1_S against q8_K (iqgrid.go's IQ1_S, block by block):
// the grid part sum_j (2*ls_j+1) * sum(g*y), g the grid's int8 values in
// {-1, 0, 1}, and the shift part sum_j (2*ls_j+1) * delta_j * (sum of the
// sub-block's 32 codes, the q8_K block's two sums of 16). A sub-block's
// four 11-bit grid indices are its four qs bytes with bits 3l..3l+2 of
// its qh word as bits 8..10, built in scalar registers; the 8-byte
// entries are loaded one by one and inserted (VPGATHERDQ is microcoded
// and slower on AMD Zen 2 and 3). The shift part is done for the eight
// sub-blocks at once. Both sums are stored and joined into a float32 sum
// as the generic kernel does (FSCALE1), so the kernel equals it bit for
// bit.

// IQ1SIDX sets AX to the 11-bit index of group l: qs byte l (at
// l(R12)) with bits 3l..3l+2 of the qh word in R15 as bits 8..10 (sh
// shifts them there). Clobbers BX.
#define IQ1SIDX(l, sh) \
	MOVBLZX l(R12), AX; \
	MOVL R15, BX; \
	sh, BX; \
	ANDL $0x700, BX; \
	ORL BX, AX

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
	VPBROADCASTD iq1sSeven<>(SB), Y13
	VPCMPEQD Y14, Y14, Y14
	VPSRLD $31, Y14, Y14 // dwords 1
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15 // words 1

iq1sblock:
	TESTQ CX, CX
	JZ    iq1sdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  34(SI), R14
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq1ssub:
	// Y2: the four grid entries' 32 values.
	MOVWLZX (R14), R15
	IQ1SIDX(0, SHLL $8)
	VMOVQ (R8)(AX*8), X2
	IQ1SIDX(1, SHLL $5)
	VPINSRQ $1, (R8)(AX*8), X2, X2
	IQ1SIDX(2, SHLL $2)
	VMOVQ (R8)(AX*8), X3
	IQ1SIDX(3, SHRL $1)
	VPINSRQ $1, (R8)(AX*8), X3, X3
	VINSERTI128 $1, X3, Y2, Y2
	LOADY((R13))
	SHRL $12, R15
	ANDL $7, R15
	SCALE1(R15)
	GDOT(Y2, Y0)
	ADDQ $4, R12
	ADDQ $2, R14
	ADDQ $32, R13
	DECQ R10
	JNZ  iq1ssub

	HSUM(Y0, X0, (DX))
	// The shift part: lane j = (2*ls_j+1) * (sums[2j] + sums[2j+1]),
	// negated where bit 15 of qh word j is set.
	VPMOVZXWD 34(SI), Y1
	VPSRLD $12, Y1, Y2
	VPAND Y13, Y2, Y2
	VPADDD Y2, Y2, Y2
	VPADDD Y14, Y2, Y2
	VPMADDWD 260(DI), Y15, Y3
	VPMULLD Y3, Y2, Y2
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
