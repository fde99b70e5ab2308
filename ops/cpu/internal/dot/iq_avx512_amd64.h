// Shared pieces of the AVX-512 codebook kernels (iq1_avx512_amd64.s,
// iq2_avx512_amd64.s): 64 elements (two sub-blocks) a step, each group
// of 8's grid index made from its qs byte and its high bits deposited
// (PDEP, BMI2) into a 16-bit field, four groups a 64-bit register; the
// eight 8-byte entries of a step loaded one by one and inserted; the
// scales of the step's four groups of 16 picked by VPERMW from a vector
// of the super-block's sixteen. Each file that includes this one gets its
// own copy of the constants.

// gzLane: VPERMW indexes that copy word k/8 to word k: the scales of
// a step's four groups of 16 (step p adds 4p).
DATA gzLane<>+0x00(SB)/8, $0x0000000000000000
DATA gzLane<>+0x08(SB)/8, $0x0000000000000000
DATA gzLane<>+0x10(SB)/8, $0x0001000100010001
DATA gzLane<>+0x18(SB)/8, $0x0001000100010001
DATA gzLane<>+0x20(SB)/8, $0x0002000200020002
DATA gzLane<>+0x28(SB)/8, $0x0002000200020002
DATA gzLane<>+0x30(SB)/8, $0x0003000300030003
DATA gzLane<>+0x38(SB)/8, $0x0003000300030003
GLOBL gzLane<>(SB), RODATA|NOPTR, $64

// gzHalf: VPERMW indexes that copy word i/2 to word i (one value per
// sub-block of 32 to its two groups of 16).
DATA gzHalf<>+0x00(SB)/8, $0x0001000100000000
DATA gzHalf<>+0x08(SB)/8, $0x0003000300020002
DATA gzHalf<>+0x10(SB)/8, $0x0005000500040004
DATA gzHalf<>+0x18(SB)/8, $0x0007000700060006
GLOBL gzHalf<>(SB), RODATA|NOPTR, $32

// gzQuarter: VPERMW indexes that copy word i/4 to word i.
DATA gzQuarter<>+0x00(SB)/8, $0x0000000000000000
DATA gzQuarter<>+0x08(SB)/8, $0x0001000100010001
DATA gzQuarter<>+0x10(SB)/8, $0x0002000200020002
DATA gzQuarter<>+0x18(SB)/8, $0x0003000300030003
GLOBL gzQuarter<>(SB), RODATA|NOPTR, $32

// GZARGS loads the arguments of a kernel declared as
// func(grid *G, x, y *byte, nb int, out *int32, acc float32) float32:
// R8 = grid, SI = x, DI = y, CX = nb, DX = out, X11 = acc.
#define GZARGS \
	MOVQ grid+0(FP), R8; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	VMOVSS acc+40(FP), X11

// GZSETUP: Z25 = words 1, Z20..Z23 = the VPERMW indexes of the four
// steps' scales (gzLane plus 4p), R11 = the PDEP mask of a qs byte into
// each 16-bit field. Clobbers Z26.
#define GZSETUP \
	VPTERNLOGD $0xff, Z25, Z25, Z25; \
	VPSRLW $15, Z25, Z25; \
	VPSLLW $2, Z25, Z26; \
	VMOVDQU64 gzLane<>(SB), Z20; \
	VPADDW Z26, Z20, Z21; \
	VPADDW Z26, Z21, Z22; \
	VPADDW Z26, Z22, Z23; \
	MOVQ $0x00ff00ff00ff00ff, R11

