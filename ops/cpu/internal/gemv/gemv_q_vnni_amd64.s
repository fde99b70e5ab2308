//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The vnni tier's four-row kernels of q4_0, q5_0, q8_0, q4_1 and q5_1
// (gemv_q_amd64.s's, two rows per zmm register). The AVX2 kernels form
// each row's eight int32 lanes per block with VPMADDUBSW and VPMADDWD by
// ones (lane j: the four products of bytes 4j..4j+3, no word sum
// saturating: codes at most 31; q8_0 see KVQ_Q8PAIR), which is what
// VPDPBUSD from zero (or from the lanes of the activation offset,
// negated) gives; the rows' float32 steps are lane-wise (VCVTDQ2PS, one
// FMA by the row's d per block, the same d formed the same way), so two
// rows side by side in a zmm register (row A in lanes 0-7, row B in
// 8-15) take the same steps lane for lane, and the final HSUM8 per row
// is the AVX2 kernels'. So every out[r] equals the AVX2 kernel's bit for
// bit. AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

// gvqshift: dword shift counts 0, 4 per 128-bit lane (the low nibbles
// of a row's 16 code bytes, then the high ones).
DATA gvqshift<>+0(SB)/8, $0
DATA gvqshift<>+8(SB)/8, $0
DATA gvqshift<>+16(SB)/8, $0x0000000400000004
DATA gvqshift<>+24(SB)/8, $0x0000000400000004
DATA gvqshift<>+32(SB)/8, $0
DATA gvqshift<>+40(SB)/8, $0
DATA gvqshift<>+48(SB)/8, $0x0000000400000004
DATA gvqshift<>+56(SB)/8, $0x0000000400000004
GLOBL gvqshift<>(SB), RODATA|NOPTR, $64

DATA gvqnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gvqnib<>(SB), RODATA|NOPTR, $8

DATA gvq10<>+0(SB)/8, $0x1010101010101010
GLOBL gvq10<>(SB), RODATA|NOPTR, $8

DATA gvq08<>+0(SB)/8, $0x0808080808080808
GLOBL gvq08<>(SB), RODATA|NOPTR, $8

// gvqqhshuf: gemv_q_amd64.s's gv2qhshuf in both halves (byte j of each
// 256-bit half holds byte j/8 of a broadcast uint32); gvqbit: byte j is
// 1 << (j%8).
DATA gvqqhshuf<>+0(SB)/8, $0x0000000000000000
DATA gvqqhshuf<>+8(SB)/8, $0x0101010101010101
DATA gvqqhshuf<>+16(SB)/8, $0x0202020202020202
DATA gvqqhshuf<>+24(SB)/8, $0x0303030303030303
DATA gvqqhshuf<>+32(SB)/8, $0x0000000000000000
DATA gvqqhshuf<>+40(SB)/8, $0x0101010101010101
DATA gvqqhshuf<>+48(SB)/8, $0x0202020202020202
DATA gvqqhshuf<>+56(SB)/8, $0x0303030303030303
GLOBL gvqqhshuf<>(SB), RODATA|NOPTR, $64

DATA gvqbit<>+0(SB)/8, $0x8040201008040201
GLOBL gvqbit<>(SB), RODATA|NOPTR, $8

// gvqdidx: VPERMPS indexes: lanes 0-7 take dword 0, lanes 8-15 dword 2
// (rows 0 and 1 of GV2_SCALES1's products); gvqdidx+64: dwords 4 and 6
// (rows 2 and 3).
DATA gvqdidx<>+0(SB)/8, $0
DATA gvqdidx<>+8(SB)/8, $0
DATA gvqdidx<>+16(SB)/8, $0
DATA gvqdidx<>+24(SB)/8, $0
DATA gvqdidx<>+32(SB)/8, $0x0000000200000002
DATA gvqdidx<>+40(SB)/8, $0x0000000200000002
DATA gvqdidx<>+48(SB)/8, $0x0000000200000002
DATA gvqdidx<>+56(SB)/8, $0x0000000200000002
DATA gvqdidx<>+64(SB)/8, $0x0000000400000004
DATA gvqdidx<>+72(SB)/8, $0x0000000400000004
DATA gvqdidx<>+80(SB)/8, $0x0000000400000004
DATA gvqdidx<>+88(SB)/8, $0x0000000400000004
DATA gvqdidx<>+96(SB)/8, $0x0000000600000006
DATA gvqdidx<>+104(SB)/8, $0x0000000600000006
DATA gvqdidx<>+112(SB)/8, $0x0000000600000006
DATA gvqdidx<>+120(SB)/8, $0x0000000600000006
GLOBL gvqdidx<>(SB), RODATA|NOPTR, $128

