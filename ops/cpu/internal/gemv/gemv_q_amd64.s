//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// Four-row kernels of the 32-element block formats (q4_0, q8_0, q5_0,
// q4_1, q5_1) for MUL_MAT with one to three activation rows (see
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
// gv2notbit's byte j is ^(1 << (j%8)) (as dot_q_amd64.s's QHBITS).
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

