// Shared pieces of the AVX2 codebook kernels (iq3xxs_amd64.s and the
// others beside it): the sign masks and sign vectors, the grid loads,
// the signed multiply-add of 32 grid values with 32 q8_K codes, the
// sub-block scales (per sub-block, or built once per super-block and
// picked per sub-block) and the float32 scaling of a super-block's
// integer sums. Each file that includes this one gets its own copy of
// the constants.

// gexpand: VPSHUFB indexes that copy byte l of a broadcast dword to bytes
// 8l..8l+7.
DATA gexpand<>+0x00(SB)/8, $0x0000000000000000
DATA gexpand<>+0x08(SB)/8, $0x0101010101010101
DATA gexpand<>+0x10(SB)/8, $0x0202020202020202
DATA gexpand<>+0x18(SB)/8, $0x0303030303030303
GLOBL gexpand<>(SB), RODATA|NOPTR, $32

// gbits: byte k holds bit k%8.
DATA gbits<>+0(SB)/8, $0x8040201008040201
GLOBL gbits<>(SB), RODATA|NOPTR, $8

// GSETUP loads the constants of SIGNMASK: Y9 = gexpand, Y10 = gbits
// broadcast.
#define GSETUP \
	VMOVDQU gexpand<>(SB), Y9; \
	VPBROADCASTQ gbits<>(SB), Y10

// SIGNMASK sets Y4 to 0xff at element e where bit e%8 of byte e/8 of the
// dword in X4 is set (the four sign bytes of 32 elements).
#define SIGNMASK \
	VPBROADCASTD X4, Y4; \
	VPSHUFB Y9, Y4, Y4; \
	VPAND Y10, Y4, Y4; \
	VPCMPEQB Y10, Y4, Y4

// NEGATE negates (two's complement) the bytes of g where Y4 is 0xff.
#define NEGATE(g) \
	VPXOR Y4, g, g; \
	VPSUBB Y4, g, g

// LOADY loads 32 q8_K codes from mem into Y5 and their magnitudes into
// Y6 (-128 reads as 128 when Y6 is taken as unsigned).
#define LOADY(mem) \
	VMOVDQU mem, Y5; \
	VPSIGNB Y5, Y5, Y6

// GDOT adds to acc the int32 lanes of sum(g*y) over the 32 elements, the
// int16 pairs times the words of Y7 (the scales): g takes y's signs
// (VPSIGNB) and multiplies |y| (VPMADDUBSW), so a pair is at most
// 2*|g|*128 and does not saturate for |g| < 128. Clobbers g.
#define GDOT(g, acc) \
	VPSIGNB Y5, g, g; \
	VPMADDUBSW g, Y6, g; \
	VPMADDWD Y7, g, g; \
	VPADDD g, acc, acc

// SCALE1 sets the 16 words of Y7 to 2*r+1 (r a 32-bit register, which
// it clobbers).
#define SCALE1(r) \
	LEAL 1(r)(r*1), r; \
	VMOVD r, X7; \
	VPBROADCASTW X7, Y7

// GRID8X4 sets Y2 to the four 8-byte entries base[r0] .. base[r3] (r0..r3
// 64-bit index registers), loaded one by one and inserted: on AMD Zen 2
// and 3 this beats VPGATHERDQ, which is microcoded there. Clobbers X3.
#define GRID8X4(base, r0, r1, r2, r3) \
	VMOVQ (base)(r0*8), X2; \
	VPINSRQ $1, (base)(r1*8), X2, X2; \
	VMOVQ (base)(r2*8), X3; \
	VPINSRQ $1, (base)(r3*8), X3, X3; \
	VINSERTI128 $1, X3, Y2, Y2

// SIGNS4 sets Y4 to the four 8-byte sign vectors base[r0] .. base[r3]
// (signs64: 0xff where an element is negated, 1 elsewhere), for VPSIGNB.
// Clobbers X8.
#define SIGNS4(base, r0, r1, r2, r3) \
	VMOVQ (base)(r0*8), X4; \
	VPINSRQ $1, (base)(r1*8), X4, X4; \
	VMOVQ (base)(r2*8), X8; \
	VPINSRQ $1, (base)(r3*8), X8, X8; \
	VINSERTI128 $1, X8, Y4, Y4

// geighth: float32 0.125, the weight of IQ1_S's and IQ1_M's shift sums.
DATA geighth<>+0(SB)/4, $0x3e000000
GLOBL geighth<>(SB), RODATA|NOPTR, $4

// IQ1MD sets AX to IQ1_M's f16 super-block scale, whose nibbles are
// the top nibbles of the four scale words at 48(SI). Clobbers BX.
#define IQ1MD \
	MOVWLZX 48(SI), AX; \
	SHRL $12, AX; \
	MOVWLZX 50(SI), BX; \
	SHRL $8, BX; \
	ANDL $0xf0, BX; \
	ORL BX, AX; \
	MOVWLZX 52(SI), BX; \
	SHRL $4, BX; \
	ANDL $0xf00, BX; \
	ORL BX, AX; \
	MOVWLZX 54(SI), BX; \
	ANDL $0xf000, BX; \
	ORL BX, AX

// FDX sets X1 to float32(d_x*d_y): the f16 d_x in the low word of r
// (a 32-bit register, zero above) and the q8_K block's float32 d_y at
// (DI).
#define FDX(r) \
	VMOVD r, X1; \
	VCVTPH2PS X1, X1; \
	VMULSS (DI), X1, X1

