//go:build amd64 && !purego

#include "textflag.h"

// AVX2 integer sums of IQ2_XXS against q8_K (iqgrid.go's IQ2_XXS, block
// by block): per super-block sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y), g the grid magnitudes (at most 43), s their
// signs, y the q8_K codes. The signed grid values go through VPSIGNB with
// y's signs and VPMADDUBSW with |y| (y = -128 reads as 128), so each pair
// is at most 2*43*128 in magnitude and nothing saturates; the scales
// multiply the pairs in VPMADDWD. The float32 scaling stays in Go
// (iq2xxs_amd64.go), so the kernel equals the generic one bit for bit.

// iq2expand: VPSHUFB indexes that copy sign byte l of a broadcast dword
// to bytes 8l..8l+7.
DATA iq2expand<>+0x00(SB)/8, $0x0000000000000000
DATA iq2expand<>+0x08(SB)/8, $0x0101010101010101
DATA iq2expand<>+0x10(SB)/8, $0x0202020202020202
DATA iq2expand<>+0x18(SB)/8, $0x0303030303030303
GLOBL iq2expand<>(SB), RODATA|NOPTR, $32

// iq2bits: byte k holds bit k%8.
DATA iq2bits<>+0(SB)/8, $0x8040201008040201
GLOBL iq2bits<>(SB), RODATA|NOPTR, $8

// IQ2SIGN sets R11 to the sign byte of 7-bit code (BX >> shift) & 127,
// placed at bits 8*pos. Clobbers AX.
#define IQ2SIGN(shift, pos) \
	MOVL BX, AX; \
	SHRL $shift, AX; \
	ANDL $127, AX; \
	MOVBLZX (R9)(AX*1), AX; \
	SHLL $(8*pos), AX; \
	ORL  AX, R11

// func iq2xxsSumsAVX2(grid *[256]uint64, signs *[128]uint8, x *byte, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = the integer sum of the iq2_xxs block at x + 66b
// with the q8_K block at y + 292b, each sub-block's sum times 2*ls+1.
TEXT ·iq2xxsSumsAVX2(SB), NOSPLIT, $0-48
	MOVQ grid+0(FP), R8
	MOVQ signs+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DI
	MOVQ nb+32(FP), CX
	MOVQ out+40(FP), DX
	VMOVDQU iq2expand<>(SB), Y9
	VPBROADCASTQ iq2bits<>(SB), Y10

iq2block:
	TESTQ CX, CX
	JZ    iq2done
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq2sub:
	// Y2: the four grid entries' 32 magnitudes.
	MOVBQZX 0(R12), AX
	VMOVQ   (R8)(AX*8), X2
	MOVBQZX 1(R12), AX
	VPINSRQ $1, (R8)(AX*8), X2, X2
	MOVBQZX 2(R12), AX
	VMOVQ   (R8)(AX*8), X3
	MOVBQZX 3(R12), AX
	VPINSRQ $1, (R8)(AX*8), X3, X3
	VINSERTI128 $1, X3, Y2, Y2
	// Y4: 0xff where an element is negated.
	MOVL 4(R12), BX
	XORL R11, R11
	IQ2SIGN(0, 0)
	IQ2SIGN(7, 1)
	IQ2SIGN(14, 2)
	IQ2SIGN(21, 3)
	VMOVD R11, X4
	VPBROADCASTD X4, Y4
	VPSHUFB Y9, Y4, Y4
	VPAND Y10, Y4, Y4
	VPCMPEQB Y10, Y4, Y4
	VPXOR Y4, Y2, Y2
	VPSUBB Y4, Y2, Y2
	// |y| (unsigned) times g*s*sign(y), pairs times 2*ls+1.
	VMOVDQU (R13), Y5
	VPSIGNB Y5, Y5, Y6
	VPSIGNB Y5, Y2, Y2
	VPMADDUBSW Y2, Y6, Y2
	SHRL $28, BX
	LEAL 1(BX)(BX*1), BX
	VMOVD BX, X7
	VPBROADCASTW X7, Y7
	VPMADDWD Y7, Y2, Y2
	VPADDD Y2, Y0, Y0
	ADDQ $8, R12
	ADDQ $32, R13
	DECQ R10
	JNZ  iq2sub

	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (DX)
	ADDQ $66, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2block

iq2done:
	VZEROUPPER
	RET