// GZENTRIES4 loads into xreg and X3 the four grid entries (table at R8)
// whose indexes are the 16-bit fields of r, low field first (xreg the
// first two). The fields are taken out with 32-bit shifts, which clear
// the register above (shorter chains than three 64-bit shifts in a
// row); storing r and loading the fields back was 20% slower a row, and
// VPGATHERQQ of the eight entries 2.2 times slower (Zen 5). Clobbers r,
// R12, R13.
#define GZENTRIES4(r, xreg) \
	MOVWQZX r, R12; \
	MOVL r, R13; \
	SHRL $16, R13; \
	VMOVQ (R8)(R12*8), xreg; \
	VPINSRQ $1, (R8)(R13*8), xreg, xreg; \
	SHRQ $32, r; \
	MOVWQZX r, R12; \
	SHRL $16, r; \
	VMOVQ (R8)(R12*8), X3; \
	VPINSRQ $1, (R8)(r*8), X3, X3

// GZINDEX sets R9 and R14 to the 16-bit grid indexes of a step's groups
// 0..3 and 4..7: its eight qs bytes at qsoff(SI), its index high bits
// loaded from qhoff(SI) by movh, those of groups 0..3 deposited by the
// mask in R10 and those of groups 4..7 after a right shift of hshift.
// Clobbers AX, BX, R12.
#define GZINDEX(qsoff, movh, qhoff, hshift) \
	MOVQ qsoff(SI), AX; \
	movh qhoff(SI), BX; \
	PDEPQ R11, AX, R9; \
	PDEPQ R10, BX, R12; \
	ORQ R12, R9; \
	SHRQ $32, AX; \
	SHRL $hshift, BX; \
	PDEPQ R11, AX, R14; \
	PDEPQ R10, BX, R12; \
	ORQ R12, R14

// GZGRID sets Z2 to a step's eight 8-byte grid entries, their indexes
// made by GZINDEX. Clobbers AX, BX, R9, R12..R14, X3, Y4.
#define GZGRID(qsoff, movh, qhoff, hshift) \
	GZINDEX(qsoff, movh, qhoff, hshift); \
	GZENTRIES4(R9, X2); \
	VINSERTI128 $1, X3, Y2, Y2; \
	GZENTRIES4(R14, X4); \
	VINSERTI128 $1, X3, Y4, Y4; \
	VINSERTI64X4 $1, Y4, Z2, Z2

// GZSCALE adds to Z0 the int16 pairs of Z2 times the step's scales
// (words of Z16 picked by lane). Clobbers Z2, Z7.
#define GZSCALE(lane) \
	VPERMW Z16, lane, Z7; \
	VPMADDWD Z7, Z2, Z2; \
	VPADDD Z2, Z0, Z0

// GZSUM sets X0's low lane to the sum of Z0's sixteen int32 lanes less
// the eight of Y18 (a bias, or zero) and stores it at (DX). Clobbers X3.
#define GZSUM \
	VEXTRACTI64X4 $1, Z0, Y3; \
	VPADDD Y3, Y0, Y0; \
	VPSUBD Y18, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X3; \
	VPADDD X3, X0, X0; \
	VPSHUFD $0x4e, X0, X3; \
	VPADDD X3, X0, X0; \
	VPSHUFD $0xb1, X0, X3; \
	VPADDD X3, X0, X0; \
	VMOVD X0, (DX)

// GZGRIDB sets Z2 to a step's eight grid entries whose indexes are the
// bytes at off0+0..3(SI) (groups 0..3) and off1+0..3(SI) (groups 4..7).
// Clobbers R12, R13, X3, Y4.
#define GZGRIDB(off0, off1) \
	MOVBQZX (off0+0)(SI), R12; \
	MOVBQZX (off0+1)(SI), R13; \
	VMOVQ (R8)(R12*8), X2; \
	VPINSRQ $1, (R8)(R13*8), X2, X2; \
	MOVBQZX (off0+2)(SI), R12; \
	MOVBQZX (off0+3)(SI), R13; \
	VMOVQ (R8)(R12*8), X3; \
	VPINSRQ $1, (R8)(R13*8), X3, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	MOVBQZX (off1+0)(SI), R12; \
	MOVBQZX (off1+1)(SI), R13; \
	VMOVQ (R8)(R12*8), X4; \
	VPINSRQ $1, (R8)(R13*8), X4, X4; \
	MOVBQZX (off1+2)(SI), R12; \
	MOVBQZX (off1+3)(SI), R13; \
	VMOVQ (R8)(R12*8), X3; \
	VPINSRQ $1, (R8)(R13*8), X3, X3; \
	VINSERTI128 $1, X3, Y4, Y4; \
	VINSERTI64X4 $1, Y4, Z2, Z2