// KVQ_CODES(QA, QB, Z): Z = the 16 code bytes at QA as unsigned nibbles
// (elements 0-15 from the low nibbles, 16-31 from the high ones) in lanes
// 0-7, those at QB in lanes 8-15. K1 = 0xff00, Z11 = gvqshift, Z14 =
// 0x0f bytes.
#define KVQ_CODES(QA, QB, Z) \
	VBROADCASTI32X4 QA, Z; \
	VBROADCASTI32X4 QB, K1, Z; \
	VPSRLVD         Z11, Z, Z; \
	VPANDD          Z14, Z, Z

// KVQ_HIGH(QHA, QHB, Z): Z += 0x10 in each byte whose fifth bit (of the
// uint32 at QHA for lanes 0-7, QHB for 8-15) is set. Z13 = gvqqhshuf,
// Z10 = gvqbit bytes, Z9 = 0x10 bytes. Clobbers Z8, K2.
#define KVQ_HIGH(QHA, QHB, Z) \
	VPBROADCASTD QHA, Z8; \
	VPBROADCASTD QHB, K1, Z8; \
	VPSHUFB      Z13, Z8, Z8; \
	VPTESTMB     Z10, Z8, K2; \
	VPADDB       Z9, Z, K2, Z

// KVQ_FMA(Z, ACC, D): ACC += float32(VPDPBUSD lanes of the codes Z with
// the activation codes in Z4, from Z12) * D. Clobbers Z7.
#define KVQ_FMA(Z, ACC, D) \
	VMOVDQA64   Z12, Z7; \
	VPDPBUSD    Z4, Z, Z7; \
	VCVTDQ2PS   Z7, Z7; \
	VFMADD231PS D, Z7, ACC

// KVQ_STORE: GV2_STORE's HSUM8 and stores of rows 0-3 from Z0 (rows 0,
// 1) and Z2 (rows 2, 3).
#define KVQ_STORE \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VEXTRACTF64X4 $1, Z2, Y3; \
	GV2_HSUM8(Y0, X0, X10); \
	GV2_HSUM8(Y1, X1, X10); \
	GV2_HSUM8(Y2, X2, X10); \
	GV2_HSUM8(Y3, X3, X10); \
	VMOVSS X0, (DX); \
	VMOVSS X1, 4(DX); \
	VMOVSS X2, 8(DX); \
	VMOVSS X3, 12(DX)

// KVQ_SETUP: the constants (K1, Z11, Z14, Z9, Z10, Z13) and zero
// accumulators Z0, Z2; R9 = 3*ldx.
#define KVQ_SETUP \
	LEAQ            (R8)(R8*2), R9; \
	MOVL            $0xff00, AX; \
	KMOVW           AX, K1; \
	VMOVDQU64       gvqshift<>(SB), Z11; \
	VPBROADCASTQ    gvqnib<>(SB), Z14; \
	VPBROADCASTQ    gvq10<>(SB), Z9; \
	VPBROADCASTQ    gvqbit<>(SB), Z10; \
	VMOVDQU64       gvqqhshuf<>(SB), Z13; \
	VPXORD          Z0, Z0, Z0; \
	VPXORD          Z2, Z2, Z2

// KVQ_DXY(XA, XB, Z): Z = d of the row whose f16 bits are in XA in
// lanes 0-7, of XB's in 8-15: halfTable[bits] * d_y (Z5), in
// GV2_Q8ROWT's order. R14 = &halfTable.
#define KVQ_DXY(XA, XB, Z) \
	VBROADCASTSS (R14)(XA*4), Z; \
	VBROADCASTSS (R14)(XB*4), K1, Z; \
	VMULPS       Z5, Z, Z

// KVQ_SCALED(LOOP, DONE, BYTES, QSOFF, HIGH, OFFSET): the body of a
// q8_0-activation kernel (q5_0 with HIGH = KVQ_HIGH, OFFSET = gvq10; q4_0
// with HIGH empty, OFFSET = gvq08): Z12 = -(the lanes of OFFSET*y), then
// each pair of rows' VPDPBUSD lanes from Z12, scaled by d formed as in
// GV2_Q8ROWT (q5_0) and GV2_SCALES (q4_0: the same float32 widening of
// d_x, times d_y).
#define KVQ_SCALED(LOOP, DONE, BYTES, QSOFF, HIGH, OFFSET) \
	MOVQ         x+0(FP), SI; \
	MOVQ         ldx+8(FP), R8; \
	MOVQ         y+16(FP), DI; \
	MOVQ         dy+24(FP), BX; \
	MOVQ         nb+32(FP), CX; \
	MOVQ         out+40(FP), DX; \
	KVQ_SETUP; \
	VPBROADCASTQ OFFSET(SB), Z15; \
	MOVQ         ·halfTable(SB), R14; \
	TESTQ        CX, CX; \
	JEQ          DONE; \
