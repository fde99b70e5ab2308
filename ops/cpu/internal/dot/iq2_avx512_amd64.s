//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"
#include "iq_avx512_amd64.h"

// AVX-512 sums of IQ2_XXS, IQ2_XS and IQ2_S against q8_K (iqgrid.go's
// kernels of the same names), 64 elements (two sub-blocks) a step: the
// step's eight grid entries (GZGRIDB, GZGRID), its 64 sign bits in a
// mask register (IQ2_S's sign bytes as they are; the 7-bit sign codes of
// the others with their parity bits, GZSIGNS7), the signed products by
// GZSIGNED and the scales of 16 by GZSCALE. The integer sum of a
// super-block is stored and scaled into a float32 sum as the generic
// kernels do (iqgrid_amd64.h's FSCALE, as in the AVX2 kernels), so each
// kernel equals its generic one bit for bit.

// iq2xxsScIdx: VPERMW indexes that copy word 4*(i/2)+2 to word i: the
// high word of sub-block i/2's second dword (its scale in bits 28..31,
// once shifted down).
DATA iq2xxsScIdx<>+0x00(SB)/8, $0x0006000600020002
DATA iq2xxsScIdx<>+0x08(SB)/8, $0x000e000e000a000a
DATA iq2xxsScIdx<>+0x10(SB)/8, $0x0016001600120012
DATA iq2xxsScIdx<>+0x18(SB)/8, $0x001e001e001a001a
DATA iq2xxsScIdx<>+0x20(SB)/8, $0x0000000000000000
DATA iq2xxsScIdx<>+0x28(SB)/8, $0x0000000000000000
DATA iq2xxsScIdx<>+0x30(SB)/8, $0x0000000000000000
DATA iq2xxsScIdx<>+0x38(SB)/8, $0x0000000000000000
GLOBL iq2xxsScIdx<>(SB), RODATA|NOPTR, $64

// IQ2XXSSTEP adds to Z0 the step at 16p+2(SI) (sub-blocks 2p and 2p+1,
// each four grid bytes and a word of four 7-bit sign codes and its
// scale), its codes at yoff(DI). R10 is the PDEP mask of four 7-bit
// codes into bytes 0..3, R11 into bytes 4..7. Clobbers AX, BX, R9,
// R12..R14, K1, K2, Z2..Z5, Z7.
#define IQ2XXSSTEP(off, yoff, lane) \
	MOVL (off+4)(SI), AX; \
	MOVL (off+12)(SI), BX; \
	PDEPQ R10, AX, R9; \
	PDEPQ R11, BX, R14; \
	ORQ R14, R9; \
	GZSIGNS7(R9, R12, R13); \
	KMOVQ R9, K1; \
	GZGRIDB(off, off+8); \
	GZSIGNED(yoff); \
	GZSCALE(lane)

// func iq2xxsSumsAVX512(grid *[256]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_xxs block at x + 66b
// with the q8_K block at y + 292b (iq2xxsSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq2xxsSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	GZSIGNEDSETUP
	MOVQ $0x000000007f7f7f7f, R10
	MOVQ $0x7f7f7f7f00000000, R11
	VMOVDQU64 iq2xxsScIdx<>(SB), Z28

iq2xxsblock:
	TESTQ CX, CX
	JZ    iq2xxsdone
	// Y16: word i = 2*ls+1 of sub-block i/2 (bits 28..31 of its second
	// dword).
	VMOVDQU64 2(SI), Z16
	VPSRLD $28, Z16, Z16
	VPERMW Z16, Z28, Z16
	VPADDW Y16, Y16, Y16
	VPORQ Y25, Y16, Y16
	VPXORQ Z0, Z0, Z0
	IQ2XXSSTEP(2, 4, Z20)
	IQ2XXSSTEP(18, 68, Z21)
	IQ2XXSSTEP(34, 132, Z22)
	IQ2XXSSTEP(50, 196, Z23)
	GZSUM
	FSCALE(X0, (SI), X11)
	ADDQ $66, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2xxsblock

