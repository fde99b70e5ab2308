//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ3_S against q8_K (iqgrid.go's IQ3_S, block by
// block): per super-block sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y). A sub-block's eight 9-bit grid indices are its
// eight qs bytes with bit k of its qh byte as bit 8 (VPSLLVD), their
// 4-byte entries come in one VPGATHERDD, and its four sign bytes are used
// as they are. Grid magnitudes are at most 15, so nothing saturates; the
// float32 scaling stays in Go (iqgrid_amd64.go).

// iq3sShift: the VPSLLVD counts that move bit k of a dword to bit 8 in
// lane k.
DATA iq3sShift<>+0x00(SB)/8, $0x0000000700000008
DATA iq3sShift<>+0x08(SB)/8, $0x0000000500000006
DATA iq3sShift<>+0x10(SB)/8, $0x0000000300000004
DATA iq3sShift<>+0x18(SB)/8, $0x0000000100000002
GLOBL iq3sShift<>(SB), RODATA|NOPTR, $32

DATA iq3sBit8<>+0(SB)/4, $0x00000100
GLOBL iq3sBit8<>(SB), RODATA|NOPTR, $4

// func iq3sSumsAVX2(grid *[512]uint32, x, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = the integer sum of the iq3_s block at x + 110b
// with the q8_K block at y + 292b.
TEXT ·iq3sSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	GSETUP
	VMOVDQU iq3sShift<>(SB), Y12
	VPBROADCASTD iq3sBit8<>(SB), Y13

iq3sblock:
	TESTQ CX, CX
	JZ    iq3sdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  66(SI), R9
	LEAQ  74(SI), R14
	LEAQ  4(DI), R13
	MOVL  106(SI), R11
	MOVQ  $8, R10

iq3ssub:
	// Y1: the eight 9-bit indices; Y2: their entries' 32 magnitudes.
	VPMOVZXBD (R12), Y1
	MOVBLZX (R9), AX
	VMOVD AX, X3
	VPBROADCASTD X3, Y3
	VPSLLVD Y12, Y3, Y3
	VPAND Y13, Y3, Y3
	VPOR  Y3, Y1, Y1
	VPCMPEQD Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	VPGATHERDD Y3, (R8)(Y1*4), Y2
	VMOVD (R14), X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	// The scale: the next nibble of the scales dword.
	MOVL R11, BX
	ANDL $15, BX
	SHRL $4, R11
	SCALE1(BX)
	GDOT(Y2, Y0)
	ADDQ $8, R12
	INCQ R9
	ADDQ $4, R14
	ADDQ $32, R13
	DECQ R10
	JNZ  iq3ssub

	HSUM(Y0, X0, (DX))
	ADDQ $110, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3sblock

iq3sdone:
	VZEROUPPER
	RET
