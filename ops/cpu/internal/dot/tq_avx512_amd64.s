//go:build amd64 && !purego

#include "textflag.h"
#include "tq_amd64.h"

// AVX-512 dot products of TQ1_0 and TQ2_0 with q8_K (iq.go's TQ1_0 and
// TQ2_0), as the AVX2 kernels (tq_amd64.s) with two of their 32-byte
// steps in one zmm where the codes allow it.
//
// TQ2_0, as the AVX2
// kernel (tq_amd64.s) with two of its 32-byte steps in one zmm: each
// half of the super-block's 64 code bytes is broadcast to both halves of
// a zmm and shifted by 0 and 2 (or 4 and 6) bits per half (VPSRLVW), so
// that a masked result's 64 codes meet 64 consecutive q8_K codes. The
// int16 lanes add four VPMADDUBSW pairs each (at most 4*768) before the
// halves are added and the bsums subtracted, so nothing saturates, and
// the float32 step is the AVX2 kernel's: the kernel equals TQ2_0 bit for
// bit on q8_K rows whose bsums are the sums of their codes.

// tqShift01, tqShift23: the VPSRLVW counts 0 and 2, 4 and 6 (low and
// high half).
DATA tqShift01<>+0x00(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x08(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x10(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x18(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x20(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x28(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x30(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x38(SB)/8, $0x0002000200020002
GLOBL tqShift01<>(SB), RODATA|NOPTR, $64
DATA tqShift23<>+0x00(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x08(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x10(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x18(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x20(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x28(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x30(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x38(SB)/8, $0x0006000600060006
GLOBL tqShift23<>(SB), RODATA|NOPTR, $64

// TQ2PAIR adds to Z0 the products of the codes of src shifted by the
// counts in cnt (two 2-bit fields of each byte, one per half) with the
// 64 q8_K codes at yoff(DI). Z24 = bytes 3. Clobbers Z4.
#define TQ2PAIR(src, cnt, yoff) \
	VPSRLVW cnt, src, Z4; \
	VPANDQ Z24, Z4, Z4; \
	VPMADDUBSW yoff(DI), Z4, Z4; \
	VPADDW Z4, Z0, Z0

// func dotTQ2_0Q8_KAVX512(x, y *byte, nb int) float32
TEXT ·dotTQ2_0Q8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	TQSETUP
	VPTERNLOGD $0xff, Z24, Z24, Z24
	VPABSB Z24, Z24 // bytes 1
	VPADDB Z24, Z24, Z25
	VPADDB Z25, Z24, Z24 // bytes 3
	VMOVDQU64 tqShift01<>(SB), Z26
	VMOVDQU64 tqShift23<>(SB), Z27
	TESTQ CX, CX
	JEQ   tq2done

tq2loop:
	VBROADCASTI64X4 (SI), Z2
	VBROADCASTI64X4 32(SI), Z3
	VPXORQ Z0, Z0, Z0
	TQ2PAIR(Z2, Z26, 4)
	TQ2PAIR(Z2, Z27, 68)
	TQ2PAIR(Z3, Z26, 132)
	TQ2PAIR(Z3, Z27, 196)
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDW Y1, Y0, Y0
	TQNEXT(64, 66, tq2loop, tq2done)

// tq1Consts: bytes 0x80 (the flip), -43 and 42 (TRIT3's bounds), words 3
// and 0xff00 (TRITS), 8 bytes each, broadcast.
DATA tq1Consts<>+0x00(SB)/8, $0x8080808080808080
DATA tq1Consts<>+0x08(SB)/8, $0xd5d5d5d5d5d5d5d5
DATA tq1Consts<>+0x10(SB)/8, $0x2a2a2a2a2a2a2a2a
DATA tq1Consts<>+0x18(SB)/8, $0x0003000300030003
DATA tq1Consts<>+0x20(SB)/8, $0xff00ff00ff00ff00
GLOBL tq1Consts<>(SB), RODATA|NOPTR, $40

// tq1Mul: the 16-bit power-of-3 multipliers of the TRITS steps (as
// tq_amd64.s's tq1mul): 64 bytes of 1, 3, 9, 27 (trits 0..3 of
// qs[32:48], one per 16-byte lane), then 32 bytes of 81 in the low half
// (trit 4) and, for qh's bytes, 1,1,3,3,9,9,27,27 in the high half.
DATA tq1Mul<>+0x00(SB)/8, $0x0001000100010001
DATA tq1Mul<>+0x08(SB)/8, $0x0001000100010001
DATA tq1Mul<>+0x10(SB)/8, $0x0003000300030003
DATA tq1Mul<>+0x18(SB)/8, $0x0003000300030003
DATA tq1Mul<>+0x20(SB)/8, $0x0009000900090009
DATA tq1Mul<>+0x28(SB)/8, $0x0009000900090009
DATA tq1Mul<>+0x30(SB)/8, $0x001b001b001b001b
DATA tq1Mul<>+0x38(SB)/8, $0x001b001b001b001b
DATA tq1Mul<>+0x40(SB)/8, $0x0051005100510051
DATA tq1Mul<>+0x48(SB)/8, $0x0051005100510051
DATA tq1Mul<>+0x50(SB)/8, $0x0003000300010001
DATA tq1Mul<>+0x58(SB)/8, $0x001b001b00090009
GLOBL tq1Mul<>(SB), RODATA|NOPTR, $96

// TQ1TRIT3(M, C): C = the trits floor(3m/256) of the bytes m of M, held
// as m^0x80: 1 where M > -43 (K1), plus 1 where M > 42 (K2). Z12 = -43
// bytes, Z11 = 42 bytes, Z10 = bytes 1.
#define TQ1TRIT3(M, C) \
	VPCMPGTB Z12, M, K1; \
	VPCMPGTB Z11, M, K2; \
	VMOVDQU8.Z Z10, K1, C; \
	VPADDB Z10, C, K2, C

// TQ1TRIPLE(M): M = 3M as bytes (the next trit's m, still flipped).
// Clobbers Z9.
#define TQ1TRIPLE(M) \
	VPADDB M, M, Z9; \
	VPADDB Z9, M, M

// TQ1TRITS(src, mul, C): as tq_amd64.s's TRITS on zmm or ymm registers
// (src, C, and the temporary T of one width), the multipliers at mul.
// Z13 = words 3, Z14 = words 0xff00 (or their low halves).
#define TQ1TRITS(src, mul, C, T, W3, WHI) \
	VPSLLW $8, src, T; \
	VPMULLW mul, T, T; \
	VPMULHUW W3, T, T; \
	VPANDQ WHI, src, C; \
	VPMULLW mul, C, C; \
	VPMULHUW W3, C, C; \
	VPSLLW $8, C, C; \
	VPORQ T, C, C

// func dotTQ1_0Q8_KAVX512(x, y *byte, nb int) float32
//
// Per block the 256 trits in tq1_0's order (quant.Trit): trits t and t+1
// of qs[0:32] side by side in a zmm ([m*3^t | m*3^(t+1)]) against the 64
// codes y[32t:], t = 0, 2, and trit 4 in a ymm; trits 0..3 of qs[32:48]
// (broadcast to the four lanes) against y[160:224]; trit 4 of qs[32:48]
// and trits 0..3 of qh against y[224:256]; then the AVX2 kernel's end.
TEXT ·dotTQ1_0Q8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VPBROADCASTQ tq1Consts<>+0x00(SB), Z18
	VPBROADCASTQ tq1Consts<>+0x08(SB), Z12
	VPBROADCASTQ tq1Consts<>+0x10(SB), Z11
	VPBROADCASTQ tq1Consts<>+0x18(SB), Z13
	VPBROADCASTQ tq1Consts<>+0x20(SB), Z14
	VMOVDQU64 tq1Mul<>+0x00(SB), Z16
	VMOVDQU64 tq1Mul<>+0x40(SB), Y17
	TQSETUP
	VPTERNLOGD $0xff, Z10, Z10, Z10
	VPABSB Z10, Z10 // bytes 1
	TESTQ CX, CX
	JEQ   tq1done

tq1loop:
	// [m | 3m] of qs[0:32], flipped: trits 0 and 1.
	VPXORQ (SI), Y18, Y2
	VPADDB Y2, Y2, Y3
	VPADDB Y3, Y2, Y3
	VINSERTI64X4 $1, Y3, Z2, Z2
	TQ1TRIT3(Z2, Z4)
	VPMADDUBSW 4(DI), Z4, Z0
	// Trits 2 and 3.
	TQ1TRIPLE(Z2)
	TQ1TRIPLE(Z2)
	TQ1TRIT3(Z2, Z4)
	VPMADDUBSW 68(DI), Z4, Z4
	VPADDW Z4, Z0, Z0
	// Trit 4: the high half once more tripled, alone.
	TQ1TRIPLE(Z2)
	VEXTRACTI64X4 $1, Z2, Y2
	TQ1TRIT3(Z2, Z4)
	VPMADDUBSW 132(DI), Y4, Y4
	VPADDW Z4, Z0, Z0
	// Trits 0..3 of qs[32:48].
	VBROADCASTI32X4 32(SI), Z3
	TQ1TRITS(Z3, Z16, Z4, Z5, Z13, Z14)
	VPMADDUBSW 164(DI), Z4, Z4
	VPADDW Z4, Z0, Z0
	// Trit 4 of qs[32:48] and trits 0..3 of qh.
	VBROADCASTI32X4 32(SI), Y3
	VPBROADCASTD 48(SI), X7
	VINSERTI128 $1, X7, Y3, Y3
	TQ1TRITS(Y3, Y17, Y4, Y5, Y13, Y14)
	VPMADDUBSW 228(DI), Y4, Y4
	VPADDW Z4, Z0, Z0
	// The halves' int16 lanes added; X8 += float32(s) * d_x*d_y.
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDW Y1, Y0, Y0
	TQNEXT(52, 54, tq1loop, tq1done)
