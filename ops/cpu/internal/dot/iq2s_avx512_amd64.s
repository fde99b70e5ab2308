//go:build amd64 && !purego

#include "textflag.h"
#include "iq_avx512_amd64.h"

// AVX-512 sums of IQ2_S against q8_K (iqgrid.go's IQ2_S), 64 elements
// (two sub-blocks) a step: a group of 8's 10-bit grid index is its qs
// byte with two bits of its qh byte (GZGRID), the step's 64 sign bits
// are its eight sign bytes as they are, loaded into a mask register and
// joined (XOR) with the codes' own signs, so that the grid magnitudes
// (at most 43), negated where the product is negative, multiply the
// codes' magnitudes (VPMADDUBSW; a pair is at most 2*43*128, no
// saturation). The integer sum is stored and scaled into a float32 sum
// as the generic kernel does, so the kernel equals it bit for bit.

// iq2sNibShift: the VPSRLVW counts 4*(i%2) that bring the scale nibble
// of group i of 16 to bit 0.
DATA iq2sNibShift<>+0x00(SB)/8, $0x0004000000040000
DATA iq2sNibShift<>+0x08(SB)/8, $0x0004000000040000
DATA iq2sNibShift<>+0x10(SB)/8, $0x0004000000040000
DATA iq2sNibShift<>+0x18(SB)/8, $0x0004000000040000
GLOBL iq2sNibShift<>(SB), RODATA|NOPTR, $32

// IQ2SSTEP adds to Z0 a step's 64 signed products times their scales:
// its qs bytes at qsoff(SI), its two qh bytes at qhoff(SI), its sign
// bytes at soff(SI), its codes at yoff(DI), its scales picked from Z16
// by lane. Z31 is zero. Clobbers K1, K2, Z5 and GZGRID's registers.
#define IQ2SSTEP(qsoff, qhoff, soff, yoff, lane) \
	GZGRID(qsoff, MOVWLZX, qhoff, 8); \
	VMOVDQU64 yoff(DI), Z5; \
	KMOVQ soff(SI), K1; \
	VPMOVB2M Z5, K2; \
	KXORQ K1, K2, K1; \
	VPABSB Z5, Z5; \
	VPSUBB Z2, Z31, K1, Z2; \
	VPMADDUBSW Z2, Z5, Z2; \
	GZSCALE(lane)

// func iq2sSumsAVX512(grid *[1024]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_s block at x + 82b
// with the q8_K block at y + 292b (iq2sSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq2sSumsAVX512(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	GZSETUP
	// Two bits of a group's qh byte into bits 8, 9 of its field.
	MOVQ $0x0300030003000300, R10
	// Z24: words 15, the mask of a scale nibble; Y18: no bias; Z31: 0.
	VPTERNLOGD $0xff, Z24, Z24, Z24
	VPSRLW $12, Z24, Z24
	VPXORQ Z18, Z18, Z18
	VPXORQ Z31, Z31, Z31
	VMOVDQU64 gzHalf<>(SB), Y26
	VMOVDQU64 iq2sNibShift<>(SB), Y27

iq2sblock:
	TESTQ CX, CX
	JZ    iq2sdone
	// Y16: word i = 2*nibble_i+1, the scale of elements 16i..16i+15
	// (scale byte i/2, low nibble first).
	VMOVQ 74(SI), X16
	VPMOVZXBW X16, Y16
	VPERMW Y16, Y26, Y16
	VPSRLVW Y27, Y16, Y16
	VPANDQ Y24, Y16, Y16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPXORQ Z0, Z0, Z0
	IQ2SSTEP(2, 66, 34, 4, Z20)
	IQ2SSTEP(10, 68, 42, 68, Z21)
	IQ2SSTEP(18, 70, 50, 132, Z22)
	IQ2SSTEP(26, 72, 58, 196, Z23)
	GZSUM
	// X11 += float32(d_x*d_y) * float32(out[b]).
	MOVWLZX (SI), AX
	VMOVD AX, X1
	VCVTPH2PS X1, X1
	VMULSS (DI), X1, X1
	VCVTDQ2PS X0, X0
	VMULSS X0, X1, X1
	VADDSS X1, X11, X11
	ADDQ $82, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2sblock

iq2sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
