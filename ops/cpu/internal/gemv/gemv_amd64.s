//go:build amd64 && !purego

#include "textflag.h"

// Four-row kernels for MUL_MAT with one to three activation rows (see
// gemv_amd64.go): four weight rows against one activation row, each
// output equal bit for bit to its twin (named at each function).
//
// q4_0 and q8_0 (the dot product's lanes,
// same d = d_x*d_y, one FMA per block into one 8-lane accumulator per
// row, HSUM8 at the end) with fewer vector instructions per row and
// block:
//
//   - q4_0: the four rows' f16 scales d_x are gathered with scalar loads
//     into one general register (the scalar pipes are idle), widened by
//     one VCVTPH2PS, multiplied by d_y once, and parked in a stack slot;
//     each row then broadcasts its product with VBROADCASTSS from memory,
//     a pure load. The first-generation kernels (since removed) spent
//     a broadcast, a widening and a multiply per row and block. q8_0 and q5_0 go further (round 2,
//     GV2_Q8ROWT): each row's d_x is widened by a broadcast load from
//     halfTable indexed by its bits and multiplied by d_y in place, some
//     eleven instructions fewer per block (q8_0 about 6% faster from L1).
//   - q4_0: the 16 code bytes are loaded into both halves with
//     VBROADCASTI128 (a load) and the high half shifted by 4 with one
//     VPSRLVD, instead of a load, a shift and a VINSERTI128.
//
// Registers there: SI walks row 0 of x (rows r at SI + r*R8, R9 = 3*R8),
// DI walks y, BX walks the widened scales dy, CX counts blocks, DX = out.
//
// The K formats and f16 follow dotk_amd64.s's and dot_amd64.s's four-row
// kernels; see the K-format section below.

// HSUM8 leaves in the low lane of X (the low half of Y) the sum of Y's
// eight float32 lanes v0..v7 as ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)),
// as dot_amd64.s's HSUM8. T is a scratch register.
#define GV2_HSUM8(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS T, X, X; \
	VMOVHLPS X, X, T; \
	VADDPS T, X, X; \
	VMOVSHDUP X, T; \
	VADDSS T, X, X

// GV2_STORE stores the four rows' sums (HSUM8 of Y0-Y3) in out (DX).
#define GV2_STORE \
	GV2_HSUM8(Y0, X0, X10); \
	GV2_HSUM8(Y1, X1, X10); \
	GV2_HSUM8(Y2, X2, X10); \
	GV2_HSUM8(Y3, X3, X10); \
	VMOVSS X0, (DX); \
	VMOVSS X1, 4(DX); \
	VMOVSS X2, 8(DX); \
	VMOVSS X3, 12(DX)

// GV2_SCALES writes d-16(SP)[r] = f16(d_x of row r) * dy[0] for the
// block at SI. Clobbers AX, R10-R12, X5, X7.
#define GV2_SCALES \
	MOVWLZX      (SI), AX; \
	MOVWLZX      (SI)(R8*1), R10; \
	MOVWLZX      (SI)(R8*2), R11; \
	MOVWLZX      (SI)(R9*1), R12; \
	SHLL         $16, R10; \
	SHLQ         $32, R11; \
	SHLQ         $48, R12; \
	ORQ          R10, AX; \
	ORQ          R12, R11; \
	ORQ          R11, AX; \
	VMOVQ        AX, X5; \
	VCVTPH2PS    X5, X5; \
	VBROADCASTSS (BX), X7; \
	VMULPS       X7, X5, X5; \
	VMOVUPS      X5, d-16(SP)

// Prefetch. MUL_MAT's four-row steps walk the weight rows four at a
// time, each row from start to end, and the next step's four rows start
// cold: the hardware prefetchers need several misses to pick up a new
// stream, and four streams restarting every few microseconds left the
// four-row kernels slower than the one-row dot product (which streams
// one contiguous run) once the weights come from L3 or memory. So each
// kernel asks, as it goes, for the same bytes of the NEXT four rows
// (4*ldx ahead) into L2: when the caller moves on to them (the next step
// of its tile, or of the next tile) they are there. Prefetches never
// fault, so reaching past the last row is harmless.

// GV2_PFN prefetches the line at the current block of each of the next
// four rows (R13 = SI + 4*ldx). Clobbers R13.
#define GV2_PFN \
	LEAQ       (SI)(R8*4), R13; \
	PREFETCHT1 (R13); \
	PREFETCHT1 (R13)(R8*1); \
	PREFETCHT1 (R13)(R8*2); \
	PREFETCHT1 (R13)(R9*1)

// gv2shift: dword shift counts 0 for the low half, 4 for the high half.
DATA gv2shift<>+0(SB)/8, $0
DATA gv2shift<>+8(SB)/8, $0
DATA gv2shift<>+16(SB)/8, $0x0000000400000004
DATA gv2shift<>+24(SB)/8, $0x0000000400000004
GLOBL gv2shift<>(SB), RODATA|NOPTR, $32

DATA gv2nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gv2nib<>(SB), RODATA|NOPTR, $8

DATA gv2eight<>+0(SB)/8, $0x0808080808080808
GLOBL gv2eight<>(SB), RODATA|NOPTR, $8

// GV2_Q4ROW2(QA, SA, ACCA, QB, SB, ACCB): for the q4_0 codes at QA (and
// QB): the codes as unsigned nibbles (elements 0-15 from the low nibbles
// in the low half, 16-31 from the high ones) times the activation codes
// in Y4, less the lanes of 8*y in Y12 (exact for every code: see
// Q4_0Twin), then ACCA += lanes * the float32 at SA (ACCB, SB). The
// two rows' instructions are interleaved: about 2% faster on Zen 3 than
// one row after the other.
#define GV2_Q4ROW2(QA, SA, ACCA, QB, SB, ACCB) \
	VBROADCASTI128 QA, Y6; \
	VBROADCASTI128 QB, Y8; \
	VPSRLVD        Y11, Y6, Y6; \
	VPSRLVD        Y11, Y8, Y8; \
	VPAND          Y14, Y6, Y6; \
	VPAND          Y14, Y8, Y8; \
	VPMADDUBSW     Y4, Y6, Y6; \
	VPMADDUBSW     Y4, Y8, Y8; \
	VPMADDWD       Y15, Y6, Y6; \
	VPMADDWD       Y15, Y8, Y8; \
	VPSUBD         Y12, Y6, Y6; \
	VPSUBD         Y12, Y8, Y8; \
	VCVTDQ2PS      Y6, Y6; \
	VCVTDQ2PS      Y8, Y8; \
	VBROADCASTSS   SA, Y7; \
	VBROADCASTSS   SB, Y9; \
	VFMADD231PS    Y7, Y6, ACCA; \
	VFMADD231PS    Y9, Y8, ACCB

// GV2_Q8ROW(QOFF, SLOT, ACC): |x| times y*sign(x) for the 32 q8_0 codes
// at QOFF and the activation codes in Y4 (the dot product's SIGNED_DOT),
// then ACC += lanes * the float32 at SLOT. (Taking |x| and y*sign(x)
// straight from memory, two loads of the same bytes, measured 10% slower
// on Zen 3 than one load and the sign operations on the register.)
#define GV2_Q8ROW(QOFF, SLOT, ACC) \
	VMOVDQU      QOFF, Y8; \
	VPSIGNB      Y8, Y8, Y6; \
	VPSIGNB      Y8, Y4, Y7; \
	VPMADDUBSW   Y7, Y6, Y6; \
	VPMADDWD     Y15, Y6, Y6; \
	VCVTDQ2PS    Y6, Y6; \
	VBROADCASTSS SLOT, Y7; \
	VFMADD231PS  Y7, Y6, ACC

