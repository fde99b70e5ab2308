//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ2_XS against q8_K (iqgrid.go's IQ2_XS, block by block):
// per super-block the integer sum over its eight sub-blocks of
// (2*ls_lo+1) * sum(g*s*y) over elements 0..15 plus (2*ls_hi+1) times
// that of 16..31. A sub-block's four 16-bit codes hold a 9-bit grid
// index and a 7-bit sign code; the four 8-byte grid entries and the four
// 8-byte sign vectors of the codes (signs64) are loaded one by one and
// inserted (VPGATHERDQ is microcoded and slower on AMD Zen 2 and 3), the
// signs applied by VPSIGNB; its two scales come from the vector SCALES2
// builds once per super-block. Grid magnitudes are at most 43, so nothing
// saturates. The integer sum is stored and scaled into a float32 sum as
// the generic kernel does (FSCALE), so the kernel equals it bit for bit.

// IQ2XSLO loads the grid entry and the sign vector of the 16-bit code at
// off(R12) into the low quadwords of xg and xs, IQ2XSHI into their high
// ones. Both clobber AX, BX.
#define IQ2XSLO(off, xg, xs) \
	MOVWLZX off(R12), AX; \
	MOVL AX, BX; \
	ANDL $511, AX; \
	SHRL $9, BX; \
	VMOVQ (R8)(AX*8), xg; \
	VMOVQ (R9)(BX*8), xs

#define IQ2XSHI(off, xg, xs) \
	MOVWLZX off(R12), AX; \
	MOVL AX, BX; \
	ANDL $511, AX; \
	SHRL $9, BX; \
	VPINSRQ $1, (R8)(AX*8), xg, xg; \
	VPINSRQ $1, (R9)(BX*8), xs, xs

// func iq2xsSumsAVX2(grid *[512]uint64, signs *[128]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_xs block at x + 74b
// with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq2xsSumsAVX2(SB), NOSPLIT, $0-60
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	VMOVSS acc+48(FP), X11
	SCALES2SETUP

iq2xsblock:
	TESTQ CX, CX
	JZ    iq2xsdone
	VPXOR Y0, Y0, Y0
	SCALES2(66(SI))
	LEAQ  2(SI), R12
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq2xssub:
	// Y2: the four grid entries' 32 magnitudes, signed by Y4.
	IQ2XSLO(0, X2, X4)
	IQ2XSHI(2, X2, X4)
	IQ2XSLO(4, X3, X8)
	IQ2XSHI(6, X3, X8)
	VINSERTI128 $1, X3, Y2, Y2
	VINSERTI128 $1, X8, Y4, Y4
	VPSIGNB Y4, Y2, Y2
	LOADY((R13))
	SCALE2J
	GDOT(Y2, Y0)
	ADDQ $8, R12
	ADDQ $32, R13
	DECQ R10
	JNZ  iq2xssub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X11)
	ADDQ $74, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2xsblock

iq2xsdone:
	VMOVSS X11, ret+56(FP)
	VZEROUPPER
	RET
