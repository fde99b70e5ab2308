//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"
#include "iq_avx512_amd64.h"

// AVX-512 sums of IQ3_XXS and IQ3_S against q8_K (iqgrid.go's kernels
// of the same names), 64 elements (two sub-blocks) a step: the step's
// sixteen 4-byte grid entries loaded one by one and inserted (VPGATHERDD
// of the sixteen was 2.1 times slower a row on a Zen 5), its 64 sign bits
// in a mask register (IQ3_XXS's 7-bit sign codes with their parity bits,
// GZSIGNS7; IQ3_S's sign bytes as they are), the signed products by
// GZSIGNED (grid magnitudes at most 62: a pair is at most 2*62*128) and
// the scales of 16 by GZSCALE. The integer sum of a super-block is stored
// and scaled into a float32 sum as the generic kernels do (iqgrid_amd64.h's
// FSCALE, as in the AVX2 kernels), so each kernel equals its generic one
// bit for bit.

// iq3xxsScIdx: VPERMW indexes that copy word 2*(i/2) to word i: the low
// word of sub-block i/2's sign-and-scale dword once shifted down by 28.
DATA iq3xxsScIdx<>+0x00(SB)/8, $0x0002000200000000
DATA iq3xxsScIdx<>+0x08(SB)/8, $0x0006000600040004
DATA iq3xxsScIdx<>+0x10(SB)/8, $0x000a000a00080008
DATA iq3xxsScIdx<>+0x18(SB)/8, $0x000e000e000c000c
GLOBL iq3xxsScIdx<>(SB), RODATA|NOPTR, $32

// IQ3QUAD sets x to the four 4-byte grid entries (table at R8) of the
// index bytes at off(SI) .. off+3(SI). Clobbers AX, BX, R12, R13.
#define IQ3QUAD(off, x) \
	MOVBQZX (off+0)(SI), AX; \
	MOVBQZX (off+1)(SI), BX; \
	MOVBQZX (off+2)(SI), R12; \
	MOVBQZX (off+3)(SI), R13; \
	VMOVD (R8)(AX*4), x; \
	VPINSRD $1, (R8)(BX*4), x, x; \
	VPINSRD $2, (R8)(R12*4), x, x; \
	VPINSRD $3, (R8)(R13*4), x, x

// IQ3XXSSTEP adds to Z0 the step whose sixteen index bytes are at
// off(SI) and whose two sign-and-scale dwords are at soff(SI), its codes
// at yoff(DI). R10 and R11 are the PDEP masks of four 7-bit codes into
// bytes 0..3 and 4..7. Clobbers AX, BX, R9, R12..R14, K1, K2, Z2..Z5,
// Z7.
#define IQ3XXSSTEP(off, soff, yoff, lane) \
	MOVL soff(SI), AX; \
	MOVL (soff+4)(SI), BX; \
	PDEPQ R10, AX, R9; \
	PDEPQ R11, BX, R14; \
	ORQ R14, R9; \
	GZSIGNS7(R9, R12, R13); \
	KMOVQ R9, K1; \
	IQ3QUAD(off, X2); \
	IQ3QUAD(off+4, X3); \
	VINSERTI128 $1, X3, Y2, Y2; \
	IQ3QUAD(off+8, X4); \
	IQ3QUAD(off+12, X3); \
	VINSERTI128 $1, X3, Y4, Y4; \
	VINSERTI64X4 $1, Y4, Z2, Z2; \
	GZSIGNED(yoff); \
	GZSCALE(lane)

// func iq3xxsSumsAVX512(grid *[256]uint32, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq3_xxs block at x + 98b
// with the q8_K block at y + 292b (iq3xxsSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq3xxsSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	GZSIGNEDSETUP
	MOVQ $0x000000007f7f7f7f, R10
	MOVQ $0x7f7f7f7f00000000, R11
	VMOVDQU64 iq3xxsScIdx<>(SB), Y28