// GV2_Q8ROWT(QOFF, XD, ACC) is GV2_Q8ROW with the row's d = f16(d_x) *
// d_y formed in place: d_x (the f16 bits in XD, loaded with a scalar
// MOVWLZX) widened by a broadcast load from halfTable (the same float32
// VCVTPH2PS gives; R14 = &halfTable) and multiplied by d_y in Y5, in the
// order GV2_SCALES multiplies. Four table loads, four multiplies and
// four zero-extending loads replace GV2_SCALES's gather, widening and
// stack round trip: about 11 fewer instructions per block.
#define GV2_Q8ROWT(QOFF, XD, ACC) \
	VMOVDQU      QOFF, Y8; \
	VPSIGNB      Y8, Y8, Y6; \
	VPSIGNB      Y8, Y4, Y7; \
	VPMADDUBSW   Y7, Y6, Y6; \
	VPMADDWD     Y15, Y6, Y6; \
	VCVTDQ2PS    Y6, Y6; \
	VBROADCASTSS (R14)(XD*4), Y7; \
	VMULPS       Y5, Y7, Y7; \
	VFMADD231PS  Y7, Y6, ACC

// GV2_Q40(LOOP, DONE, PF) and GV2_Q80(LOOP, DONE, PF) are the bodies of
// the q4_0 and q8_0 kernels with labels LOOP and DONE, PF issuing the
// prefetches of each block step.
#define GV2_Q40(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R8; \
	MOVQ y+16(FP), DI; \
	MOVQ dy+24(FP), BX; \
	MOVQ nb+32(FP), CX; \
	MOVQ out+40(FP), DX; \
	LEAQ (R8)(R8*2), R9; \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW $15, Y15, Y15; \
	VPBROADCASTQ gv2nib<>(SB), Y14; \
	VPBROADCASTQ gv2eight<>(SB), Y13; \
	VMOVDQU gv2shift<>(SB), Y11; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	GV2_SCALES; \
	VMOVDQU 2(DI), Y4; \
	VPMADDUBSW Y4, Y13, Y12; \
	VPMADDWD Y15, Y12, Y12; \
	GV2_Q4ROW2(2(SI), d-16(SP), Y0, 2(SI)(R8*1), d-12(SP), Y1); \
	GV2_Q4ROW2(2(SI)(R8*2), d-8(SP), Y2, 2(SI)(R9*1), d-4(SP), Y3); \
	ADDQ $18, SI; \
	ADDQ $34, DI; \
	ADDQ $4, BX; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	GV2_STORE; \
	VZEROUPPER; \
	RET

#define GV2_Q80(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R8; \
	MOVQ y+16(FP), DI; \
	MOVQ dy+24(FP), BX; \
	MOVQ nb+32(FP), CX; \
	MOVQ out+40(FP), DX; \
	LEAQ (R8)(R8*2), R9; \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW $15, Y15, Y15; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	TESTQ CX, CX; \
	JEQ DONE; \
	MOVQ ·halfTable(SB), R14; \
LOOP: \
	PF; \
	MOVWLZX (SI), AX; \
	MOVWLZX (SI)(R8*1), R10; \
	MOVWLZX (SI)(R8*2), R11; \
	MOVWLZX (SI)(R9*1), R12; \
	VBROADCASTSS (BX), Y5; \
	VMOVDQU 2(DI), Y4; \
	GV2_Q8ROWT(2(SI), AX, Y0); \
	GV2_Q8ROWT(2(SI)(R8*1), R10, Y1); \
	GV2_Q8ROWT(2(SI)(R8*2), R11, Y2); \
	GV2_Q8ROWT(2(SI)(R9*1), R12, Y3); \
	ADDQ $34, SI; \
	ADDQ $34, DI; \
	ADDQ $4, BX; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	GV2_STORE; \
	VZEROUPPER; \
	RET

// func q4_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// Twin: Q4_0Twin.
TEXT ·q4_0x4AVX2(SB), NOSPLIT, $16-48
	GV2_Q40(gv2q40loop, gv2q40done, GV2_PFN)

// func q8_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// Twin: Q8_0Twin.
TEXT ·q8_0x4AVX2(SB), NOSPLIT, $16-48
	GV2_Q80(gv2q80loop, gv2q80done, GV2_PFN)

// q5_0: the q4_0 scheme with the fifth bits. Each code is taken
// unsigned, u = nibble | bit << 4 in 0..31, multiplied by the activation
// codes, and the lanes of 16*y subtracted, so every lane is the exact sum
// of (u-16)*y over its four elements for any activation code, -128
// included (the dot product's sign trick wraps there); the blocks go into
// one accumulator per row. Twin: Q5_0Twin.

// gv2qhshuf spreads a broadcast uint32 so that byte j holds its byte j/8;
// gv2notbit's byte j is ^(1 << (j%8)) (as dot_amd64.s's QHBITS).
DATA gv2qhshuf<>+0(SB)/8, $0x0000000000000000
DATA gv2qhshuf<>+8(SB)/8, $0x0101010101010101
DATA gv2qhshuf<>+16(SB)/8, $0x0202020202020202
DATA gv2qhshuf<>+24(SB)/8, $0x0303030303030303
GLOBL gv2qhshuf<>(SB), RODATA|NOPTR, $32

DATA gv2notbit<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL gv2notbit<>(SB), RODATA|NOPTR, $8

DATA gv2sixteen<>+0(SB)/8, $0x1010101010101010
GLOBL gv2sixteen<>(SB), RODATA|NOPTR, $8

// GV2_Q5ROW(QH, QS, SLOT, ACC): the q5_0 block with its high bits at QH
// and its codes at QS: Y6 = u, times the activation codes in Y4, less
// the lanes of 16*y in Y12, then ACC += lanes * d, d = f16(d_x) * d_y
// formed as GV2_Q8ROWT does (d_x's bits in XD, d_y in Y5, R14 =
// &halfTable). Y13 = gv2qhshuf, Y10 = gv2notbit, Y9 = all ones, Y8 =
// 0x10 bytes, Y11 = gv2shift, Y14 = 0x0f.
#define GV2_Q5ROW(QH, QS, XD, ACC) \
	VPBROADCASTD   QH, Y7; \
	VPSHUFB        Y13, Y7, Y7; \
	VPOR           Y10, Y7, Y7; \
	VPCMPEQB       Y9, Y7, Y7; \
	VPAND          Y8, Y7, Y7; \
	VBROADCASTI128 QS, Y6; \
	VPSRLVD        Y11, Y6, Y6; \
	VPAND          Y14, Y6, Y6; \
	VPOR           Y7, Y6, Y6; \
	VPMADDUBSW     Y4, Y6, Y6; \
	VPMADDWD       Y15, Y6, Y6; \
	VPSUBD         Y12, Y6, Y6; \
	VCVTDQ2PS      Y6, Y6; \
	VBROADCASTSS   (R14)(XD*4), Y7; \
	VMULPS         Y5, Y7, Y7; \
	VFMADD231PS    Y7, Y6, ACC

// func q5_0x4AVX2(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// Twin: Q5_0Twin.
TEXT ·q5_0x4AVX2(SB), NOSPLIT, $16-48
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R8
	MOVQ         y+16(FP), DI
	MOVQ         dy+24(FP), BX
	MOVQ         nb+32(FP), CX
	MOVQ         out+40(FP), DX
	LEAQ         (R8)(R8*2), R9
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ gv2nib<>(SB), Y14
	VMOVDQU      gv2shift<>(SB), Y11
	VMOVDQU      gv2qhshuf<>(SB), Y13
	VPBROADCASTQ gv2notbit<>(SB), Y10
	VPCMPEQB     Y9, Y9, Y9
	VPBROADCASTQ gv2sixteen<>(SB), Y8
	MOVQ         ·halfTable(SB), R14
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	TESTQ        CX, CX
	JEQ          gv2q50done

gv2q50loop:
	GV2_PFN
	MOVWLZX      (SI), AX
	MOVWLZX      (SI)(R8*1), R10
	MOVWLZX      (SI)(R8*2), R11
	MOVWLZX      (SI)(R9*1), R12
	VBROADCASTSS (BX), Y5
	VMOVDQU      2(DI), Y4
	VPMADDUBSW   Y4, Y8, Y12
	VPMADDWD     Y15, Y12, Y12
	GV2_Q5ROW(2(SI), 6(SI), AX, Y0)
	GV2_Q5ROW(2(SI)(R8*1), 6(SI)(R8*1), R10, Y1)
	GV2_Q5ROW(2(SI)(R8*2), 6(SI)(R8*2), R11, Y2)
	GV2_Q5ROW(2(SI)(R9*1), 6(SI)(R9*1), R12, Y3)
	ADDQ         $22, SI
	ADDQ         $34, DI
	ADDQ         $4, BX
	DECQ         CX
	JNE          gv2q50loop

