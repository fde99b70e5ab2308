//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ2_XXS against q8_K (iqgrid.go's IQ2_XXS, block
// by block): per super-block sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y), g the grid magnitudes (at most 43), s their
// signs, y the q8_K codes. A sub-block's four 8-byte grid entries and the
// four 8-byte sign vectors of its 7-bit sign codes (signs64) are loaded
// one by one and inserted (GRID8X4, SIGNS4), and the signs applied by
// VPSIGNB. The signed grid values go through VPSIGNB with y's signs and
// VPMADDUBSW with |y| (y = -128 reads as 128), so each pair is at most
// 2*43*128 in magnitude and nothing saturates; the scales multiply the
// pairs in VPMADDWD. Each super-block's integer sum is stored and, as
// the generic kernel does, scaled by d_x*d_y and added to a float32 sum
// in X15 (FSCALE: scalar multiplies and adds, unfused), so the kernel
// equals the generic one bit for bit.

// IQ2CODE sets r to the 7-bit sign code (BX >> shift) & 127.
#define IQ2CODE(shift, r) \
	MOVL BX, r; \
	SHRL $shift, r; \
	ANDL $127, r

// func iq2xxsSumsAVX2(grid *[256]uint64, signs *[128]uint64, x *byte, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_xxs block at x + 66b
// with the q8_K block at y + 292b, each sub-block's sum times 2*ls+1; it
// returns acc plus the sum over b of d_x*d_y*out[b].
TEXT ·iq2xxsSumsAVX2(SB), NOSPLIT, $0-60
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	VMOVSS acc+48(FP), X15

iq2block:
	TESTQ CX, CX
	JZ    iq2done
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq2sub:
	// Y2: the four grid entries' 32 magnitudes, signed by Y4.
	MOVBQZX 0(R12), AX
	MOVBQZX 1(R12), BX
	MOVBQZX 2(R12), R11
	MOVBQZX 3(R12), R15
	GRID8X4(R8, AX, BX, R11, R15)
	MOVL 4(R12), BX
	IQ2CODE(0, AX)
	IQ2CODE(7, R11)
	IQ2CODE(14, R14)
	IQ2CODE(21, R15)
	SIGNS4(R9, AX, R11, R14, R15)
	VPSIGNB Y4, Y2, Y2
	LOADY((R13))
	SHRL $28, BX
	SCALE1(BX)
	GDOT(Y2, Y0)
	ADDQ $8, R12
	ADDQ $32, R13
	DECQ R10
	JNZ  iq2sub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X15)
	ADDQ $66, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2block

iq2done:
	VMOVSS X15, ret+56(FP)
	VZEROUPPER
	RET
