//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ3_XXS against q8_K (iqgrid.go's IQ3_XXS, block by
// block): per super-block the integer sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y). The eight 4-byte grid entries of a sub-block are
// loaded one by one and inserted (VPINSRD; VPGATHERDD is microcoded and
// slower on AMD Zen 2 and 3), the four 7-bit sign codes pick 8-byte sign
// vectors (signs64) applied by VPSIGNB as in iq2xxs_amd64.s. Grid
// magnitudes are at most 62, so the VPMADDUBSW pairs stay below 2*62*128
// and nothing saturates. The integer sum is stored and scaled into a
// float32 sum as the generic kernel does (FSCALE), so the kernel equals
// it bit for bit.

// IQ3CODE sets r to the 7-bit sign code (BX >> shift) & 127.
#define IQ3CODE(shift, r) \
	MOVL BX, r; \
	SHRL $shift, r; \
	ANDL $127, r

// IQ3HALF sets x to the four 4-byte grid entries of the index bytes at
// off(R12) .. off+3(R12). Clobbers AX, R11, R14, R15.
#define IQ3HALF(off, x) \
	MOVBQZX off+0(R12), AX; \
	MOVBQZX off+1(R12), R11; \
	MOVBQZX off+2(R12), R14; \
	MOVBQZX off+3(R12), R15; \
	VMOVD (R8)(AX*4), x; \
	VPINSRD $1, (R8)(R11*4), x, x; \
	VPINSRD $2, (R8)(R14*4), x, x; \
	VPINSRD $3, (R8)(R15*4), x, x

// func iq3xxsSumsAVX2(grid *[256]uint32, signs *[128]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq3_xxs block at x + 98b
// with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq3xxsSumsAVX2(SB), NOSPLIT, $0-60
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	VMOVSS acc+48(FP), X11

iq3xxsblock:
	TESTQ CX, CX
	JZ    iq3xxsdone
	VPXOR Y0, Y0, Y0
	LEAQ  4(DI), R13
	XORQ  R10, R10

iq3xxssub:
	// Y2: the eight grid entries' 32 magnitudes, signed by Y4.
	LEAQ 2(SI)(R10*8), R12
	IQ3HALF(0, X2)
	IQ3HALF(4, X3)
	VINSERTI128 $1, X3, Y2, Y2
	MOVL 66(SI)(R10*4), BX
	IQ3CODE(0, AX)
	IQ3CODE(7, R11)
	IQ3CODE(14, R14)
	IQ3CODE(21, R15)
	SIGNS4(R9, AX, R11, R14, R15)
	VPSIGNB Y4, Y2, Y2
	LOADY((R13))
	SHRL $28, BX
	SCALE1(BX)
	GDOT(Y2, Y0)
	ADDQ $32, R13
	INCQ R10
	CMPQ R10, $8
	JNE  iq3xxssub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X11)
	ADDQ $98, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3xxsblock

iq3xxsdone:
	VMOVSS X11, ret+56(FP)
	VZEROUPPER
	RET