iq3xxsblock:
	TESTQ CX, CX
	JZ    iq3xxsdone
	// Y16: word i = 2*ls+1 of sub-block i/2 (bits 28..31 of its dword).
	VMOVDQU64 66(SI), Y16
	VPSRLD $28, Y16, Y16
	VPERMW Y16, Y28, Y16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPXORQ Z0, Z0, Z0
	IQ3XXSSTEP(2, 66, 4, Z20)
	IQ3XXSSTEP(18, 74, 68, Z21)
	IQ3XXSSTEP(34, 82, 132, Z22)
	IQ3XXSSTEP(50, 90, 196, Z23)
	GZSUM
	FSCALE(X0, (SI), X11)
	ADDQ $98, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3xxsblock

iq3xxsdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET

// iq3sNibShift: the VPSRLVW counts 4*((i/2)%2) that bring sub-block
// i/2's scale nibble (of byte i/4, gzQuarter) to bit 0.
DATA iq3sNibShift<>+0x00(SB)/8, $0x0004000400000000
DATA iq3sNibShift<>+0x08(SB)/8, $0x0004000400000000
DATA iq3sNibShift<>+0x10(SB)/8, $0x0004000400000000
DATA iq3sNibShift<>+0x18(SB)/8, $0x0004000400000000
GLOBL iq3sNibShift<>(SB), RODATA|NOPTR, $32

// IQ3SENTRIES4 loads into x the four 4-byte grid entries (table at R8)
// whose indexes are the 16-bit fields of r, low field first. Clobbers r,
// R12, R13.
#define IQ3SENTRIES4(r, x) \
	MOVWQZX r, R12; \
	MOVL r, R13; \
	SHRL $16, R13; \
	VMOVD (R8)(R12*4), x; \
	VPINSRD $1, (R8)(R13*4), x, x; \
	SHRQ $32, r; \
	MOVWQZX r, R12; \
	SHRL $16, r; \
	VPINSRD $2, (R8)(R12*4), x, x; \
	VPINSRD $3, (R8)(r*4), x, x

// IQ3SHALF sets y to the eight 4-byte grid entries of the 9-bit indexes
// made of the qs bytes at qsoff(SI) and the bits of the qh byte at
// qhoff(SI) (GZINDEX). Clobbers AX, BX, R9, R12..R14, X3.
#define IQ3SHALF(qsoff, qhoff, x, y) \
	GZINDEX(qsoff, MOVBLZX, qhoff, 4); \
	IQ3SENTRIES4(R9, x); \
	IQ3SENTRIES4(R14, X3); \
	VINSERTI128 $1, X3, y, y

// IQ3SSTEP adds to Z0 the step whose sixteen qs bytes are at qsoff(SI),
// its two qh bytes at qhoff(SI), its eight sign bytes at soff(SI), its
// codes at yoff(DI).
#define IQ3SSTEP(qsoff, qhoff, soff, yoff, lane) \
	IQ3SHALF(qsoff, qhoff, X2, Y2); \
	IQ3SHALF(qsoff+8, qhoff+1, X4, Y4); \
	VINSERTI64X4 $1, Y4, Z2, Z2; \
	KMOVQ soff(SI), K1; \
	GZSIGNED(yoff); \
	GZSCALE(lane)

// func iq3sSumsAVX512(grid *[512]uint32, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq3_s block at x + 110b
// with the q8_K block at y + 292b (iq3sSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq3sSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	GZSIGNEDSETUP
	// A group's qh bit into bit 8 of its field.
	MOVQ $0x0100010001000100, R10
	VMOVDQU64 gzQuarter<>(SB), Y26
	VMOVDQU64 iq3sNibShift<>(SB), Y27

iq3sblock:
	TESTQ CX, CX
	JZ    iq3sdone
	// Y16: word i = 2*nibble+1 of sub-block i/2 (scale byte i/4, the
	// low nibble first).
	VMOVD 106(SI), X16
	VPMOVZXBW X16, Y16
	VPERMW Y16, Y26, Y16
	VPSRLVW Y27, Y16, Y16
	VPANDQ Y24, Y16, Y16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPXORQ Z0, Z0, Z0
	IQ3SSTEP(2, 66, 74, 4, Z20)
	IQ3SSTEP(18, 68, 82, 68, Z21)
	IQ3SSTEP(34, 70, 90, 132, Z22)
	IQ3SSTEP(50, 72, 98, 196, Z23)
	GZSUM
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