gv2q50done:
	GV2_STORE
	VZEROUPPER
	RET

// q4_1 and q5_1 against q8_1 activation rows. The codes are unsigned
// (no offset), so each row-block is the dot product's lanes times
// d_x*d_y into one accumulator per row; the min term m_x*s_y is summed
// per row in its own float32 lane (X5) in block order, as the dot product
// sums it, and added to the row's lane sum at the end. The scales need
// no widening by the caller: the (d, m) pairs of the four rows are
// gathered into two general registers, the activation block's (d, s) pair
// broadcast, and one VCVTPH2PS and one VMULPS give all eight products.
// Twins: Q4_1Twin, Q5_1Twin.

// GV2_SCALES1 writes d-32(SP)[2r] = d_x*d_y of row r and X5[r] += m_x*s_y
// for the block at SI and the q8_1 block at DI. Clobbers AX, R10-R12, X6,
// X7.
#define GV2_SCALES1 \
	MOVL         (SI), AX; \
	MOVL         (SI)(R8*1), R10; \
	MOVL         (SI)(R8*2), R11; \
	MOVL         (SI)(R9*1), R12; \
	SHLQ         $32, R10; \
	SHLQ         $32, R12; \
	ORQ          R10, AX; \
	ORQ          R12, R11; \
	VMOVQ        AX, X6; \
	VPINSRQ      $1, R11, X6, X6; \
	VCVTPH2PS    X6, Y6; \
	VPBROADCASTD (DI), X7; \
	VCVTPH2PS    X7, Y7; \
	VMULPS       Y7, Y6, Y6; \
	VMOVUPS      Y6, d-32(SP); \
	VEXTRACTF128 $1, Y6, X7; \
	VSHUFPS      $0xdd, X7, X6, X7; \
	VADDPS       X7, X5, X5

// GV2_Q41ROW(QS, SLOT, ACC): the q4_1 codes at QS as unsigned nibbles
// times the activation codes in Y4, then ACC += lanes * the float32 at
// SLOT.
#define GV2_Q41ROW(QS, SLOT, ACC) \
	VBROADCASTI128 QS, Y6; \
	VPSRLVD        Y11, Y6, Y6; \
	VPAND          Y14, Y6, Y6; \
	VPMADDUBSW     Y4, Y6, Y6; \
	VPMADDWD       Y15, Y6, Y6; \
	VCVTDQ2PS      Y6, Y6; \
	VBROADCASTSS   SLOT, Y7; \
	VFMADD231PS    Y7, Y6, ACC

// GV2_Q51ROW(QH, QS, SLOT, ACC): GV2_Q41ROW with the fifth bits at QH
// (Y13 = gv2qhshuf, Y10 = gv2notbit, Y9 = all ones, Y8 = 0x10 bytes).
#define GV2_Q51ROW(QH, QS, SLOT, ACC) \
	VPBROADCASTD   QH, Y7; \
	VPSHUFB        Y13, Y7, Y7; \
	VPOR           Y10, Y7, Y7; \
	VPCMPEQB       Y9, Y7, Y7; \
	VPAND          Y8, Y7, Y7; \
	VBROADCASTI128 QS, Y6; \
	VPSRLVD        Y11, Y6, Y6; \
	VPAND          Y14, Y6, Y6; \
	VPOR           Y7, Y6, Y6; \
	VPMADDUBSW     Y4, Y6, Y6; \
	VPMADDWD       Y15, Y6, Y6; \
	VCVTDQ2PS      Y6, Y6; \
	VBROADCASTSS   SLOT, Y7; \
	VFMADD231PS    Y7, Y6, ACC

// GV2_SETUP1 loads the constants of the q8_1 kernels and zeroes the
// accumulators.
#define GV2_SETUP1 \
	LEAQ         (R8)(R8*2), R9; \
	VPCMPEQW     Y15, Y15, Y15; \
	VPSRLW       $15, Y15, Y15; \
	VPBROADCASTQ gv2nib<>(SB), Y14; \
	VMOVDQU      gv2shift<>(SB), Y11; \
	VXORPS       Y0, Y0, Y0; \
	VXORPS       Y1, Y1, Y1; \
	VXORPS       Y2, Y2, Y2; \
	VXORPS       Y3, Y3, Y3; \
	VXORPS       X5, X5, X5

// GV2_STORE1 stores each row's lane sum (HSUM8) plus its min-term sum.
#define GV2_STORE1 \
	GV2_HSUM8(Y0, X0, X6); \
	GV2_HSUM8(Y1, X1, X6); \
	GV2_HSUM8(Y2, X2, X6); \
	GV2_HSUM8(Y3, X3, X6); \
	VINSERTPS $0x10, X1, X0, X0; \
	VINSERTPS $0x20, X2, X0, X0; \
	VINSERTPS $0x30, X3, X0, X0; \
	VADDPS    X5, X0, X0; \
	VMOVUPS   X0, (DX)

// func q4_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// Twin: Q4_1Twin.
TEXT ·q4_1x4AVX2(SB), NOSPLIT, $32-40
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), R8
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	GV2_SETUP1
	TESTQ CX, CX
	JEQ   gv2q41done

gv2q41loop:
	GV2_PFN
	GV2_SCALES1
	VMOVDQU 4(DI), Y4
	GV2_Q41ROW(4(SI), d-32(SP), Y0)
	GV2_Q41ROW(4(SI)(R8*1), d-24(SP), Y1)
	GV2_Q41ROW(4(SI)(R8*2), d-16(SP), Y2)
	GV2_Q41ROW(4(SI)(R9*1), d-8(SP), Y3)
	ADDQ    $20, SI
	ADDQ    $36, DI
	DECQ    CX
	JNE     gv2q41loop

gv2q41done:
	GV2_STORE1
	VZEROUPPER
	RET

// func q5_1x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// Twin: Q5_1Twin.
TEXT ·q5_1x4AVX2(SB), NOSPLIT, $32-40
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), R8
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	GV2_SETUP1
	VMOVDQU      gv2qhshuf<>(SB), Y13
	VPBROADCASTQ gv2notbit<>(SB), Y10
	VPCMPEQB     Y9, Y9, Y9
	VPBROADCASTQ gv2sixteen<>(SB), Y8
	TESTQ        CX, CX
	JEQ          gv2q51done

gv2q51loop:
	GV2_PFN
	GV2_SCALES1
	VMOVDQU 4(DI), Y4
	GV2_Q51ROW(4(SI), 8(SI), d-32(SP), Y0)
	GV2_Q51ROW(4(SI)(R8*1), 8(SI)(R8*1), d-24(SP), Y1)
	GV2_Q51ROW(4(SI)(R8*2), 8(SI)(R8*2), d-16(SP), Y2)
	GV2_Q51ROW(4(SI)(R9*1), 8(SI)(R9*1), d-8(SP), Y3)
	ADDQ    $24, SI
	ADDQ    $36, DI
	DECQ    CX
	JNE     gv2q51loop

gv2q51done:
	GV2_STORE1
	VZEROUPPER
	RET

// K-format four-row kernels (q2_K to q6_K): four q8_K-activation dot products side by side, each
// row's integer lanes formed exactly as in its dot product, the rows'
// totals reduced together (exact integer sums, so the order does not
// matter), and the dot product's float32 step run on the four rows' lanes
// at once with the same operations in the same order, so every out[r]
// equals the dot product (and the generic function) bit for bit. Besides
// the next-step prefetch, q3_K, q4_K and q5_K unpack the packed 6-bit
// scale codes of two rows at once in vector registers, where the dot
// products spend some thirty scalar instructions per row and block.
// dotk_amd64.s's macros and constants are copied here with a K2_ / gv2
// prefix (assembler macros and static data are per file).

DATA gv2knib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gv2knib<>(SB), RODATA|NOPTR, $8

DATA gv2k10<>+0(SB)/8, $0x1010101010101010
GLOBL gv2k10<>(SB), RODATA|NOPTR, $8

DATA gv2k30<>+0(SB)/8, $0x3030303030303030
GLOBL gv2k30<>(SB), RODATA|NOPTR, $8


