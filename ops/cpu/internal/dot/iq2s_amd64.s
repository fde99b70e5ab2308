//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 integer sums of IQ2_S against q8_K (iqgrid.go's IQ2_S, block by
// block), scaled per half sub-block as IQ2_XS. A sub-block's four 10-bit
// grid indices are its four qs bytes with bits 2l, 2l+1 of its qh byte
// as bits 8, 9 (VPSLLVD), their 8-byte entries come in one VPGATHERDQ,
// and its four sign bytes are used as they are. Grid magnitudes are at
// most 43, so nothing saturates; the float32 scaling stays in Go
// (iqgrid_amd64.go).

// iq2sShift: the VPSLLVD counts that move bits 2l, 2l+1 of a dword to
// bits 8, 9 in lane l.
DATA iq2sShift<>+0x00(SB)/8, $0x0000000600000008
DATA iq2sShift<>+0x08(SB)/8, $0x0000000200000004
GLOBL iq2sShift<>(SB), RODATA|NOPTR, $16

DATA iq2sBits89<>+0(SB)/4, $0x00000300
GLOBL iq2sBits89<>(SB), RODATA|NOPTR, $4

// func iq2sSumsAVX2(grid *[1024]uint64, x, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = the integer sum of the iq2_s block at x + 82b
// with the q8_K block at y + 292b.
TEXT ·iq2sSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	GSETUP
	VMOVDQU iq2sShift<>(SB), X12
	VPBROADCASTD iq2sBits89<>(SB), X13

iq2sblock:
	TESTQ CX, CX
	JZ    iq2sdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  34(SI), R14
	LEAQ  66(SI), R9
	LEAQ  74(SI), R11
	LEAQ  4(DI), R13
	MOVQ  $8, R10

iq2ssub:
	// X1: the four 10-bit indices; Y2: their entries' 32 magnitudes.
	VPMOVZXBD (R12), X1
	MOVBLZX (R9), AX
	VMOVD AX, X3
	VPBROADCASTD X3, X3
	VPSLLVD X12, X3, X3
	VPAND X13, X3, X3
	VPOR  X3, X1, X1
	VPCMPEQQ Y3, Y3, Y3
	VPXOR Y2, Y2, Y2
	VPGATHERDQ Y3, (R8)(X1*8), Y2
	VMOVD (R14), X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	MOVBLZX (R11), AX
	MOVL AX, BX
	ANDL $15, AX
	SHRL $4, BX
	SCALE2(AX, BX)
	GDOT(Y2, Y0)
	ADDQ $4, R12
	ADDQ $4, R14
	INCQ R9
	INCQ R11
	ADDQ $32, R13
	DECQ R10
	JNZ  iq2ssub

	HSUM(Y0, X0, (DX))
	ADDQ $82, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2sblock

iq2sdone:
	VZEROUPPER
	RET