LOOP: \
	GV2_PFN; \
	MOVWLZX         (SI), AX; \
	MOVWLZX         (SI)(R8*1), R10; \
	MOVWLZX         (SI)(R8*2), R11; \
	MOVWLZX         (SI)(R9*1), R12; \
	VBROADCASTSS    (BX), Z5; \
	VBROADCASTI64X4 2(DI), Z4; \
	VPXORD          Z12, Z12, Z12; \
	VPXORD          Z7, Z7, Z7; \
	VPDPBUSD        Z4, Z15, Z7; \
	VPSUBD          Z7, Z12, Z12; \
	KVQ_DXY(AX, R10, Z20); \
	KVQ_DXY(R11, R12, Z21); \
	KVQ_CODES(QSOFF(SI), QSOFF(SI)(R8*1), Z16); \
	HIGH(2(SI), 2(SI)(R8*1), Z16); \
	KVQ_CODES(QSOFF(SI)(R8*2), QSOFF(SI)(R9*1), Z17); \
	HIGH(2(SI)(R8*2), 2(SI)(R9*1), Z17); \
	KVQ_FMA(Z16, Z0, Z20); \
	KVQ_FMA(Z17, Z2, Z21); \
	ADDQ         $BYTES, SI; \
	ADDQ         $34, DI; \
	ADDQ         $4, BX; \
	DECQ         CX; \
	JNE          LOOP; \
DONE: \
	KVQ_STORE; \
	VZEROUPPER; \
	RET

// KVQ_NOHIGH is KVQ_HIGH's place holder for the 4-bit formats.
#define KVQ_NOHIGH(A, B, Z)

// KVQ_Q8PAIR(QA, QB, ACC, D): q8_0 rows QA (lanes 0-7) and QB (8-15):
// GV2_Q8ROWT's |x| times y*sign(x) without VPSIGNB (no zmm form): |x| by
// VPABSB (-128 stays 0x80, 128 unsigned, as VPSIGNB leaves it), y
// negated by a VPSUBB from zero under the mask of negative codes (-128
// wraps to itself as VPSIGNB's does; where x = 0 the product is 0
// either way), summed by VPDPBUSD from zero: the AVX2 lanes exactly
// (VPMADDUBSW's pairs reach -32768 at most, never saturating); then ACC
// += lanes * D. Z4 = y in both halves, Z12 = 0. Clobbers Z6-Z8, K2.
#define KVQ_Q8PAIR(QA, QB, ACC, D) \
	VMOVDQU64     QA, Y6; \
	VINSERTI64X4  $1, QB, Z6, Z6; \
	VPMOVB2M      Z6, K2; \
	VPABSB        Z6, Z6; \
	VMOVDQA64     Z4, Z8; \
	VPSUBB        Z4, Z12, K2, Z8; \
	VPXORD        Z7, Z7, Z7; \
	VPDPBUSD      Z8, Z6, Z7; \
	VCVTDQ2PS     Z7, Z7; \
	VFMADD231PS   D, Z7, ACC

// KVQ_SCALES1: GV2_SCALES1 with the products kept in registers: Z20 =
// d_x*d_y of rows 0 (lanes 0-7) and 1 (8-15), Z21 of rows 2 and 3, X5[r]
// += m_x*s_y. Z22, Z23 = gvqdidx. Clobbers AX, R10-R12, X6, X7.
#define KVQ_SCALES1 \
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
	VPERMPS      Z6, Z22, Z20; \
	VPERMPS      Z6, Z23, Z21; \
	VEXTRACTF128 $1, Y6, X7; \
	VSHUFPS      $0xdd, X7, X6, X7; \
	VADDPS       X7, X5, X5

// KVQ_Q81(LOOP, DONE, BYTES, QSOFF, HIGH): the body of the q8_1
// kernels (q4_1 with HIGH empty, q5_1 with KVQ_HIGH): no offset (Z12 =
// 0), the min term in X5 as GV2_SCALES1 sums it, GV2_STORE1's sums.
#define KVQ_Q81(LOOP, DONE, BYTES, QSOFF, HIGH) \
	MOVQ      x+0(FP), SI; \
	MOVQ      ldx+8(FP), R8; \
	MOVQ      y+16(FP), DI; \
	MOVQ      nb+24(FP), CX; \
	MOVQ      out+32(FP), DX; \
	KVQ_SETUP; \
	VPXORD    Z12, Z12, Z12; \
	VXORPS    X5, X5, X5; \
	VMOVDQU64 gvqdidx<>+0(SB), Z22; \
	VMOVDQU64 gvqdidx<>+64(SB), Z23; \
	TESTQ     CX, CX; \
	JEQ       DONE; \