DATA gv2wpair<>+0(SB)/8, $0x0100010001000100
DATA gv2wpair<>+8(SB)/8, $0x0100010001000100
DATA gv2wpair<>+16(SB)/8, $0x0302030203020302
DATA gv2wpair<>+24(SB)/8, $0x0302030203020302
DATA gv2wpair<>+32(SB)/8, $0x0504050405040504
DATA gv2wpair<>+40(SB)/8, $0x0504050405040504
DATA gv2wpair<>+48(SB)/8, $0x0706070607060706
DATA gv2wpair<>+56(SB)/8, $0x0706070607060706
DATA gv2wpair<>+64(SB)/8, $0x0908090809080908
DATA gv2wpair<>+72(SB)/8, $0x0908090809080908
DATA gv2wpair<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA gv2wpair<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA gv2wpair<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA gv2wpair<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA gv2wpair<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA gv2wpair<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL gv2wpair<>(SB), RODATA|NOPTR, $128

// K2_ACCUM(Q, YOFF, PAT, SC): Y6 += VPMADDWD(VPMADDUBSW(Q, y codes at
// YOFF(DI)), the words of SC picked by the VPSHUFB pattern at PAT).
// Clobbers Q and Y11.
#define K2_ACCUM(Q, YOFF, PAT, SC) \
	VPMADDUBSW YOFF(DI), Q, Q; \
	VPSHUFB PAT, SC, Y11; \
	VPMADDWD Y11, Q, Q; \
	VPADDD Q, Y6, Y6

// K2_Q5K_PAIR(JJ, LOP, LS, HOP, HS): as K2B_Q4K_PAIR with the fifth bits of Y13
// (bit j of byte l is element l of sub-block j) moved to bit 4 by LOP $LS
// and HOP $HS.
#define K2_Q5K_PAIR(JJ, LOP, LS, HOP, HS) \
	VMOVDQU 48+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	LOP $LS, Y13, Y9; \
	VPAND Y14, Y9, Y9; \
	VPOR Y9, Y7, Y7; \
	HOP $HS, Y13, Y10; \
	VPAND Y14, Y10, Y10; \
	VPOR Y10, Y8, Y8; \
	K2_ACCUM(Y7, 4+64*JJ, gv2bbcast<>+64*JJ(SB), Y3); \
	K2_ACCUM(Y8, 36+64*JJ, gv2bbcast<>+64*JJ+32(SB), Y3)

// K2_Q6K_HALF(H, SC): the 128 elements of half H; SC holds the eight scale
// words of the half in both lanes. Y15 = 0x0f, Y14 = 0x30.
#define K2_Q6K_HALF(H, SC) \
	VMOVDQU 64*H(SI), Y7; \
	VMOVDQU 64*H+32(SI), Y8; \
	VMOVDQU 128+32*H(SI), Y9; \
	VPAND Y15, Y7, Y10; \
	VPSLLW $4, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 4+128*H, gv2wpair<>+0(SB), SC); \
	VPAND Y15, Y8, Y10; \
	VPSLLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 36+128*H, gv2wpair<>+32(SB), SC); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y15, Y10, Y10; \
	VPAND Y14, Y9, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 68+128*H, gv2wpair<>+64(SB), SC); \
	VPSRLW $4, Y8, Y10; \
	VPAND Y15, Y10, Y10; \
	VPSRLW $2, Y9, Y5; \
	VPAND Y14, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 100+128*H, gv2wpair<>+96(SB), SC)

// K2_GV_FOLD(B): X6 = [p0+p1, p2+p3, b0+b1, b2+b3] + the same of the high
// lanes, for Y6 = p and B = b. Clobbers Y7.
#define K2_GV_FOLD(B) \
	VPHADDD B, Y6, Y6; \
	VEXTRACTI128 $1, Y6, X7; \
	VPADDD X7, X6, X6

// K2_GV_COMBINE: X4 = the four rows' totals of Y6, X5 those of B, from the
// folds parked in Y0 and Y12. Clobbers X1-X3.
#define K2_GV_COMBINE \
	VPHADDD Y12, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPUNPCKLDQ X1, X0, X2; \
	VPUNPCKHDQ X1, X0, X3; \
	VPUNPCKLQDQ X3, X2, X4; \
	VPUNPCKHQDQ X3, X2, X5

// K2_Q6K_ROW: Y6 and Y3 for the q6_K block at SI.
#define K2_Q6K_ROW \
	VPMOVSXBW 192(SI), Y2; \
	VPMADDWD 260(DI), Y2, Y3; \
	VPERMQ $0x44, Y2, Y4; \
	VPERMQ $0xee, Y2, Y2; \
	VPXOR Y6, Y6, Y6; \
	K2_Q6K_HALF(0, Y4); \
	K2_Q6K_HALF(1, Y2); \
	K2_GV_FOLD(Y3)

// K2_GV_ROWS(ROW): the four rows' folds into Y0 and Y12, SI back at row 0.
#define K2_GV_ROWS(ROW) \
	ROW; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	ROW; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	ROW; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	ROW; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI

// Scale unpacking of two q4_K/q5_K rows at once, in vector registers
// (instead of dotk_amd64.s's KSCALES scalar code, about a fifth of the
// four-row kernel's time): for the 12 packed bytes s0..s11 of a row, the result
// bytes are s0-3 & 63 (scales 0-3), (s8-11 & 15) | (s0-3 >> 6) << 4
// (scales 4-7), s4-7 & 63 (mins 0-3), (s8-11 >> 4) | (s4-7 >> 6) << 4
// (mins 4-7), exactly KSCALES's.
DATA gv2ksh1<>+0(SB)/8, $0x0b0a090803020100
DATA gv2ksh1<>+8(SB)/8, $0x0b0a090807060504
DATA gv2ksh1<>+16(SB)/8, $0x0b0a090803020100
DATA gv2ksh1<>+24(SB)/8, $0x0b0a090807060504
GLOBL gv2ksh1<>(SB), RODATA|NOPTR, $32

DATA gv2ksh2<>+0(SB)/8, $0x0302010080808080
DATA gv2ksh2<>+8(SB)/8, $0x0706050480808080
DATA gv2ksh2<>+16(SB)/8, $0x0302010080808080
DATA gv2ksh2<>+24(SB)/8, $0x0706050480808080
GLOBL gv2ksh2<>(SB), RODATA|NOPTR, $32

DATA gv2km1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gv2km1<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL gv2km1<>(SB), RODATA|NOPTR, $32

DATA gv2km3<>+0(SB)/8, $0x3030303000000000
DATA gv2km3<>+8(SB)/8, $0x3030303000000000
DATA gv2km3<>+16(SB)/8, $0x3030303000000000
DATA gv2km3<>+24(SB)/8, $0x3030303000000000
GLOBL gv2km3<>(SB), RODATA|NOPTR, $32

// K2_KSCALES2: Y12 = KSCALES's X1 for the block at SI (low half) and the
// one at SI + R11 (high half). A = bytes [s0-3, s8-11, s4-7, s8-11];
// dword 3 is taken from A >> 4; B = [0, s0-3, 0, s4-7] gives the high
// two bits. Clobbers Y1, Y2.
#define K2_KSCALES2 \
	VMOVDQU      4(SI), X12; \
	VINSERTI128  $1, 4(SI)(R11*1), Y12, Y12; \
	VPSHUFB      gv2ksh1<>(SB), Y12, Y1; \
	VPSHUFB      gv2ksh2<>(SB), Y12, Y12; \
	VPSRLW       $4, Y1, Y2; \
	VPBLENDD     $0x88, Y2, Y1, Y1; \
	VPAND        gv2km1<>(SB), Y1, Y1; \
	VPSRLW       $2, Y12, Y12; \
	VPAND        gv2km3<>(SB), Y12, Y12; \
	VPOR         Y1, Y12, Y12

