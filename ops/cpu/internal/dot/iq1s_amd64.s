//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ1_S against q8_K (iqgrid.go's IQ1_S, block by
// block): the grid part sum_j (2*ls_j+1) * sum(g*y), g the grid's int8
// values in {-1, 0, 1}, and the shift part sum_j (2*ls_j+1) * delta_j *
// (sum of the sub-block's 32 codes, the q8_K block's two sums of 16).
// A sub-block's four 11-bit grid indices are its four qs bytes with bits
// 3l..3l+2 of its qh word as bits 8..10 (VPSRLVD); the 8-byte entries
// come in one VPGATHERDQ. The shift part is done for the eight sub-blocks
// at once. The float32 scaling stays in Go (iqgrid_amd64.go).

// iq1sShift: the VPSRLVD counts that move bits 3l..3l+2 of a dword to
// bits 0..2 in lane l.
DATA iq1sShift<>+0x00(SB)/8, $0x0000000300000000
DATA iq1sShift<>+0x08(SB)/8, $0x0000000900000006
GLOBL iq1sShift<>(SB), RODATA|NOPTR, $16

DATA iq1sSeven<>+0(SB)/4, $7
GLOBL iq1sSeven<>(SB), RODATA|NOPTR, $4

// func iq1sSumsAVX2(grid *[2048]uint64, x, y *byte, nb int, out *int32)
//
// For b < nb: out[2b] = the grid part and out[2b+1] the shift part of the
// iq1_s block at x + 50b with the q8_K block at y + 292b.
TEXT ·iq1sSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVDQU iq1sShift<>(SB), X12
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
	// X1: the four 11-bit indices; Y2: their entries' 32 values.
	VPMOVZXBD (R12), X1
	MOVWLZX (R14), AX
	VMOVD AX, X3
	VPBROADCASTD X3, X3
	VPSRLVD X12, X3, X3
	VPAND X13, X3, X3
	VPSLLD $8, X3, X3
	VPOR  X3, X1, X1
	VPCMPEQQ Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	VPGATHERDQ Y3, (R8)(X1*8), Y2
	LOADY((R13))
	SHRL $12, AX
	ANDL $7, AX
	SCALE1(AX)
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
	ADDQ $50, SI
	ADDQ $292, DI
	ADDQ $8, DX
	DECQ CX
	JMP  iq1sblock

iq1sdone:
	VZEROUPPER
	RET