// GZSIGNS7 turns the eight 7-bit sign codes in the bytes of r into the
// sign bytes of quant.KSignsIQ2XS: bit 7 of each is the parity of its
// seven bits, folded in by rotations that keep each byte's bit 0 within
// the byte. R15 holds bytes 1. Clobbers t, u.
#define GZSIGNS7(r, t, u) \
	RORXQ $4, r, t; \
	XORQ r, t; \
	RORXQ $2, t, u; \
	XORQ u, t; \
	RORXQ $1, t, u; \
	XORQ u, t; \
	ANDQ R15, t; \
	SHLQ $7, t; \
	ORQ t, r

// GZSIGNED sets Z2's int16 lanes to the pair sums of Z2's grid
// magnitudes times the codes at yoff(DI), each product negated where
// K1's bit (the weight's sign) or the code's sign is set: the magnitudes
// (at most 43) are negated where the two differ and multiply the codes'
// magnitudes, so a pair is at most 2*43*128 and nothing saturates. Z31
// is zero. Clobbers K1, K2, Z5.
#define GZSIGNED(yoff) \
	VMOVDQU64 yoff(DI), Z5; \
	VPMOVB2M Z5, K2; \
	KXORQ K1, K2, K1; \
	VPABSB Z5, Z5; \
	VPSUBB Z2, Z31, K1, Z2; \
	VPMADDUBSW Z2, Z5, Z2

// GZNIBSCALES sets Y16's word i to 2*nibble_i+1 of the eight scale
// bytes at off(SI) (byte i/2, the low nibble first): the scales of the
// groups of 16 of IQ2_XS and IQ2_S. Y26 = gzHalf, Y27 = gzNibShift,
// Y24 = words 15, Y25 = words 1.
#define GZNIBSCALES(off) \
	VMOVQ off(SI), X16; \
	VPMOVZXBW X16, Y16; \
	VPERMW Y16, Y26, Y16; \
	VPSRLVW Y27, Y16, Y16; \
	VPANDQ Y24, Y16, Y16; \
	VPADDW Y16, Y16, Y16; \
	VPORQ Y25, Y16, Y16

// gzNibShift: the VPSRLVW counts 4*(i%2) that bring nibble i to bit 0.
DATA gzNibShift<>+0x00(SB)/8, $0x0004000000040000
DATA gzNibShift<>+0x08(SB)/8, $0x0004000000040000
DATA gzNibShift<>+0x10(SB)/8, $0x0004000000040000
DATA gzNibShift<>+0x18(SB)/8, $0x0004000000040000
GLOBL gzNibShift<>(SB), RODATA|NOPTR, $32

// GZSIGNEDSETUP loads what GZSIGNED, GZSIGNS7 and GZNIBSCALES use: Z31
// zero, R15 bytes 1, Y24 words 15, Y26 gzHalf, Y27 gzNibShift, and Y18
// zero (no bias for GZSUM).
#define GZSIGNEDSETUP \
	VPXORQ Z31, Z31, Z31; \
	VPXORQ Z18, Z18, Z18; \
	MOVQ $0x0101010101010101, R15; \
	VPTERNLOGD $0xff, Z24, Z24, Z24; \
	VPSRLW $12, Z24, Z24; \
	VMOVDQU64 gzHalf<>(SB), Y26; \
	VMOVDQU64 gzNibShift<>(SB), Y27
