//go:build amd64 && !purego

#include "textflag.h"
#include "tq_amd64.h"

// AVX2 dot products of the ternary formats with q8_K (iq.go's TQ1_0 and
// TQ2_0), whole rows in registers. Per super-block: sum(c*y) over the
// 256 unsigned codes c (0..2 for TQ1_0, 0..3 for TQ2_0, the trits or
// 2-bit fields without the offset 1) and the q8_K codes y, as eight
// 32-byte VPMADDUBSW (c unsigned, y signed) added in int16 lanes, less
// sum(y), the q8_K block's sixteen bsums, subtracted word by word. Each
// pair VPMADDUBSW adds is at most 2*3*128 = 768 in magnitude, eight of
// them 6144 and a bsum 2048, so nothing saturates or wraps and the sum s
// is exact (given bsums that are the sums of their codes, as every q8_K
// quantizer writes them and the K-format kernels rely on too). Then, in
// scalar float32 as the generic kernels do: d = d_x*d_y, sum +=
// float32(s)*d, so the kernels equal the generic ones bit for bit.

DATA tq3b<>+0(SB)/8, $0x0303030303030303
GLOBL tq3b<>(SB), RODATA|NOPTR, $8

DATA tq3w<>+0(SB)/8, $0x0003000300030003
GLOBL tq3w<>(SB), RODATA|NOPTR, $8

DATA tqhi<>+0(SB)/8, $0xff00ff00ff00ff00
GLOBL tqhi<>(SB), RODATA|NOPTR, $8

// tqflip: 0x80 bytes; tqlo, tqhi2: the bytes -43 and 42 (see TRIT3).
DATA tqflip<>+0(SB)/8, $0x8080808080808080
GLOBL tqflip<>(SB), RODATA|NOPTR, $8

DATA tqlo<>+0(SB)/8, $0xd5d5d5d5d5d5d5d5
GLOBL tqlo<>(SB), RODATA|NOPTR, $8

DATA tqhi2<>+0(SB)/8, $0x2a2a2a2a2a2a2a2a
GLOBL tqhi2<>(SB), RODATA|NOPTR, $8

