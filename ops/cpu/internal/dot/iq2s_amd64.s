//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ2_S against q8_K (iqgrid.go's IQ2_S, block by block),
// scaled per half sub-block as IQ2_XS. A sub-block's four 10-bit grid
// indices are its four qs bytes with bits 2l, 2l+1 of its qh byte as
// bits 8, 9, built in scalar registers; their 8-byte entries are loaded
// one by one and inserted (VPGATHERDQ is microcoded and slower on AMD
// Zen 2 and 3), and its four sign bytes are used as they are (SIGNMASK).
// Its two scales come from the vector SCALES2 builds once per
// super-block. Grid magnitudes are at most 43, so nothing saturates. The
// integer sum is stored and scaled into a float32 sum as the generic
// kernel does (FSCALE), so the kernel equals it bit for bit.

// IQ2SIDX sets AX to the 10-bit index of group l of sub-block R10: qs
// byte l (at 2+4*R10+l(SI)) with bits 2l, 2l+1 of the qh byte in R15 as
// bits 8, 9. Clobbers BX.
#define IQ2SIDX(l) \
	MOVBLZX 2+l(SI)(R10*4), AX; \
	MOVL R15, BX; \
	SHLL $(8-2*(l)), BX; \
	ANDL $0x300, BX; \
	ORL BX, AX

// func iq2sSumsAVX2(grid *[1024]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_s block at x + 82b
// with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq2sSumsAVX2(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	GSETUP
	SCALES2SETUP

iq2sblock:
	TESTQ CX, CX
	JZ    iq2sdone
	VPXOR Y0, Y0, Y0
	SCALES2(74(SI))
	LEAQ  4(DI), R13
	XORQ  R10, R10

iq2ssub:
	// Y2: the four grid entries' 32 magnitudes.
	MOVBLZX 66(SI)(R10*1), R15
	IQ2SIDX(0)
	VMOVQ (R8)(AX*8), X2
	IQ2SIDX(1)
	VPINSRQ $1, (R8)(AX*8), X2, X2
	IQ2SIDX(2)
	VMOVQ (R8)(AX*8), X3
	IQ2SIDX(3)
	VPINSRQ $1, (R8)(AX*8), X3, X3
	VINSERTI128 $1, X3, Y2, Y2
	VMOVD 34(SI)(R10*4), X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	SCALE2J
	GDOT(Y2, Y0)
	ADDQ $32, R13
	INCQ R10
	CMPQ R10, $8
	JNE  iq2ssub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X11)
	ADDQ $82, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2sblock

iq2sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
