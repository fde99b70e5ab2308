//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ2_XS against q8_K (iqgrid.go's IQ2_XS, block by
// block): per super-block sum over its eight sub-blocks of
// (2*ls_lo+1) * sum(g*s*y) over elements 0..15 plus (2*ls_hi+1) times
// that of 16..31. A sub-block's four 16-bit codes hold a 9-bit grid
// index (the four 8-byte entries come in one VPGATHERDQ) and a 7-bit sign
// code (looked up in the sign table). Grid magnitudes are at most 43, so
// nothing saturates; the float32 scaling stays in Go (iqgrid_amd64.go).

DATA iq2xsMask<>+0(SB)/4, $0x000001ff
GLOBL iq2xsMask<>(SB), RODATA|NOPTR, $4

// IQ2XSSIGN ors into R11, at bits 8*pos, the sign byte of the code in
// the top 7 bits of the word at off(R12). Clobbers AX.
#define IQ2XSSIGN(off, pos) \
	MOVWLZX off(R12), AX; \
	SHRL $9, AX; \
	MOVBLZX (R9)(AX*1), AX; \
	SHLL $(8*pos), AX; \
	ORL  AX, R11

// func iq2xsSumsAVX2(grid *[512]uint64, signs *[128]uint8, x, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = the integer sum of the iq2_xs block at x + 74b
// with the q8_K block at y + 292b.
TEXT ·iq2xsSumsAVX2(SB), NOSPLIT, $0-48
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	GSETUP
	VPBROADCASTD iq2xsMask<>(SB), X13

iq2xsblock:
	TESTQ CX, CX
	JZ    iq2xsdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  66(SI), R14
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq2xssub:
	// Y2: the four grid entries' 32 magnitudes.
	VPMOVZXWD (R12), X1
	VPAND X13, X1, X1
	VPCMPEQQ Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	VPGATHERDQ Y3, (R8)(X1*8), Y2
	XORL R11, R11
	IQ2XSSIGN(0, 0)
	IQ2XSSIGN(2, 1)
	IQ2XSSIGN(4, 2)
	IQ2XSSIGN(6, 3)
	VMOVD R11, X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	MOVBLZX (R14), AX
	MOVL AX, BX
	ANDL $15, AX
	SHRL $4, BX
	SCALE2(AX, BX)
	GDOT(Y2, Y0)
	ADDQ $8, R12
	INCQ R14
	ADDQ $32, R13
	DECQ R10
	JNZ  iq2xssub

	HSUM(Y0, X0, (DX))
	ADDQ $74, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2xsblock

iq2xsdone:
	VZEROUPPER
	RET