// tq1mul: the 16-bit power-of-3 multipliers of TQ1_0's vectors 5..7,
// 32 bytes each: trit t of a code byte is the top bits of
// (uint8(q*3^t) * 3) (ggml's packing, quant.Trit).
//   5: 1 then 3 (qs[32:48] in both halves, trits 0 and 1);
//   6: 9 then 27 (qs[32:48], trits 2 and 3);
//   7: 81 in the low half (qs[32:48], trit 4), and in the high half,
//      whose byte i is qh[i%4], 3^(i/4) (words 1,1,3,3,9,9,27,27).
DATA tq1mul<>+0x00(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x08(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x10(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x18(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x20(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x28(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x30(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x38(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x40(SB)/8, $0x0051005100510051
DATA tq1mul<>+0x48(SB)/8, $0x0051005100510051
DATA tq1mul<>+0x50(SB)/8, $0x0003000300010001
DATA tq1mul<>+0x58(SB)/8, $0x001b001b00090009
GLOBL tq1mul<>(SB), RODATA|NOPTR, $96

// TQMADD(C, YO): Y0 += the int16 pairs of the 32 unsigned codes in C
// times the q8 codes at YO(DI). Clobbers C.
#define TQMADD(C, YO) \
	VPMADDUBSW YO(DI), C, C; \
	VPADDW C, Y0, Y0

// func dotTQ2_0Q8_KAVX2(x, y *byte, nb int) float32
//
// Per block: the codes ((x[32h+m] >> 2l) & 3), h < 2, l < 4, m < 32,
// against y[4+128h+32l+m] (x a tq2_0 block of 66 bytes, y a q8_K block
// of 292).
TEXT ·dotTQ2_0Q8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	TQSETUP
	VPBROADCASTQ tq3b<>(SB), Y14
	TESTQ CX, CX
	JEQ   tq2done

tq2loop:
	VMOVDQU (SI), Y2
	VMOVDQU 32(SI), Y3
	VPAND Y14, Y2, Y0
	VPMADDUBSW 4(DI), Y0, Y0
	VPSRLW $2, Y2, Y6
	VPAND Y14, Y6, Y6
	TQMADD(Y6, 36)
	VPSRLW $4, Y2, Y7
	VPAND Y14, Y7, Y7
	TQMADD(Y7, 68)
	VPSRLW $6, Y2, Y2
	VPAND Y14, Y2, Y2
	TQMADD(Y2, 100)
	VPAND Y14, Y3, Y6
	TQMADD(Y6, 132)
	VPSRLW $2, Y3, Y7
	VPAND Y14, Y7, Y7
	TQMADD(Y7, 164)
	VPSRLW $4, Y3, Y6
	VPAND Y14, Y6, Y6
	TQMADD(Y6, 196)
	VPSRLW $6, Y3, Y3
	VPAND Y14, Y3, Y3
	TQMADD(Y3, 228)
	TQNEXT(64, 66, tq2loop, tq2done)

// TRIT3(M, C): C = the trits floor(3m/256) of the bytes m of M, which
// holds them as m^0x80 (signed m-128): m >= 86 is M > -43 and m >= 171
// is M > 42; C = 0 - (each comparison's 0 or -1). Y12 = -43 bytes, Y11 =
// 42 bytes, Y10 = 0. Clobbers Y9.
#define TRIT3(M, C) \
	VPCMPGTB Y12, M, C; \
	VPCMPGTB Y11, M, Y9; \
	VPADDB Y9, C, C; \
	VPSUBB C, Y10, C

// TRIPLE(M): M = 3M as bytes, which is 3m^0x80 (3(m+128) = 3m+128 mod
// 256): the next trit's m. Clobbers Y9.
#define TRIPLE(M) \
	VPADDB M, M, Y9; \
	VPADDB Y9, M, M

// TRITS(src, off) sets C to the trits of the 32 code bytes in src for
// the multipliers at tq1mul<>+off: per byte b with its word's multiplier
// k, the high word of ((uint16(b)<<8) * k mod 2^16) * 3, which is
// (uint8(b*k) * 3) >> 8. The even bytes are moved to the top of their
// word first, the odd ones masked in place; both halves' results are
// below 3 and are merged back into bytes. Y13 = 3 words, Y14 = 0xff00
// words. Clobbers Y5.
#define TRITS(src, off, C) \
	VPSLLW $8, src, Y5; \
	VPMULLW tq1mul<>+off(SB), Y5, Y5; \
	VPMULHUW Y13, Y5, Y5; \
	VPAND Y14, src, C; \
	VPMULLW tq1mul<>+off(SB), C, C; \
	VPMULHUW Y13, C, C; \
	VPSLLW $8, C, C; \
	VPOR Y5, C, C

// func dotTQ1_0Q8_KAVX2(x, y *byte, nb int) float32
//
// Per block the 256 trits in tq1_0's order (quant.Trit): trit t of
// qs[0:32] against y[4+32t:], t < 5 (vectors 0..4, by TRIT3); trits 0..4
// of qs[32:48] against y[164+16t:] and trits 0..3 of qh[0:4] against
// y[244+4t:] (vectors 5..7, by TRITS), x a tq1_0 block of 54 bytes.
TEXT ·dotTQ1_0Q8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	TQSETUP
	VPBROADCASTQ tq3w<>(SB), Y13
	VPBROADCASTQ tqhi<>(SB), Y14
	VPBROADCASTQ tqlo<>(SB), Y12
	VPBROADCASTQ tqhi2<>(SB), Y11
	VPXOR        Y10, Y10, Y10
	TESTQ CX, CX
	JEQ   tq1done

tq1loop:
	VPBROADCASTQ tqflip<>(SB), Y2
	VPXOR (SI), Y2, Y2
	TRIT3(Y2, Y0)
	VPMADDUBSW 4(DI), Y0, Y0
	TRIPLE(Y2)
	TRIT3(Y2, Y6)
	TQMADD(Y6, 36)
	TRIPLE(Y2)
	TRIT3(Y2, Y6)
	TQMADD(Y6, 68)
	TRIPLE(Y2)
	TRIT3(Y2, Y6)
	TQMADD(Y6, 100)
	TRIPLE(Y2)
	TRIT3(Y2, Y6)
	TQMADD(Y6, 132)
	VBROADCASTI128 32(SI), Y3
	VPBROADCASTD 48(SI), X7
	VINSERTI128 $1, X7, Y3, Y7
	TRITS(Y3, 0x00, Y6)
	TQMADD(Y6, 164)
	TRITS(Y3, 0x20, Y6)
	TQMADD(Y6, 196)
	TRITS(Y7, 0x40, Y6)
	TQMADD(Y6, 228)
	TQNEXT(52, 54, tq1loop, tq1done)
