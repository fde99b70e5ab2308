//go:build amd64 && !purego

#include "textflag.h"

// AVX2 integer sums of the ternary formats against q8_K (iq.go's TQ1_0
// and TQ2_0, block by block): per super-block sum(c*y) - sum(y) over the
// 256 unsigned codes c (0..2 for TQ1_0, 0..3 for TQ2_0) and the q8_K
// codes y, as eight 32-byte vectors. VPMADDUBSW takes the codes unsigned
// and y signed; each pair it adds is at most 2*3*128 in magnitude, and
// eight vectors' pairs summed in int16 stay below 8*768, so nothing
// saturates or wraps and the sums are exact. The float32 scaling stays
// in Go (tq_amd64.go), so the kernels equal the generic ones bit for bit.

DATA tq3b<>+0(SB)/8, $0x0303030303030303
GLOBL tq3b<>(SB), RODATA|NOPTR, $8

DATA tq3w<>+0(SB)/8, $0x0003000300030003
GLOBL tq3w<>(SB), RODATA|NOPTR, $8

DATA tqhi<>+0(SB)/8, $0xff00ff00ff00ff00
GLOBL tqhi<>(SB), RODATA|NOPTR, $8

// tq1mul: the 16-bit power-of-3 multipliers of TQ1_0's eight vectors,
// 32 bytes each: trit t of a code byte is the top bits of
// (uint8(q*3^t) * 3) (ggml's packing, quant.Trit).
//   0..4: 3^t in every word (the 32 bytes qs[0:32], trit t);
//   5: 1 then 3 (qs[32:48] in both halves, trits 0 and 1);
//   6: 9 then 27 (qs[32:48], trits 2 and 3);
//   7: 81 in the low half (qs[32:48], trit 4), and in the high half,
//      whose byte i is qh[i%4], 3^(i/4) (words 1,1,3,3,9,9,27,27).
DATA tq1mul<>+0x00(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x08(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x10(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x18(SB)/8, $0x0001000100010001
DATA tq1mul<>+0x20(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x28(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x30(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x38(SB)/8, $0x0003000300030003
DATA tq1mul<>+0x40(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x48(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x50(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x58(SB)/8, $0x0009000900090009
DATA tq1mul<>+0x60(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x68(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x70(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x78(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0x80(SB)/8, $0x0051005100510051
DATA tq1mul<>+0x88(SB)/8, $0x0051005100510051
DATA tq1mul<>+0x90(SB)/8, $0x0051005100510051
DATA tq1mul<>+0x98(SB)/8, $0x0051005100510051
DATA tq1mul<>+0xa0(SB)/8, $0x0001000100010001
DATA tq1mul<>+0xa8(SB)/8, $0x0001000100010001
DATA tq1mul<>+0xb0(SB)/8, $0x0003000300030003
DATA tq1mul<>+0xb8(SB)/8, $0x0003000300030003
DATA tq1mul<>+0xc0(SB)/8, $0x0009000900090009
DATA tq1mul<>+0xc8(SB)/8, $0x0009000900090009
DATA tq1mul<>+0xd0(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0xd8(SB)/8, $0x001b001b001b001b
DATA tq1mul<>+0xe0(SB)/8, $0x0051005100510051
DATA tq1mul<>+0xe8(SB)/8, $0x0051005100510051
DATA tq1mul<>+0xf0(SB)/8, $0x0003000300010001
DATA tq1mul<>+0xf8(SB)/8, $0x001b001b00090009
GLOBL tq1mul<>(SB), RODATA|NOPTR, $256

// TQSETUP: Y13 = 0x01 bytes, Y15 = 0x0001 words.
#define TQSETUP \
	VPCMPEQB Y13, Y13, Y13; \
	VPABSB Y13, Y13; \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW $15, Y15, Y15

// TQSTART zeroes the block accumulators: Y0 (sum c*y) and Y1 (sum y).
#define TQSTART \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1

// TQACC adds the 32 unsigned codes in Y6 times the q8 codes at yoff(DI)
// to Y0, and those q8 codes to Y1 (int16 pairs). Clobbers Y4, Y5.
#define TQACC(yoff) \
	VMOVDQU yoff(DI), Y4; \
	VPMADDUBSW Y4, Y6, Y5; \
	VPADDW Y5, Y0, Y0; \
	VPMADDUBSW Y4, Y13, Y5; \
	VPADDW Y5, Y1, Y1

// TQEND stores sum(Y0 - Y1) as an int32 at (DX). Clobbers Y0, X1.
#define TQEND \
	VPSUBW Y1, Y0, Y0; \
	VPMADDWD Y15, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0x4e, X0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0xb1, X0, X1; \
	VPADDD X1, X0, X0; \
	VMOVD X0, (DX)

// func tq2SumsAVX2(x *byte, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = sum over h < 2, l < 4, m < 32 of
// (((x_b[32h+m] >> 2l) & 3) - 1) * y_b[4+128h+32l+m], x_b = x + 66b (a
// tq2_0 block), y_b = y + 292b (a q8_K block).
TEXT ·tq2SumsAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	TQSETUP
	VPBROADCASTQ tq3b<>(SB), Y14

tq2loop:
	TESTQ CX, CX
	JZ    tq2done
	TQSTART
	VMOVDQU (SI), Y2
	VMOVDQU 32(SI), Y3
	VPAND Y14, Y2, Y6
	TQACC(4)
	VPSRLW $2, Y2, Y6
	VPAND Y14, Y6, Y6
	TQACC(36)
	VPSRLW $4, Y2, Y6
	VPAND Y14, Y6, Y6
	TQACC(68)
	VPSRLW $6, Y2, Y6
	VPAND Y14, Y6, Y6
	TQACC(100)
	VPAND Y14, Y3, Y6
	TQACC(132)
	VPSRLW $2, Y3, Y6
	VPAND Y14, Y6, Y6
	TQACC(164)
	VPSRLW $4, Y3, Y6
	VPAND Y14, Y6, Y6
	TQACC(196)
	VPSRLW $6, Y3, Y6
	VPAND Y14, Y6, Y6
	TQACC(228)
	TQEND
	ADDQ $66, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  tq2loop

tq2done:
	VZEROUPPER
	RET

// TRITS sets Y6 to the trits of the 32 code bytes in src for the
// multipliers at tq1mul<>+off: per byte b with its word's multiplier k,
// the high word of ((uint16(b)<<8) * k mod 2^16) * 3, which is
// (uint8(b*k) * 3) >> 8. The even bytes are moved to the top of their
// word first, the odd ones masked in place; both halves' results are
// below 3 and are merged back into bytes. Clobbers Y5.
#define TRITS(src, off) \
	VPSLLW $8, src, Y5; \
	VPMULLW tq1mul<>+off(SB), Y5, Y5; \
	VPMULHUW Y12, Y5, Y5; \
	VPAND Y11, src, Y6; \
	VPMULLW tq1mul<>+off(SB), Y6, Y6; \
	VPMULHUW Y12, Y6, Y6; \
	VPSLLW $8, Y6, Y6; \
	VPOR Y5, Y6, Y6

// func tq1SumsAVX2(x *byte, y *byte, nb int, out *int32)
//
// For b < nb: out[b] = sum over the 256 elements of (trit - 1) * y_b[4+i]
// in tq1_0's order (quant.Trit), x_b = x + 54b (a tq1_0 block), y_b =
// y + 292b (a q8_K block).
TEXT ·tq1SumsAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	TQSETUP
	VPBROADCASTQ tq3w<>(SB), Y12
	VPBROADCASTQ tqhi<>(SB), Y11

tq1loop:
	TESTQ CX, CX
	JZ    tq1done
	TQSTART
	VMOVDQU (SI), Y2
	VBROADCASTI128 32(SI), Y3
	VPBROADCASTD 48(SI), X7
	VINSERTI128 $1, X7, Y3, Y7
	TRITS(Y2, 0x00)
	TQACC(4)
	TRITS(Y2, 0x20)
	TQACC(36)
	TRITS(Y2, 0x40)
	TQACC(68)
	TRITS(Y2, 0x60)
	TQACC(100)
	TRITS(Y2, 0x80)
	TQACC(132)
	TRITS(Y3, 0xa0)
	TQACC(164)
	TRITS(Y3, 0xc0)
	TQACC(196)
	TRITS(Y7, 0xe0)
	TQACC(228)
	TQEND
	ADDQ $54, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  tq1loop

tq1done:
	VZEROUPPER
	RET
