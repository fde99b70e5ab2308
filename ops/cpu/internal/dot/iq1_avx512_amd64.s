//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"
#include "iq_avx512_amd64.h"

// AVX-512 sums of IQ1_M and IQ1_S against q8_K, 64 elements (two
// sub-blocks) a step. The grid values come from iq1Biased, whose entry
// for a 12-bit index (an IQ1 grid index in bits 0..10, a delta sign in
// bit 11) holds each value g as the unsigned byte 8g+9+delta (delta -1
// where bit 11 is set, +1 elsewhere), so one VPMADDUBSW against the q8_K
// codes and one VPMADDWD with the scales of 16 give 8*grid + shift of
// the generic kernels (iqgrid.go) with a bias of 9 or 10 times each
// scaled sum of 16 codes, which the q8_K block's bsums take off once per
// super-block. A group of 8's index is its qs byte deposited (PDEP) into
// a 16-bit field beside its qh bits, four groups a 64-bit register, and
// the eight 8-byte entries of a step are loaded one by one and inserted.
// The exact integer 8*grid + shift is below 2^24, so float32(it)/8 is
// float32(grid) + float32(shift)/8 exactly, and the super-block's
// float32 step (d_x*d_y times it, added to the sum) is the generic
// kernels' bit for bit.

// iq1ScShift: the VPSRLVW counts 3*(i%4) that bring IQ1_M's scale code
// i (of word i/4, gzQuarter) to bit 0.
DATA iq1ScShift<>+0x00(SB)/8, $0x0009000600030000
DATA iq1ScShift<>+0x08(SB)/8, $0x0009000600030000
DATA iq1ScShift<>+0x10(SB)/8, $0x0009000600030000
DATA iq1ScShift<>+0x18(SB)/8, $0x0009000600030000
GLOBL iq1ScShift<>(SB), RODATA|NOPTR, $32

// IQ1STEP adds to Z0 a step's 64 biased products times their scales:
// its grid entries from GZGRID (qsoff, its two qh words at qhoff), its
// codes at yoff(DI), its scales picked from Z16 by lane.
#define IQ1STEP(qsoff, qhoff, yoff, lane) \
	GZGRID(qsoff, MOVL, qhoff, 16); \
	VPMADDUBSW yoff(DI), Z2, Z2; \
	GZSCALE(lane)

// IQ1BLOCK ends a super-block: out[b] (at (DX)) = Z0's lanes summed less
// Y18's (the bias), and X11 += X1 (d_x*d_y) * 0.125*float32(out[b]).
#define IQ1BLOCK \
	GZSUM; \
	VCVTDQ2PS X0, X0; \
	VMULSS geighth<>(SB), X0, X0; \
	VMULSS X0, X1, X1; \
	VADDSS X1, X11, X11

// func iq1mSumsAVX512(grid *[4096]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = 8*grid + shift (iq1mSumsTwin's two sums) of the
// iq1_m block at x + 56b with the q8_K block at y + 292b. It returns
// acc plus the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq1mSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	// Z24: words 7, the mask of a 3-bit scale code.
	VPTERNLOGD $0xff, Z24, Z24, Z24
	VPSRLW $13, Z24, Z24
	// A group's qh nibble into bits 8..11 of its field: grid index bits
	// 8..10 and the delta sign.
	MOVQ $0x0f000f000f000f00, R10
	VMOVDQU64 gzQuarter<>(SB), Y26
	VMOVDQU64 iq1ScShift<>(SB), Y27

iq1mblock:
	TESTQ CX, CX
	JZ    iq1mdone
	// Y16: word i = 2*code_i+1, the scale of elements 16i..16i+15;
	// Y18: dword j = 9 * (the scaled sums of codes of groups 2j, 2j+1).
	VMOVQ 48(SI), X16
	VPERMW Y16, Y26, Y16
	VPSRLVW Y27, Y16, Y16
	VPANDQ Y24, Y16, Y16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPSLLW $3, Y16, Y17
	VPADDW Y16, Y17, Y17
	VPMADDWD 260(DI), Y17, Y18
	VPXORQ Z0, Z0, Z0
	IQ1STEP(0, 32, 4, Z20)
	IQ1STEP(8, 36, 68, Z21)
	IQ1STEP(16, 40, 132, Z22)
	IQ1STEP(24, 44, 196, Z23)
	// The super-block scale: the top nibbles of the four scale words.
	IQ1MD
	FDX(AX)
	IQ1BLOCK
	ADDQ $56, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq1mblock

iq1mdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET

// func iq1sSumsAVX512(grid *[4096]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = 8*grid + shift (iq1sSumsTwin's two sums) of the
// iq1_s block at x + 50b with the q8_K block at y + 292b. It returns
// acc plus the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq1sSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	// Z24: words 7, the mask of a 3-bit scale code.
	VPTERNLOGD $0xff, Z24, Z24, Z24
	VPSRLW $13, Z24, Z24
	// A group's three index bits of its sub-block's qh word (bits
	// 3l..3l+2) into bits 8..10 of its field; bit 11 stays clear
	// (delta +1: the shift part is taken from the bsums).
	MOVQ $0x0700070007000700, R10
	VMOVDQU64 gzHalf<>(SB), Y26

iq1sblock:
	TESTQ CX, CX
	JZ    iq1sdone
	// Y16: word i = 2*ls+1 of sub-block i/2 (bits 12..14 of its qh
	// word); Y18: dword j = the sums of 16 codes 2j, 2j+1 times
	// (10 - delta) times their scales, delta -1 where bit 15 is set.
	VMOVDQU64 34(SI), X16
	VPERMW Y16, Y26, Y19
	VPSRLW $12, Y19, Y16
	VPANDQ Y24, Y16, Y16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPSRAW $15, Y19, Y19
	VPADDW Y16, Y16, Y17
	VPANDQ Y17, Y19, Y19
	VPSLLW $3, Y16, Y17
	VPADDW Y16, Y17, Y17
	VPADDW Y19, Y17, Y17
	VPMADDWD 260(DI), Y17, Y18
	VPXORQ Z0, Z0, Z0
	IQ1STEP(2, 34, 4, Z20)
	IQ1STEP(10, 38, 68, Z21)
	IQ1STEP(18, 42, 132, Z22)
	IQ1STEP(26, 46, 196, Z23)
	MOVWLZX (SI), AX
	FDX(AX)
	IQ1BLOCK
	ADDQ $50, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq1sblock

iq1sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
