//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ3_XXS against q8_K (iqgrid.go's IQ3_XXS, block
// by block): per super-block sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y). The eight 4-byte grid entries of a sub-block
// come in one VPGATHERDD; the four 7-bit sign codes go through the sign
// table as in iq2xxs_amd64.s. Grid magnitudes are at most 62, so the
// VPMADDUBSW pairs stay below 2*62*128 and nothing saturates; the float32
// scaling stays in Go (iqgrid_amd64.go).

// IQ3SIGN ors into R11, at bits 8*pos, the sign byte of 7-bit code
// (BX >> shift) & 127. Clobbers AX.
#define IQ3SIGN(shift, pos) \
	MOVL BX, AX; \
	SHRL $shift, AX; \
	ANDL $127, AX; \
	MOVBLZX (R9)(AX*1), AX; \
	SHLL $(8*pos), AX; \
	ORL  AX, R11

// func iq3xxsSumsAVX2(grid *[256]uint32, signs *[128]uint8, x, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = the integer sum of the iq3_xxs block at x + 98b
// with the q8_K block at y + 292b.
TEXT ·iq3xxsSumsAVX2(SB), NOSPLIT, $0-48
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	GSETUP

iq3xxsblock:
	TESTQ CX, CX
	JZ    iq3xxsdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  66(SI), R14
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq3xxssub:
	// Y2: the eight grid entries' 32 magnitudes.
	VPMOVZXBD (R12), Y1
	VPCMPEQD  Y3, Y3, Y3
	VPXOR     Y2, Y2, Y2
	VPGATHERDD Y3, (R8)(Y1*4), Y2
	MOVL (R14), BX
	XORL R11, R11
	IQ3SIGN(0, 0)
	IQ3SIGN(7, 1)
	IQ3SIGN(14, 2)
	IQ3SIGN(21, 3)
	VMOVD R11, X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	SHRL $28, BX
	SCALE1(BX)
	GDOT(Y2, Y0)
	ADDQ $8, R12
	ADDQ $4, R14
	ADDQ $32, R13
	DECQ R10
	JNZ  iq3xxssub

	HSUM(Y0, X0, (DX))
	ADDQ $98, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3xxsblock

iq3xxsdone:
	VZEROUPPER
	RET