iq2xxsdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET

// IQ2XSSTEP adds to Z0 the step at off(SI) (eight words, each a 9-bit
// grid index and a 7-bit sign code), its codes at yoff(DI). R10 is
// words 0x01ff, R11 words 0xfe00 (PEXT of the codes), R9 the PDEP mask
// of 56 bits into seven bits of each byte. Clobbers AX, BX, R12..R14,
// K1, K2, Z2..Z5, Z7, and keeps R9.
#define IQ2XSSTEP(off, yoff, lane) \
	MOVQ off(SI), AX; \
	MOVQ (off+8)(SI), BX; \
	PEXTQ R11, AX, R12; \
	PEXTQ R11, BX, R13; \
	SHLQ $28, R13; \
	ORQ R13, R12; \
	PDEPQ R9, R12, R14; \
	GZSIGNS7(R14, R12, R13); \
	KMOVQ R14, K1; \
	ANDQ R10, AX; \
	ANDQ R10, BX; \
	GZENTRIES4(AX, X2); \
	VINSERTI128 $1, X3, Y2, Y2; \
	GZENTRIES4(BX, X4); \
	VINSERTI128 $1, X3, Y4, Y4; \
	VINSERTI64X4 $1, Y4, Z2, Z2; \
	GZSIGNED(yoff); \
	GZSCALE(lane)

// func iq2xsSumsAVX512(grid *[512]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_xs block at x + 74b
// with the q8_K block at y + 292b (iq2xsSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq2xsSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	GZSIGNEDSETUP
	MOVQ $0x01ff01ff01ff01ff, R10
	MOVQ $0xfe00fe00fe00fe00, R11
	MOVQ $0x7f7f7f7f7f7f7f7f, R9

iq2xsblock:
	TESTQ CX, CX
	JZ    iq2xsdone
	GZNIBSCALES(66)
	VPXORQ Z0, Z0, Z0
	IQ2XSSTEP(2, 4, Z20)
	IQ2XSSTEP(18, 68, Z21)
	IQ2XSSTEP(34, 132, Z22)
	IQ2XSSTEP(50, 196, Z23)
	GZSUM
	FSCALE(X0, (SI), X11)
	ADDQ $74, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2xsblock

iq2xsdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET

// IQ2SSTEP adds to Z0 a step's 64 signed products times their scales:
// its qs bytes at qsoff(SI), its two qh bytes at qhoff(SI) (two bits of
// a group's 10-bit index each), its sign bytes at soff(SI), its codes at
// yoff(DI).
#define IQ2SSTEP(qsoff, qhoff, soff, yoff, lane) \
	GZGRID(qsoff, MOVWLZX, qhoff, 8); \
	KMOVQ soff(SI), K1; \
	GZSIGNED(yoff); \
	GZSCALE(lane)

// func iq2sSumsAVX512(grid *[1024]uint64, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq2_s block at x + 82b
// with the q8_K block at y + 292b (iq2sSumsTwin). It returns acc plus
// the blocks' float32 scaling, in the generic kernel's order.
TEXT ·iq2sSumsAVX512(SB), NOSPLIT, $0-52
	GZARGS
	GZSETUP
	GZSIGNEDSETUP
	// Two bits of a group's qh byte into bits 8, 9 of its field.
	MOVQ $0x0300030003000300, R10

iq2sblock:
	TESTQ CX, CX
	JZ    iq2sdone
	GZNIBSCALES(74)
	VPXORQ Z0, Z0, Z0
	IQ2SSTEP(2, 66, 34, 4, Z20)
	IQ2SSTEP(10, 68, 42, 68, Z21)
	IQ2SSTEP(18, 70, 50, 132, Z22)
	IQ2SSTEP(26, 72, 58, 196, Z23)
	GZSUM
	FSCALE(X0, (SI), X11)
	ADDQ $82, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq2sblock

iq2sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
