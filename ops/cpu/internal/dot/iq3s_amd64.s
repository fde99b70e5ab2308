//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ3_S against q8_K (iqgrid.go's IQ3_S, block by block):
// per super-block the integer sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y). A sub-block's eight 9-bit grid indices are its
// eight qs bytes with bit k of its qh byte as bit 8 (VPSLLVD), moved to
// scalar registers two by two (VMOVQ, VPEXTRQ); their 4-byte entries
// are loaded one by one and inserted (VPINSRD; VPGATHERDD is microcoded
// and slower on AMD Zen 2 and 3); its four sign bytes are used as they
// are (SIGNMASK), and its scale comes from the vector of the eight that
// SCALES1 builds once per super-block. Grid magnitudes are at most 15,
// so nothing saturates. The integer sum is stored and scaled into a
// float32 sum as the generic kernel does (FSCALE), so the kernel equals
// it bit for bit.

// iq3sShift: the VPSLLVD counts that move bit k of a dword to bit 8 in
// lane k; iq3sBit8: dwords 0x100.
DATA iq3sShift<>+0x00(SB)/8, $0x0000000700000008
DATA iq3sShift<>+0x08(SB)/8, $0x0000000500000006
DATA iq3sShift<>+0x10(SB)/8, $0x0000000300000004
DATA iq3sShift<>+0x18(SB)/8, $0x0000000100000002
GLOBL iq3sShift<>(SB), RODATA|NOPTR, $32
DATA iq3sBit8<>+0x00(SB)/8, $0x0000010000000100
DATA iq3sBit8<>+0x08(SB)/8, $0x0000010000000100
DATA iq3sBit8<>+0x10(SB)/8, $0x0000010000000100
DATA iq3sBit8<>+0x18(SB)/8, $0x0000010000000100
GLOBL iq3sBit8<>(SB), RODATA|NOPTR, $32

// IQ3SPAIR inserts into dwords k and k+1 of x the grid entries of the
// two 9-bit indices in the dwords of r (a 64-bit register, which it
// clobbers). Clobbers AX.
#define IQ3SPAIR(r, x, k) \
	MOVL r, AX; \
	SHRQ $32, r; \
	VPINSRD $k, (R8)(AX*4), x, x; \
	VPINSRD $(k+1), (R8)(r*4), x, x

// func iq3sSumsAVX2(grid *[512]uint32, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq3_s block at x + 110b
// with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq3sSumsAVX2(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	GSETUP
	VMOVDQU iq3sShift<>(SB), Y14
	VPCMPEQD Y15, Y15, Y15
	VPSRLD $31, Y15, Y15 // dwords 1

iq3sblock:
	TESTQ CX, CX
	JZ    iq3sdone
	VPXOR Y0, Y0, Y0
	SCALES1(106(SI))
	LEAQ  4(DI), R13
	XORQ  R10, R10

iq3ssub:
	// Y1: the eight 9-bit indices (qs bytes, bit k of the qh byte as bit
	// 8: the dword broadcast also holds the next qh bytes, whose bits the
	// mask drops); Y2: their entries' 32 magnitudes.
	VPMOVZXBD 2(SI)(R10*8), Y1
	VPBROADCASTD 66(SI)(R10*1), Y3
	VPSLLVD Y14, Y3, Y3
	VPAND iq3sBit8<>(SB), Y3, Y3
	VPOR Y3, Y1, Y1
	VMOVQ X1, BX
	VPEXTRQ $1, X1, R9
	VEXTRACTI128 $1, Y1, X1
	VMOVQ X1, R12
	VPEXTRQ $1, X1, R14
	MOVL BX, AX
	SHRQ $32, BX
	VMOVD (R8)(AX*4), X2
	VPINSRD $1, (R8)(BX*4), X2, X2
	IQ3SPAIR(R9, X2, 2)
	MOVL R12, AX
	SHRQ $32, R12
	VMOVD (R8)(AX*4), X3
	VPINSRD $1, (R8)(R12*4), X3, X3
	IQ3SPAIR(R14, X3, 2)
	VINSERTI128 $1, X3, Y2, Y2
	VMOVD 74(SI)(R10*4), X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	SCALE1J
	GDOT(Y2, Y0)
	ADDQ $32, R13
	INCQ R10
	CMPQ R10, $8
	JNE  iq3ssub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X11)
	ADDQ $110, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3sblock

iq3sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