// FACC adds to the float32 sum in acc X1 (FDX's d) times the int32 in the
// low lane of xint converted to float32. Clobbers X1, X2.
#define FACC(xint, acc) \
	VCVTDQ2PS xint, X2; \
	VMULSS X2, X1, X1; \
	VADDSS X1, acc, acc

// FSCALE adds to the float32 sum in acc float32(d_x*d_y) times the int32
// in the low lane of xint, d_x the f16 at dx (a memory operand), in the
// generic kernels' order and rounding (sum += float32(float32(d_x*d_y) *
// float32(sum_i)), scalar multiplies and adds, unfused), so the result
// equals theirs bit for bit. Clobbers AX, X1, X2.
#define FSCALE(xint, dx, acc) \
	MOVWLZX dx, AX; \
	FDX(AX); \
	FACC(xint, acc)

// FSCALE1 is FSCALE for IQ1_S and IQ1_M: acc += d * (float32(grid) +
// 0.125*float32(shift)), grid and shift the int32 low lanes of xg and xs,
// d already in X1 (FDX). Clobbers X1, xg, xs.
#define FSCALE1(xg, xs, acc) \
	VCVTDQ2PS xg, xg; \
	VCVTDQ2PS xs, xs; \
	VMULSS geighth<>(SB), xs, xs; \
	VADDSS xs, xg, xg; \
	VMULSS xg, X1, X1; \
	VADDSS X1, acc, acc

// gnib: bytes 0x0f; gone: bytes 1; gpairs: VPSHUFB indexes that copy
// word 0 of each dword of the low lane to all its words and word 1 of
// each dword of the high lane to all its words.
DATA gnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gnib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gnib<>(SB), RODATA|NOPTR, $16
DATA gone<>+0(SB)/8, $0x0101010101010101
DATA gone<>+8(SB)/8, $0x0101010101010101
GLOBL gone<>(SB), RODATA|NOPTR, $16
DATA gpairs<>+0x00(SB)/8, $0x0100010001000100
DATA gpairs<>+0x08(SB)/8, $0x0100010001000100
DATA gpairs<>+0x10(SB)/8, $0x0302030203020302
DATA gpairs<>+0x18(SB)/8, $0x0302030203020302
GLOBL gpairs<>(SB), RODATA|NOPTR, $32

// SCALES2SETUP loads the constants of SCALES2 and SCALE2J: Y14 = gpairs,
// Y15 = dwords 1. Clobbers nothing else.
#define SCALES2SETUP \
	VMOVDQU gpairs<>(SB), Y14; \
	VPCMPEQD Y15, Y15, Y15; \
	VPSRLD $31, Y15, Y15

// SCALES2 sets Y12 to the scales of a super-block's eight sub-blocks
// from the eight scale bytes at mem (low nibble: elements 0..15, high:
// 16..31): dword j = words 2*lo_j+1, 2*hi_j+1. It zeroes Y13, SCALE2J's
// sub-block index. Clobbers X7, X8.
#define SCALES2(mem) \
	VMOVQ mem, X7; \
	VPSRLW $4, X7, X8; \
	VPUNPCKLBW X8, X7, X7; \
	VPAND gnib<>(SB), X7, X7; \
	VPADDB X7, X7, X7; \
	VPOR gone<>(SB), X7, X7; \
	VPMOVZXBW X7, Y12; \
	VPXOR Y13, Y13, Y13

// SCALE2J sets the low 8 words of Y7 to 2*lo+1 and the high 8 to 2*hi+1
// (the scales of elements 0..15 and 16..31) of sub-block Y13 (in every
// dword) from SCALES2's Y12, and steps Y13 by Y15 (dwords 1) to the next
// sub-block.
#define SCALE2J \
	VPERMD Y12, Y13, Y7; \
	VPSHUFB Y14, Y7, Y7; \
	VPADDD Y15, Y13, Y13

// SCALES1 sets Y12 to the scales of a super-block's eight sub-blocks
// from the eight nibbles of the four bytes at mem (sub-block 2i in the
// low nibble of byte i): dword j = words 2*ls_j+1, 2*ls_j+1. It zeroes
// Y13, SCALE1J's sub-block index. Clobbers X7, X8.
#define SCALES1(mem) \
	VMOVD mem, X7; \
	VPSRLW $4, X7, X8; \
	VPUNPCKLBW X8, X7, X7; \
	VPAND gnib<>(SB), X7, X7; \
	VPADDB X7, X7, X7; \
	VPOR gone<>(SB), X7, X7; \
	VPMOVZXBD X7, Y12; \
	VPSLLD $16, Y12, Y7; \
	VPOR Y7, Y12, Y12; \
	VPXOR Y13, Y13, Y13

// SCALE1J sets Y7 as SCALE1 does for sub-block Y13 (in every dword) from
// SCALES1's Y12, and steps Y13 by Y15 (dwords 1) to the next sub-block.
#define SCALE1J \
	VPERMD Y12, Y13, Y7; \
	VPADDD Y15, Y13, Y13

// HSUM stores the sum of the eight int32 lanes of Y(acc) (X(acc) names
// its low half) at dst, using X3.
#define HSUM(yacc, xacc, dst) \
	VEXTRACTI128 $1, yacc, X3; \
	VPADDD X3, xacc, xacc; \
	VPSHUFD $0x4e, xacc, X3; \
	VPADDD X3, xacc, xacc; \
	VPSHUFD $0xb1, xacc, X3; \
	VPADDD X3, xacc, xacc; \
	VMOVD xacc, dst