// q4_K's and q5_K's scale vectors straight from the scale bytes (round
// 2): Y3 = the row's 16 scale-code bytes (K2_KSCALES2's: scales 0-7,
// then mins 0-7) in both lanes, by one VPERMQ; K2_ACCUM's VPSHUFB then
// picks scale byte j with a zero high byte (gv2bbcast: scale j as
// words), and one more VPSHUFB (gv2kminpat) spreads the mins as words
// [m_j, m_j] against the bsum pairs for the min term's VPMADDWD. Three
// instructions per row and block where the first version widened the
// codes to words, split and duplicated the mins (seven) and moved the
// row's codes into X1 first; every integer lane is the same, so the
// results are too (q4_K about 12% faster from L1).
DATA gv2bbcast<>+0(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+8(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+16(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+24(SB)/8, $0x8000800080008000
DATA gv2bbcast<>+32(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+40(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+48(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+56(SB)/8, $0x8001800180018001
DATA gv2bbcast<>+64(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+72(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+80(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+88(SB)/8, $0x8002800280028002
DATA gv2bbcast<>+96(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+104(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+112(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+120(SB)/8, $0x8003800380038003
DATA gv2bbcast<>+128(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+136(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+144(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+152(SB)/8, $0x8004800480048004
DATA gv2bbcast<>+160(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+168(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+176(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+184(SB)/8, $0x8005800580058005
DATA gv2bbcast<>+192(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+200(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+208(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+216(SB)/8, $0x8006800680068006
DATA gv2bbcast<>+224(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+232(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+240(SB)/8, $0x8007800780078007
DATA gv2bbcast<>+248(SB)/8, $0x8007800780078007
GLOBL gv2bbcast<>(SB), RODATA|NOPTR, $256

DATA gv2kminpat<>+0(SB)/8, $0x8009800980088008
DATA gv2kminpat<>+8(SB)/8, $0x800b800b800a800a
DATA gv2kminpat<>+16(SB)/8, $0x800d800d800c800c
DATA gv2kminpat<>+24(SB)/8, $0x800f800f800e800e
GLOBL gv2kminpat<>(SB), RODATA|NOPTR, $32

// K2B_Q4K_PAIR(JJ): sub-blocks 2JJ (low nibbles) and 2JJ+1 (high
// nibbles), their codes times y and then their scales (bytes in Y3),
// into Y6.
#define K2B_Q4K_PAIR(JJ) \
	VMOVDQU 16+32*JJ(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	K2_ACCUM(Y7, 4+64*JJ, gv2bbcast<>+64*JJ(SB), Y3); \
	K2_ACCUM(Y8, 36+64*JJ, gv2bbcast<>+64*JJ+32(SB), Y3)

// K2B_Q4K_ROWS(H, PERM): H = VPHADDD(scaled-product lanes, min-term
// lanes) of the q4_K block at SI, formed as in dotQ4_KQ8_KAVX2, for the
// row whose scale codes VPERMQ $PERM takes from Y12 (0x44: the low
// lane's row, 0xee: the high lane's). Clobbers Y3-Y8, Y11.
#define K2B_Q4K_ROWS(H, PERM) \
	VPERMQ $PERM, Y12, Y3; \
	VPSHUFB gv2kminpat<>(SB), Y3, Y4; \
	VPMADDWD 260(DI), Y4, Y4; \
	VPXOR Y6, Y6, Y6; \
	K2B_Q4K_PAIR(0); \
	K2B_Q4K_PAIR(1); \
	K2B_Q4K_PAIR(2); \
	K2B_Q4K_PAIR(3); \
	VPHADDD Y4, Y6, H

// K2_Q4K_FN2(LOOP, DONE, PF): the body of q4_Kx4AVX2, PF before each
// row's block, the scale codes of rows 0-1 and 2-3 unpacked together
// into Y12.
#define K2_Q4K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gv2knib<>(SB), Y15; \
	VXORPS X14, X14, X14; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_KSCALES2; \
	K2B_Q4K_ROWS(Y0, 0x44); \
	ADDQ R11, SI; \
	PF; \
	K2B_Q4K_ROWS(Y9, 0xee); \
	ADDQ R11, SI; \
	PF; \
	K2_KSCALES2; \
	K2B_Q4K_ROWS(Y10, 0x44); \
	ADDQ R11, SI; \
	PF; \
	K2B_Q4K_ROWS(Y13, 0xee); \
	SUBQ R12, SI; \
	VPHADDD Y9, Y0, Y0; \
	VPHADDD Y13, Y10, Y10; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VEXTRACTI128 $1, Y10, X1; \
	VPADDD X1, X10, X10; \
	VSHUFPS $0x88, X10, X0, X2; \
	VSHUFPS $0xdd, X10, X0, X3; \
	VCVTDQ2PS X2, X2; \
	VCVTDQ2PS X3, X3; \
	VMOVD (SI), X4; \
	VPINSRD $1, (SI)(R11*1), X4, X4; \
	VPINSRD $2, (SI)(R11*2), X4, X4; \
	VPINSRD $3, (SI)(R12*1), X4, X4; \
	VCVTPH2PS X4, Y4; \
	VBROADCASTSS (DI), Y5; \
	VMULPS Y5, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VSHUFPS $0x88, X5, X4, X6; \
	VSHUFPS $0xdd, X5, X4, X7; \
	VMULPS X2, X6, X6; \
	VMULPS X3, X7, X7; \
	VSUBPS X7, X6, X6; \
	VADDPS X6, X14, X14; \
	ADDQ $144, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS X14, (DX); \
	VZEROUPPER; \
	RET

// K2_Q5K_ROWS: X6 = the fold (K2_GV_FOLD) of the q5_K block at SI's
// scaled-product and min-term lanes, formed as in dotQ5_KQ8_KAVX2, with
// the scale codes given in X1 (spread as for q4_K: gv2bbcast,
// gv2kminpat).
#define K2_Q5K_ROWS \
	VPERMQ $0x44, Y1, Y3; \
	VPSHUFB gv2kminpat<>(SB), Y3, Y4; \
	VPMADDWD 260(DI), Y4, Y4; \
	VMOVDQU 16(SI), Y13; \
	VPXOR Y6, Y6, Y6; \
	K2_Q5K_PAIR(0, VPSLLW, 4, VPSLLW, 3); \
	K2_Q5K_PAIR(1, VPSLLW, 2, VPSLLW, 1); \
	K2_Q5K_PAIR(2, VPSRLW, 0, VPSRLW, 1); \
	K2_Q5K_PAIR(3, VPSRLW, 2, VPSRLW, 3); \
	K2_GV_FOLD(Y4)

// K2_Q5K_FN2(LOOP, DONE, PF): the body of q5_Kx4AVX2, PF before each
// row's block, the scale codes of two rows unpacked at once (K2_KSCALES2) and kept on the stack (scl, 32 bytes)
// until their row's turn: Y12 parks folds, no register is left.
#define K2_Q5K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gv2knib<>(SB), Y15; \
	VPBROADCASTQ gv2k10<>(SB), Y14; \
	VXORPS X0, X0, X0; \
	VMOVUPS X0, acc-16(SP); \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_KSCALES2; \
	VMOVDQU Y12, scl-48(SP); \
	VMOVDQA X12, X1; \
	K2_Q5K_ROWS; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-32(SP), X1; \
	K2_Q5K_ROWS; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	PF; \
	K2_KSCALES2; \
	VMOVDQU Y12, scl-48(SP); \
	VMOVDQA X12, X1; \
	K2_Q5K_ROWS; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-32(SP), X1; \
	K2_Q5K_ROWS; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI; \
	K2_GV_COMBINE; \
	VCVTDQ2PS X4, X4; \
	VCVTDQ2PS X5, X5; \
	VMOVD (SI), X6; \
	VPINSRD $1, (SI)(R11*1), X6, X6; \
	VPINSRD $2, (SI)(R11*2), X6, X6; \
	VPINSRD $3, (SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, Y6; \
	VBROADCASTSS (DI), Y7; \
	VMULPS Y7, Y6, Y6; \
	VEXTRACTF128 $1, Y6, X7; \
	VSHUFPS $0x88, X7, X6, X8; \
	VSHUFPS $0xdd, X7, X6, X9; \
	VMULPS X4, X8, X8; \
	VMULPS X5, X9, X9; \
	VSUBPS X9, X8, X8; \
	VADDPS acc-16(SP), X8, X8; \
	VMOVUPS X8, acc-16(SP); \
	ADDQ $176, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS acc-16(SP), X0; \
	VMOVUPS X0, (DX); \
	VZEROUPPER; \
	RET

// K2_Q6K_FN(LOOP, DONE, PF): the body of q6_Kx4AVX2, PF before each
// row's block.
#define K2_Q6K_FN(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gv2knib<>(SB), Y15; \
	VPBROADCASTQ gv2k30<>(SB), Y14; \
	VXORPS X13, X13, X13; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	K2_GV_ROWS(PF; K2_Q6K_ROW); \
	K2_GV_COMBINE; \
	VPSLLD $5, X5, X5; \
	VPSUBD X5, X4, X4; \
	VCVTDQ2PS X4, X4; \
	MOVWLZX 208(SI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, 208(SI)(R11*1), X6, X6; \
	VPINSRW $2, 208(SI)(R11*2), X6, X6; \
	VPINSRW $3, 208(SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VBROADCASTSS (DI), X7; \
	VMULPS X7, X6, X6; \
	VMULPS X4, X6, X6; \
	VADDPS X6, X13, X13; \
	ADDQ $210, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	VMOVUPS X13, (DX); \
	VZEROUPPER; \
	RET

// K2_PFN2, K2_PFN3, K2_PFN4 prefetch the two, three or four lines of the
// current super-block in the row 4*ldx (R11) ahead: the same row of the
// next four-row step.
#define K2_PFN2 \
	PREFETCHT1 (SI)(R11*4); \
	PREFETCHT1 64(SI)(R11*4)
#define K2_PFN3 \
	K2_PFN2; \
	PREFETCHT1 128(SI)(R11*4)
#define K2_PFN4 \
	K2_PFN3; \
	PREFETCHT1 192(SI)(R11*4)

DATA gv2k03<>+0(SB)/8, $0x0303030303030303
GLOBL gv2k03<>(SB), RODATA|NOPTR, $8

DATA gv2k04<>+0(SB)/8, $0x0404040404040404
GLOBL gv2k04<>(SB), RODATA|NOPTR, $8

DATA gv2k32w<>+0(SB)/8, $0x0020002000200020
GLOBL gv2k32w<>(SB), RODATA|NOPTR, $8

// q2_K and q3_K had no four-row kernel in dotk_amd64.s; theirs follow the
// scheme above (integer lanes as in dotQ2_KQ8_KAVX2 / dotQ3_KQ8_KAVX2).

// K2_Q2K_CHUNK(H, G, SC): elements 128H+32G..+31, codes (qs >> 2G) & 3
// of Y7 (Y14 = 0x03).
#define K2_Q2K_CHUNK(H, G, SC) \
	VPSRLW $(2*G), Y7, Y10; \
	VPAND Y14, Y10, Y10; \
	K2_ACCUM(Y10, 4+128*H+32*G, gv2wpair<>+32*G(SB), SC)

// K2_Q2K_ROW(H): H = VPHADDD(scaled-product lanes, min-term lanes) of
// the q2_K block at SI. Clobbers Y1-Y4, Y6, Y7, Y10, Y11.
#define K2_Q2K_ROW(H) \
	VMOVDQU   (SI), X1; \
	VPAND     X15, X1, X2; \
	VPSRLW    $4, X1, X3; \
	VPAND     X15, X3, X3; \
	VPMOVZXBW X2, Y2; \
	VPMOVZXBW X3, Y3; \
	VPMADDWD  260(DI), Y3, Y3; \
	VPERMQ    $0x44, Y2, Y4; \
	VPERMQ    $0xee, Y2, Y2; \
	VPXOR     Y6, Y6, Y6; \
	VMOVDQU   16(SI), Y7; \
	K2_Q2K_CHUNK(0, 0, Y4); \
	K2_Q2K_CHUNK(0, 1, Y4); \
	K2_Q2K_CHUNK(0, 2, Y4); \
	K2_Q2K_CHUNK(0, 3, Y4); \
	VMOVDQU   48(SI), Y7; \
	K2_Q2K_CHUNK(1, 0, Y2); \
	K2_Q2K_CHUNK(1, 1, Y2); \
	K2_Q2K_CHUNK(1, 2, Y2); \
	K2_Q2K_CHUNK(1, 3, Y2); \
	VPHADDD   Y3, Y6, H

// func q2_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// Twin: the generic q2_K dot product per row.
TEXT ·q2_Kx4AVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R11
	MOVQ         y+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), DX
	LEAQ         (R11)(R11*2), R12
	VPBROADCASTQ gv2knib<>(SB), Y15
	VPBROADCASTQ gv2k03<>(SB), Y14
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          gv2q2kdone

gv2q2kloop:
	K2_PFN2
	K2_Q2K_ROW(Y0)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y5)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y8)
	ADDQ R11, SI
	K2_PFN2
	K2_Q2K_ROW(Y9)
	SUBQ R12, SI

	// X2 = the rows' scaled-product totals, X3 their min totals.
	VPHADDD      Y5, Y0, Y0
	VPHADDD      Y9, Y8, Y8
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VEXTRACTI128 $1, Y8, X1
	VPADDD       X1, X8, X8
	VSHUFPS      $0x88, X8, X0, X2
	VSHUFPS      $0xdd, X8, X0, X3
	VCVTDQ2PS    X2, X2
	VCVTDQ2PS    X3, X3

	// out[r] += (d_r*yd)*isum_r - (dmin_r*yd)*mins_r, as KFLOAT_MIN.
	VMOVD        80(SI), X4
	VPINSRD      $1, 80(SI)(R11*1), X4, X4
	VPINSRD      $2, 80(SI)(R11*2), X4, X4
	VPINSRD      $3, 80(SI)(R12*1), X4, X4
	VCVTPH2PS    X4, Y4
	VBROADCASTSS (DI), Y5
	VMULPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VSHUFPS      $0x88, X5, X4, X6
	VSHUFPS      $0xdd, X5, X4, X7
	VMULPS       X2, X6, X6
	VMULPS       X3, X7, X7
	VSUBPS       X7, X6, X6
	VADDPS       X6, X12, X12
	ADDQ         $84, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          gv2q2kloop

gv2q2kdone:
	VMOVUPS X12, (DX)
	VZEROUPPER
	RET

// K2_Q3K_CHUNK(H, G, HOP, HS, SC): elements 128H+32G..+31: low bits
// (qs >> 2G) & 3 from Y7, high bit 4H+G of the hmask bytes (Y13) moved to
// bit 2 by HOP $HS. Y14 = 0x03, Y8 = 0x04.
#define K2_Q3K_CHUNK(H, G, HOP, HS, SC) \
	VPSRLW $(2*G), Y7, Y10; \
	VPAND Y14, Y10, Y10; \
	HOP $HS, Y13, Y5; \
	VPAND Y8, Y5, Y5; \
	VPOR Y5, Y10, Y10; \
	K2_ACCUM(Y10, 4+128*H+32*G, gv2wpair<>+32*G(SB), SC)

// Scale unpacking of two q3_K rows at once, in vector registers: for the
// 12 packed bytes s0..s11 at 96 (loaded from 94 so that the 16-byte load
// stays inside the 110-byte block), result byte j is (s[j%8] >> 4*(j/8))
// & 15 | ((s[8 + j%4] >> 2*(j/4)) & 3) << 4, the scale code j as the
// scalar code of dotQ3_KQ8_KAVX2 forms it.
DATA gv2q3lo<>+0(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+8(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+16(SB)/8, $0x0908070605040302
DATA gv2q3lo<>+24(SB)/8, $0x0908070605040302
GLOBL gv2q3lo<>(SB), RODATA|NOPTR, $32

DATA gv2q3hi<>+0(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+8(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+16(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gv2q3hi<>+24(SB)/8, $0x0d0c0b0a0d0c0b0a
GLOBL gv2q3hi<>(SB), RODATA|NOPTR, $32

DATA gv2q3slo<>+0(SB)/8, $0
DATA gv2q3slo<>+8(SB)/8, $0x0000000400000004
DATA gv2q3slo<>+16(SB)/8, $0
DATA gv2q3slo<>+24(SB)/8, $0x0000000400000004
GLOBL gv2q3slo<>(SB), RODATA|NOPTR, $32

DATA gv2q3shi<>+0(SB)/8, $0x0000000200000000
DATA gv2q3shi<>+8(SB)/8, $0x0000000600000004
DATA gv2q3shi<>+16(SB)/8, $0x0000000200000000
DATA gv2q3shi<>+24(SB)/8, $0x0000000600000004
GLOBL gv2q3shi<>(SB), RODATA|NOPTR, $32

DATA gv2m0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gv2m0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gv2m0f<>(SB), RODATA|NOPTR, $32

DATA gv2m30<>+0(SB)/8, $0x3030303030303030
DATA gv2m30<>+8(SB)/8, $0x3030303030303030
DATA gv2m30<>+16(SB)/8, $0x3030303030303030
DATA gv2m30<>+24(SB)/8, $0x3030303030303030
GLOBL gv2m30<>(SB), RODATA|NOPTR, $32

// K2_Q3SCALES2: Y1 = the sixteen scale codes of the q3_K block at SI (low
// half) and of the one at SI + R11 (high half). Clobbers Y2.
#define K2_Q3SCALES2 \
	VMOVDQU     94(SI), X1; \
	VINSERTI128 $1, 94(SI)(R11*1), Y1, Y1; \
	VPSHUFB     gv2q3lo<>(SB), Y1, Y2; \
	VPSRLVD     gv2q3slo<>(SB), Y2, Y2; \
	VPAND       gv2m0f<>(SB), Y2, Y2; \
	VPSHUFB     gv2q3hi<>(SB), Y1, Y1; \
	VPSRLVD     gv2q3shi<>(SB), Y1, Y1; \
	VPSLLD      $4, Y1, Y1; \
	VPAND       gv2m30<>(SB), Y1, Y1; \
	VPOR        Y2, Y1, Y1

// K2_Q3K_ROWS: X6 = the fold (K2_GV_FOLD) of the q3_K block at SI's
// scaled-product and offset lanes, formed as in dotQ3_KQ8_KAVX2, with the
// scale codes given in X1.
#define K2_Q3K_ROWS \
	VPMOVZXBW X1, Y2; \
	VPSUBW    Y15, Y2, Y2; \
	VPMADDWD  260(DI), Y2, Y3; \
	VPERMQ    $0x44, Y2, Y4; \
	VPERMQ    $0xee, Y2, Y2; \
	VMOVDQU   (SI), Y13; \
	VPXOR     Y6, Y6, Y6; \
	VMOVDQU   32(SI), Y7; \
	K2_Q3K_CHUNK(0, 0, VPSLLW, 2, Y4); \
	K2_Q3K_CHUNK(0, 1, VPSLLW, 1, Y4); \
	K2_Q3K_CHUNK(0, 2, VPSRLW, 0, Y4); \
	K2_Q3K_CHUNK(0, 3, VPSRLW, 1, Y4); \
	VMOVDQU   64(SI), Y7; \
	K2_Q3K_CHUNK(1, 0, VPSRLW, 2, Y2); \
	K2_Q3K_CHUNK(1, 1, VPSRLW, 3, Y2); \
	K2_Q3K_CHUNK(1, 2, VPSRLW, 4, Y2); \
	K2_Q3K_CHUNK(1, 3, VPSRLW, 5, Y2); \
	K2_GV_FOLD(Y3)

// K2_Q3K_FN2(LOOP, DONE, PF): the body of q3_Kx4AVX2, PF before each
// row's block, with the scale codes of two rows
// unpacked at once (K2_Q3SCALES2) and kept on the stack (scl, 32 bytes)
// until their row's turn.
#define K2_Q3K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gv2k03<>(SB), Y14; \
	VPBROADCASTQ gv2k04<>(SB), Y8; \
	VPBROADCASTQ gv2k32w<>(SB), Y15; \
	VXORPS X9, X9, X9; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	K2_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	K2_Q3K_ROWS; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	K2_Q3K_ROWS; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	PF; \
	K2_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	K2_Q3K_ROWS; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	K2_Q3K_ROWS; \
	VINSERTI128 $1, X6, Y12, Y12; \
	SUBQ R12, SI; \
	K2_GV_COMBINE; \
	VPSLLD $2, X5, X5; \
	VPSUBD X5, X4, X4; \
	VCVTDQ2PS X4, X4; \
	MOVWLZX 108(SI), AX; \
	VMOVD AX, X6; \
	VPINSRW $1, 108(SI)(R11*1), X6, X6; \
	VPINSRW $2, 108(SI)(R11*2), X6, X6; \
	VPINSRW $3, 108(SI)(R12*1), X6, X6; \
	VCVTPH2PS X6, X6; \
	VBROADCASTSS (DI), X7; \
	VMULPS X7, X6, X6; \
	VMULPS X4, X6, X6; \
	VADDPS X6, X9, X9; \
	ADDQ $110, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE LOOP; \
DONE: \
	MOVQ out+32(FP), DX; \
	VMOVUPS X9, (DX); \
	VZEROUPPER; \
	RET

TEXT ·q3_Kx4AVX2(SB), NOSPLIT, $32-40
	K2_Q3K_FN2(gv2q3kloop, gv2q3kdone, K2_PFN2)

// func q4_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// The scale codes unpacked two rows at a time in vector registers
// (K2_KSCALES2) and next-step prefetch: equal to the dot product bit for
// bit.
TEXT ·q4_Kx4AVX2(SB), NOSPLIT, $0-40
	K2_Q4K_FN2(gv2q4kloop, gv2q4kdone, K2_PFN3)


// func q5_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// The scale codes unpacked two rows at a time and next-step prefetch:
// equal to the dot product bit for bit.
TEXT ·q5_Kx4AVX2(SB), NOSPLIT, $48-40
	K2_Q5K_FN2(gv2q5kloop, gv2q5kdone, K2_PFN3)

// func q6_Kx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// With next-step prefetch: equal to the dot product bit for bit.
TEXT ·q6_Kx4AVX2(SB), NOSPLIT, $0-40
	K2_Q6K_FN(gv2q6kloop, gv2q6kdone, K2_PFN4)

// func f16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// With next-step prefetch (twin: F16Twin): one line per row of the next four rows per
// run of 16 elements (32 bytes), so every line is asked for twice.
TEXT ·f16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2f16done

gv2f16loop:
	GV2_PFN
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   (SI), Y10
	VCVTPH2PS   16(SI), Y11
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y11, Y1
	VCVTPH2PS   (SI)(R8*1), Y12
	VCVTPH2PS   16(SI)(R8*1), Y13
	VFMADD231PS Y8, Y12, Y2
	VFMADD231PS Y9, Y13, Y3
	VCVTPH2PS   (SI)(R8*2), Y10
	VCVTPH2PS   16(SI)(R8*2), Y11
	VFMADD231PS Y8, Y10, Y4
	VFMADD231PS Y9, Y11, Y5
	VCVTPH2PS   (SI)(R9*1), Y12
	VCVTPH2PS   16(SI)(R9*1), Y13
	VFMADD231PS Y8, Y12, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNE         gv2f16loop

gv2f16done:
	VADDPS Y1, Y0, Y0
	GV2_HSUM8(Y0, X0, X1)
	VMOVSS X0, (DX)
	VADDPS Y3, Y2, Y2
	GV2_HSUM8(Y2, X2, X3)
	VMOVSS X2, 4(DX)
	VADDPS Y5, Y4, Y4
	GV2_HSUM8(Y4, X4, X5)
	VMOVSS X4, 8(DX)
	VADDPS Y7, Y6, Y6
	GV2_HSUM8(Y6, X6, X7)
	VMOVSS X6, 12(DX)
	VZEROUPPER
	RET

// GV2_FLOAT_STORE stores the four rows' sums of the float kernels: row r's
// two accumulators Y(2r), Y(2r+1) added lane by lane, then HSUM8.
#define GV2_FLOAT_STORE \
	VADDPS Y1, Y0, Y0; \
	GV2_HSUM8(Y0, X0, X1); \
	VMOVSS X0, (DX); \
	VADDPS Y3, Y2, Y2; \
	GV2_HSUM8(Y2, X2, X3); \
	VMOVSS X2, 4(DX); \
	VADDPS Y5, Y4, Y4; \
	GV2_HSUM8(Y4, X4, X5); \
	VMOVSS X4, 8(DX); \
	VADDPS Y7, Y6, Y6; \
	GV2_HSUM8(Y6, X6, X7); \
	VMOVSS X6, 12(DX)

// GV2_BF16ROW(LO, HI, A0, A1): the run of 16 bfloat16 values at LO (0-7)
// and HI (8-15) widened (zero-extended and shifted into the high half:
// exact) and multiplied into A0 and A1 with the activation run in Y8, Y9.
#define GV2_BF16ROW(LO, HI, A0, A1) \
	VPMOVZXWD   LO, Y10; \
	VPSLLD      $16, Y10, Y10; \
	VPMOVZXWD   HI, Y11; \
	VPSLLD      $16, Y11, Y11; \
	VFMADD231PS Y8, Y10, A0; \
	VFMADD231PS Y9, Y11, A1

// func f32x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 for float32 rows (runs of 16 elements, 64 bytes; twin:
// F32Twin). MUL_MAT used the dot product before.
TEXT ·f32x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2f32done

gv2f32loop:
	GV2_PFN
	VMOVUPS     (DI), Y8
	VMOVUPS     32(DI), Y9
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS 32(SI), Y9, Y1
	VFMADD231PS (SI)(R8*1), Y8, Y2
	VFMADD231PS 32(SI)(R8*1), Y9, Y3
	VFMADD231PS (SI)(R8*2), Y8, Y4
	VFMADD231PS 32(SI)(R8*2), Y9, Y5
	VFMADD231PS (SI)(R9*1), Y8, Y6
	VFMADD231PS 32(SI)(R9*1), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         gv2f32loop

gv2f32done:
	GV2_FLOAT_STORE
	VZEROUPPER
	RET

// func bf16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 for bfloat16 rows (twin: BF16Twin). MUL_MAT used the
// dot product before.
TEXT ·bf16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2bf16done

gv2bf16loop:
	GV2_PFN
	VPMOVZXWD (DI), Y8
	VPSLLD    $16, Y8, Y8
	VPMOVZXWD 16(DI), Y9
	VPSLLD    $16, Y9, Y9
	GV2_BF16ROW((SI), 16(SI), Y0, Y1)
	GV2_BF16ROW((SI)(R8*1), 16(SI)(R8*1), Y2, Y3)
	GV2_BF16ROW((SI)(R8*2), 16(SI)(R8*2), Y4, Y5)
	GV2_BF16ROW((SI)(R9*1), 16(SI)(R9*1), Y6, Y7)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNE       gv2bf16loop

gv2bf16done:
	GV2_FLOAT_STORE
	VZEROUPPER
	RET



// Third-generation q4_0 four-row kernel (sideQ4_0x4AVX2): two rows per
// vector. q4_0x4AVX2 spends about nine vector instructions per row
// and block plus some twenty for the block's shared work, and on Zen 3 it
// runs near the machine's issue width with neither the loads nor the
// multipliers saturated: the instruction count is the limit. Here the 16
// code bytes of rows A and B share one register ([A | B], one load and
// one VINSERTI128), so the nibble split (VPSRLW, two VPANDs), the two
// VPMADDUBSWs (low nibbles times y 0-15, high nibbles times y 16-31, each
// y half broadcast to both lanes), their VPADDW, the VPMADDWD to int32,
// the correction, the conversion and the FMA serve two rows at once:
// int32 lane l of row A (of B in the high half) is the exact sum of
// (q-8)*y over elements 4l..4l+3 and 16+4l..16+4l+3 (|sum| < 2^14: no
// saturation anywhere), added by FMA with d = d_x*d_y. [d_A x4 | d_B x4]
// comes from two broadcast loads out of halfTable indexed by the f16
// bits (MOVWLZX), one VINSERTF128 and a VMULPS by d_y: cheaper than a
// VCVTPH2PS of gathered or broadcast halves and the shuffles to spread
// them (both measured). What depends on the activation row alone comes
// prepared once per call (Q4_0Prep), 36 bytes per block at BX: the
// eight int32 lanes of 8*y to take out, then d_y. The loop takes two
// blocks a step and prefetches the next four rows once a step (36 bytes,
// so still every line). Each row's four lanes are added as (v0+v1) +
// (v2+v3) by VHADDPS. Twin: SideQ4_0Twin. (An eight-row form, sharing
// the activation block's loads over eight rows, measured only 2% faster
// and was left out.)

// GV3_Q4BLK(XO, YO, DO): the q4_0 block at XO(SI) of the four rows, with
// the q8_0 block at YO(DI) and its prepared block at DO(BX): Y0 += rows
// 0|1, Y1 += rows 2|3. Y14 = 0x0f, Y15 = 1 words, R14 = &halfTable.
// Clobbers AX, R11-R13, Y2-Y12.
#define GV3_Q4BLK(XO, YO, DO) \
	MOVWLZX        XO(SI), AX; \
	MOVWLZX        XO(SI)(R8*1), R11; \
	MOVWLZX        XO(SI)(R8*2), R12; \
	MOVWLZX        XO(SI)(R9*1), R13; \
	VBROADCASTI128 2+YO(DI), Y4; \
	VBROADCASTI128 18+YO(DI), Y5; \
	VMOVDQU        2+XO(SI), X6; \
	VINSERTI128    $1, 2+XO(SI)(R8*1), Y6, Y6; \
	VMOVDQU        2+XO(SI)(R8*2), X10; \
	VINSERTI128    $1, 2+XO(SI)(R9*1), Y10, Y10; \
	VPSRLW         $4, Y6, Y7; \
	VPSRLW         $4, Y10, Y11; \
	VPAND          Y14, Y6, Y6; \
	VPAND          Y14, Y10, Y10; \
	VPAND          Y14, Y7, Y7; \
	VPAND          Y14, Y11, Y11; \
	VPMADDUBSW     Y4, Y6, Y6; \
	VPMADDUBSW     Y4, Y10, Y10; \
	VPMADDUBSW     Y5, Y7, Y7; \
	VPMADDUBSW     Y5, Y11, Y11; \
	VPADDW         Y7, Y6, Y6; \
	VPADDW         Y11, Y10, Y10; \
	VPMADDWD       Y15, Y6, Y6; \
	VPMADDWD       Y15, Y10, Y10; \
	VBROADCASTSS   (R14)(AX*4), X8; \
	VBROADCASTSS   (R14)(R11*4), X2; \
	VINSERTF128    $1, X2, Y8, Y8; \
	VBROADCASTSS   (R14)(R12*4), X9; \
	VBROADCASTSS   (R14)(R13*4), X3; \
	VINSERTF128    $1, X3, Y9, Y9; \
	VBROADCASTSS   32+DO(BX), Y2; \
	VMULPS         Y2, Y8, Y8; \
	VMULPS         Y2, Y9, Y9; \
	VMOVDQU        DO(BX), Y12; \
	VPSUBD         Y12, Y6, Y6; \
	VPSUBD         Y12, Y10, Y10; \
	VCVTDQ2PS      Y6, Y6; \
	VCVTDQ2PS      Y10, Y10; \
	VFMADD231PS    Y8, Y6, Y0; \
	VFMADD231PS    Y9, Y10, Y1

// func sideQ4_0x4AVX2(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32)
//
// Twin: SideQ4_0Twin.
TEXT ·sideQ4_0x4AVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R8
	MOVQ         y+16(FP), DI
	MOVQ         side+24(FP), BX
	MOVQ         nb+32(FP), CX
	MOVQ         out+40(FP), DX
	LEAQ         (R8)(R8*2), R9
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ gv2nib<>(SB), Y14
	MOVQ         ·halfTable(SB), R14
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	MOVQ         CX, R10
	SHRQ         $1, R10
	JEQ          gv3q40tail

gv3q40loop:
	GV2_PFN
	GV3_Q4BLK(0, 0, 0)
	GV3_Q4BLK(18, 34, 36)
	ADDQ $36, SI
	ADDQ $68, DI
	ADDQ $72, BX
	DECQ R10
	JNE  gv3q40loop

gv3q40tail:
	TESTQ $1, CX
	JEQ   gv3q40done
	GV2_PFN
	GV3_Q4BLK(0, 0, 0)

gv3q40done:
	VEXTRACTF128 $1, Y0, X2
	VEXTRACTF128 $1, Y1, X3
	VHADDPS      X2, X0, X4
	VHADDPS      X3, X1, X5
	VHADDPS      X5, X4, X4
	VMOVUPS      X4, (DX)
	VZEROUPPER
	RET