LOOP: \
	GV2_PFN; \
	KVQ_SCALES1; \
	VBROADCASTI64X4 4(DI), Z4; \
	KVQ_CODES(QSOFF(SI), QSOFF(SI)(R8*1), Z16); \
	HIGH(4(SI), 4(SI)(R8*1), Z16); \
	KVQ_CODES(QSOFF(SI)(R8*2), QSOFF(SI)(R9*1), Z17); \
	HIGH(4(SI)(R8*2), 4(SI)(R9*1), Z17); \
	KVQ_FMA(Z16, Z0, Z20); \
	KVQ_FMA(Z17, Z2, Z21); \
	ADDQ      $BYTES, SI; \
	ADDQ      $36, DI; \
	DECQ      CX; \
	JNE       LOOP; \
DONE: \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VEXTRACTF64X4 $1, Z2, Y3; \
	GV2_HSUM8(Y0, X0, X6); \
	GV2_HSUM8(Y1, X1, X6); \
	GV2_HSUM8(Y2, X2, X6); \
	GV2_HSUM8(Y3, X3, X6); \
	VINSERTPS $0x10, X1, X0, X0; \
	VINSERTPS $0x20, X2, X0, X0; \
	VINSERTPS $0x30, X3, X0, X0; \
	VADDPS    X5, X0, X0; \
	VMOVUPS   X0, (DX); \
	VZEROUPPER; \
	RET

// KVQ_Q80: the body of q8_0x4VNNI (d formed as GV2_Q8ROWT does).
#define KVQ_Q80 \
	MOVQ         x+0(FP), SI; \
	MOVQ         ldx+8(FP), R8; \
	MOVQ         y+16(FP), DI; \
	MOVQ         dy+24(FP), BX; \
	MOVQ         nb+32(FP), CX; \
	MOVQ         out+40(FP), DX; \
	KVQ_SETUP; \
	VPXORD       Z12, Z12, Z12; \
	MOVQ         ·halfTable(SB), R14; \
	TESTQ        CX, CX; \
	JEQ          gvq80done; \
gvq80loop: \
	GV2_PFN; \
	MOVWLZX         (SI), AX; \
	MOVWLZX         (SI)(R8*1), R10; \
	MOVWLZX         (SI)(R8*2), R11; \
	MOVWLZX         (SI)(R9*1), R12; \
	VBROADCASTSS    (BX), Z5; \
	VBROADCASTI64X4 2(DI), Z4; \
	KVQ_DXY(AX, R10, Z20); \
	KVQ_DXY(R11, R12, Z21); \
	KVQ_Q8PAIR(2(SI), 2(SI)(R8*1), Z0, Z20); \
	KVQ_Q8PAIR(2(SI)(R8*2), 2(SI)(R9*1), Z2, Z21); \
	ADDQ         $34, SI; \
	ADDQ         $34, DI; \
	ADDQ         $4, BX; \
	DECQ         CX; \
	JNE          gvq80loop; \
gvq80done: \
	KVQ_STORE; \
	VZEROUPPER; \
	RET

// func q5_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// q5_0x4AVX2 two rows a zmm register with VPDPBUSD (twin: Q5_0Twin).
TEXT ·q5_0x4VNNI(SB), NOSPLIT, $0-48
	KVQ_SCALED(gvq50loop, gvq50done, 22, 6, KVQ_HIGH, gvq10<>)

// func q4_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// q4_0x4AVX2 two rows a zmm register with VPDPBUSD (twin: Q4_0Twin).
TEXT ·q4_0x4VNNI(SB), NOSPLIT, $0-48
	KVQ_SCALED(gvq40loop, gvq40done, 18, 2, KVQ_NOHIGH, gvq08<>)

// func q4_1x4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q4_1x4AVX2 two rows a zmm register with VPDPBUSD (twin: Q4_1Twin).
TEXT ·q4_1x4VNNI(SB), NOSPLIT, $0-40
	KVQ_Q81(gvq41loop, gvq41done, 20, 4, KVQ_NOHIGH)

// func q5_1x4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q5_1x4AVX2 two rows a zmm register with VPDPBUSD (twin: Q5_1Twin).
TEXT ·q5_1x4VNNI(SB), NOSPLIT, $0-40
	KVQ_Q81(gvq51loop, gvq51done, 24, 8, KVQ_HIGH)

// func q8_0x4VNNI(x *byte, ldx int, y *byte, dy *float32, nb int, out *[4]float32)
//
// q8_0x4AVX2 two rows a zmm register with VPDPBUSD (twin: Q8_0Twin).
TEXT ·q8_0x4VNNI(SB), NOSPLIT, $0-48
	KVQ_Q80
