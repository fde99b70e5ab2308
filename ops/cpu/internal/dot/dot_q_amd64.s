//go:build amd64 && !purego

#include "textflag.h"
#include "dot_amd64.h"

// AVX2+FMA dot products of the 32-element block formats, and their
// register tiles.
// Each function has a pure-Go twin in twin.go that performs the same
// float32 operations in the same order (lane by lane), so that tests can
// compare the two bit for bit. Register conventions: SI walks x, DI walks
// y, CX counts what is left.

// Constants for the block formats.
DATA nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib<>(SB), RODATA|NOPTR, $8

DATA eight<>+0(SB)/8, $0x0808080808080808
GLOBL eight<>(SB), RODATA|NOPTR, $8

DATA highnib<>+0(SB)/8, $0xf0f0f0f0f0f0f0f0
GLOBL highnib<>(SB), RODATA|NOPTR, $8

DATA bit4<>+0(SB)/8, $0x1010101010101010
GLOBL bit4<>(SB), RODATA|NOPTR, $8

// notbit: byte j is ^(1 << (j%8)).
DATA notbit<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL notbit<>(SB), RODATA|NOPTR, $8

// qhshuf: spreads a broadcast uint32 so that byte j holds its byte j/8.
DATA qhshuf<>+0(SB)/8, $0x0000000000000000
DATA qhshuf<>+8(SB)/8, $0x0101010101010101
DATA qhshuf<>+16(SB)/8, $0x0202020202020202
DATA qhshuf<>+24(SB)/8, $0x0303030303030303
GLOBL qhshuf<>(SB), RODATA|NOPTR, $32

// Block bodies of the 32-element formats. Each leaves the eight int32
// lane sums of one block's products, converted to float32, in Y4 (lane l
// holds elements 4l..4l+3), and ACC += Y4 * (d_x*d_y).

// SIGNED_DOT: Y2 holds 32 signed weight codes, Y4 32 signed activation
// codes; Y4 becomes the int32 lane sums as float32. |x| times sign(x)*y
// puts the products in VPMADDUBSW's unsigned-by-signed form.
#define SIGNED_DOT \
	VPSIGNB Y2, Y2, Y3; \
	VPSIGNB Y2, Y4, Y4; \
	VPMADDUBSW Y4, Y3, Y4; \
	VPMADDWD Y15, Y4, Y4; \
	VCVTDQ2PS Y4, Y4

// SCALE_F16(XO, YO, ACC): ACC += Y4 * (f16 at XO(SI) * f16 at YO(DI)).
#define SCALE_F16(XO, YO, ACC) \
	VPBROADCASTW XO(SI), X5; \
	VPBROADCASTW YO(DI), X6; \
	VCVTPH2PS X5, Y5; \
	VCVTPH2PS X6, Y6; \
	VMULPS Y6, Y5, Y5; \
	VFMADD231PS Y5, Y4, ACC

// NIBBLES(OFF): Y2 = the 32 4-bit codes of the 16 bytes at OFF(SI),
// elements 0..15 from the low nibbles, 16..31 from the high ones.
#define NIBBLES(OFF) \
	VMOVDQU OFF(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y14, Y2, Y2

// QHBITS(OFF): Y3 byte j = 0xff when bit j of the uint32 at OFF(SI) is
// set, else 0.
#define QHBITS(OFF) \
	VPBROADCASTD OFF(SI), Y3; \
	VPSHUFB Y13, Y3, Y3; \
	VPOR Y12, Y3, Y3; \
	VPCMPEQB Y11, Y3, Y3

// MINTERM(XO, YO, ACC): ACC += Y4 * (d_x*d_y) and X9 += m_x*s_y, with
// (d, m) the two f16 at XO(SI) and (d, s) those at YO(DI).
#define MINTERM(XO, YO, ACC) \
	VMOVD XO(SI), X5; \
	VMOVD YO(DI), X6; \
	VCVTPH2PS X5, X5; \
	VCVTPH2PS X6, X6; \
	VMULPS X6, X5, X5; \
	VBROADCASTSS X5, Y6; \
	VFMADD231PS Y6, Y4, ACC; \
	VMOVSHDUP X5, X7; \
	VADDSS X7, X9, X9

#define Q8_0_BLOCK(XO, YO, ACC) \
	VMOVDQU 2+XO(SI), Y2; \
	VMOVDQU 2+YO(DI), Y4; \
	SIGNED_DOT; \
	SCALE_F16(XO, YO, ACC)

#define Q4_0_BLOCK(XO, YO, ACC) \
	NIBBLES(2+XO); \
	VPSUBB Y13, Y2, Y2; \
	VMOVDQU 2+YO(DI), Y4; \
	SIGNED_DOT; \
	SCALE_F16(XO, YO, ACC)

#define Q5_0_BLOCK(XO, YO, ACC) \
	NIBBLES(6+XO); \
	QHBITS(2+XO); \
	VPANDN Y10, Y3, Y3; \
	VPOR Y3, Y2, Y2; \
	VMOVDQU 2+YO(DI), Y4; \
	SIGNED_DOT; \
	SCALE_F16(XO, YO, ACC)

#define Q4_1_BLOCK(XO, YO, ACC) \
	NIBBLES(4+XO); \
	VPMADDUBSW 4+YO(DI), Y2, Y4; \
	VPMADDWD Y15, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	MINTERM(XO, YO, ACC)

#define Q5_1_BLOCK(XO, YO, ACC) \
	NIBBLES(8+XO); \
	QHBITS(4+XO); \
	VPAND Y10, Y3, Y3; \
	VPOR Y3, Y2, Y2; \
	VPMADDUBSW 4+YO(DI), Y2, Y4; \
	VPMADDWD Y15, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	MINTERM(XO, YO, ACC)

// BLOCK_LOOP runs BLOCK over CX blocks of XS and YS bytes, two per
// iteration into Y0 and Y1 (block i into Y0 when i is even), and leaves
// the eight lanes of Y0+Y1 summed in X0.
#define BLOCK_LOOP(BLOCK, XS, YS, L2, L1, LD) \
	CMPQ CX, $2; \
	JLT L1 \
L2: \
	BLOCK(0, 0, Y0); \
	BLOCK(XS, YS, Y1); \
	ADDQ $(2*XS), SI; \
	ADDQ $(2*YS), DI; \
	SUBQ $2, CX; \
	CMPQ CX, $2; \
	JGE L2 \
L1: \
	TESTQ CX, CX; \
	JEQ LD; \
	BLOCK(0, 0, Y0) \
LD: \
	VADDPS Y1, Y0, Y0; \
	HSUM8(Y0, X0, X1)

// SETUP_BLOCKS loads the constants every block format
// uses: Y15 = int16 ones, Y14 = 0x0f bytes; zeroes Y0, Y1 and X9.
#define SETUP_BLOCKS \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW $15, Y15, Y15; \
	VPBROADCASTQ nib<>(SB), Y14; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS X9, X9, X9

// SETUP_QH loads the constants of the fifth-bit expansion: Y13 = qhshuf,
// Y12 = notbit, Y11 = all ones.
#define SETUP_QH \
	VMOVDQU qhshuf<>(SB), Y13; \
	VPBROADCASTQ notbit<>(SB), Y12; \
	VPCMPEQB Y11, Y11, Y11

// Packed q8 activation groups: four activation rows interleaved block by
// block, each block as the four scales in float32 (16 bytes) then the four
// rows' 32 codes (128 bytes): 144 bytes per block.

// QUADCOL(OFF, P): P = the int32 lane sums of the weight codes (|x| in
// Y3, signs in Y2) times the 32 activation codes at OFF(DI).
#define QUADCOL(OFF, P) \
	VMOVDQU OFF(DI), P; \
	VPSIGNB Y2, P, P; \
	VPMADDUBSW P, Y3, P; \
	VPMADDWD Y15, P, P

// QUADSCALE: Y0 += (lane sums of the four columns, reduced to lanes c and
// c+4 for column c) * (d_x * d_y[c]), d_x the f16 at (SI).
#define QUADSCALE \
	VPHADDD Y5, Y4, Y4; \
	VPHADDD Y7, Y6, Y6; \
	VPHADDD Y6, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VBROADCASTF128 (DI), Y8; \
	VPBROADCASTW (SI), X9; \
	VCVTPH2PS X9, Y9; \
	VMULPS Y9, Y8, Y8; \
	VFMADD231PS Y8, Y4, Y0

// QUADSTORE stores the four column sums of Y0 (lanes c and c+4) at (DX).
#define QUADSTORE \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVUPS X0, (DX)

// func dotQ8_0Q8_0AVX2(x, y *byte, nb int) float32
TEXT ·dotQ8_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	SETUP_BLOCKS
	BLOCK_LOOP(Q8_0_BLOCK, 34, 34, q80two, q80one, q80done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_0Q8_0AVX2(x, y *byte, nb int) float32
TEXT ·dotQ4_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	SETUP_BLOCKS
	VPBROADCASTQ eight<>(SB), Y13
	BLOCK_LOOP(Q4_0_BLOCK, 18, 34, q40two, q40one, q40done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_0Q8_0AVX2(x, y *byte, nb int) float32
TEXT ·dotQ5_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	SETUP_BLOCKS
	SETUP_QH
	VPBROADCASTQ highnib<>(SB), Y10
	BLOCK_LOOP(Q5_0_BLOCK, 22, 34, q50two, q50one, q50done)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_1Q8_1AVX2(x, y *byte, nb int) float32
TEXT ·dotQ4_1Q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	SETUP_BLOCKS
	BLOCK_LOOP(Q4_1_BLOCK, 20, 36, q41two, q41one, q41done)
	VADDSS X9, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_1Q8_1AVX2(x, y *byte, nb int) float32
TEXT ·dotQ5_1Q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	SETUP_BLOCKS
	SETUP_QH
	VPBROADCASTQ bit4<>(SB), Y10
	BLOCK_LOOP(Q5_1_BLOCK, 24, 36, q51two, q51one, q51done)
	VADDSS X9, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Register-tiled kernels for MUL_MAT with several activation rows.

// func gemmQ4_0x4AVX2(x, y *byte, nb int, out *[4]float32)
//
// out[c] = dot of the q4_0 row x with column c of the packed group y.
TEXT ·gemmQ4_0x4AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         out+24(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ nib<>(SB), Y14
	VPBROADCASTQ eight<>(SB), Y13
	VXORPS       Y0, Y0, Y0
	TESTQ        CX, CX
	JEQ          g40done

g40loop:
	NIBBLES(2)
	VPSUBB  Y13, Y2, Y2
	VPSIGNB Y2, Y2, Y3
	QUADCOL(16, Y4)
	QUADCOL(48, Y5)
	QUADCOL(80, Y6)
	QUADCOL(112, Y7)
	QUADSCALE
	ADDQ    $18, SI
	ADDQ    $144, DI
	DECQ    CX
	JNE     g40loop

g40done:
	QUADSTORE
	VZEROUPPER
	RET

// func gemmQ5_0x4AVX2(x, y *byte, nb int, out *[4]float32)
//
// out[c] = dot of the q5_0 row x with column c of the packed group y
// (twin: quadQ5_0Twin).
TEXT ·gemmQ5_0x4AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         out+24(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ nib<>(SB), Y14
	SETUP_QH
	VPBROADCASTQ highnib<>(SB), Y10
	VXORPS       Y0, Y0, Y0
	TESTQ        CX, CX
	JEQ          g50done

g50loop:
	NIBBLES(6)
	QHBITS(2)
	VPANDN  Y10, Y3, Y3
	VPOR    Y3, Y2, Y2
	VPSIGNB Y2, Y2, Y3
	QUADCOL(16, Y4)
	QUADCOL(48, Y5)
	QUADCOL(80, Y6)
	QUADCOL(112, Y7)
	QUADSCALE
	ADDQ    $22, SI
	ADDQ    $144, DI
	DECQ    CX
	JNE     g50loop

g50done:
	QUADSTORE
	VZEROUPPER
	RET

// Tiled kernels of the q4_1 and q5_1 weights against packed q8_1 groups:
// per block the four d_y as float32 (16 bytes), the four s_y (16 bytes),
// then the four rows' 32 codes (128 bytes), 160 bytes in all. Y2 holds
// the unsigned weight codes; Y0 accumulates the code products as
// QUADSCALE, X11 (q4_1) or X1 (q5_1) the min term m_x*s_y[c] (product,
// then sum).

// QUADUCOL(OFF, P): P = the int32 lane sums of the unsigned weight codes
// in Y2 times the 32 activation codes at OFF(DI) (exact).
#define QUADUCOL(OFF, P) \
	VPMADDUBSW OFF(DI), Y2, P; \
	VPMADDWD Y15, P, P

// QUADMIN(MOFF, ACC): ACC += m_x * s_y[c], m_x the f16 at MOFF(SI).
// Clobbers X10.
#define QUADMIN(MOFF, ACC) \
	VPBROADCASTW MOFF(SI), X10; \
	VCVTPH2PS X10, X10; \
	VMULPS 16(DI), X10, X10; \
	VADDPS X10, ACC, ACC

// QUAD1STORE(ACC) stores the four column sums (lanes c and c+4 of Y0,
// then ACC added) at (DX).
#define QUAD1STORE(ACC) \
	VEXTRACTF128 $1, Y0, X10; \
	VADDPS X10, X0, X0; \
	VADDPS ACC, X0, X0; \
	VMOVUPS X0, (DX)

// func gemmQ4_1x4AVX2(x, y *byte, nb int, out *[4]float32)
//
// out[c] = dot of the q4_1 row x with column c of the packed q8_1 group
// y (twin: quadQ4_1Twin).
TEXT ·gemmQ4_1x4AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         out+24(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ nib<>(SB), Y14
	VXORPS       Y0, Y0, Y0
	VXORPS       X11, X11, X11
	TESTQ        CX, CX
	JEQ          g41done

g41loop:
	NIBBLES(4)
	QUADUCOL(32, Y4)
	QUADUCOL(64, Y5)
	QUADUCOL(96, Y6)
	QUADUCOL(128, Y7)
	QUADSCALE
	QUADMIN(2, X11)
	ADDQ $20, SI
	ADDQ $160, DI
	DECQ CX
	JNE  g41loop

g41done:
	QUAD1STORE(X11)
	VZEROUPPER
	RET

// func gemmQ5_1x4AVX2(x, y *byte, nb int, out *[4]float32)
//
// gemmQ4_1x4AVX2 for q5_1 weights (twin: quadQ5_1Twin).
TEXT ·gemmQ5_1x4AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         out+24(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ nib<>(SB), Y14
	SETUP_QH
	VXORPS       Y0, Y0, Y0
	VXORPS       X1, X1, X1
	TESTQ        CX, CX
	JEQ          g51done

g51loop:
	NIBBLES(8)
	QHBITS(4)
	VPBROADCASTQ bit4<>(SB), Y10
	VPAND        Y10, Y3, Y3
	VPOR         Y3, Y2, Y2
	QUADUCOL(32, Y4)
	QUADUCOL(64, Y5)
	QUADUCOL(96, Y6)
	QUADUCOL(128, Y7)
	QUADSCALE
	QUADMIN(2, X1)
	ADDQ         $24, SI
	ADDQ         $160, DI
	DECQ         CX
	JNE          g51loop

g51done:
	QUAD1STORE(X1)
	VZEROUPPER
	RET

// func gemmQ8_0x4AVX2(x, y *byte, nb int, out *[4]float32)
//
// out[c] = dot of the q8_0 row x with column c of the packed group y.
TEXT ·gemmQ8_0x4AVX2(SB), NOSPLIT, $0-32
	MOVQ     x+0(FP), SI
	MOVQ     y+8(FP), DI
	MOVQ     nb+16(FP), CX
	MOVQ     out+24(FP), DX
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	VXORPS   Y0, Y0, Y0
	TESTQ    CX, CX
	JEQ      g80done

g80loop:
	VMOVDQU 2(SI), Y2
	VPSIGNB Y2, Y2, Y3
	QUADCOL(16, Y4)
	QUADCOL(48, Y5)
	QUADCOL(80, Y6)
	QUADCOL(112, Y7)
	QUADSCALE
	ADDQ    $34, SI
	ADDQ    $144, DI
	DECQ    CX
	JNE     g80loop

g80done:
	QUADSTORE
	VZEROUPPER
	RET

// The table-coded formats: 32 4-bit indexes per block into a table of 16
// int8 values (Y13, the table in both lanes), then q8_0's signed dot.
// IQ4_NL: an f16 scale and 16 bytes of indexes (18 bytes); MXFP4: an
// E8M0 scale byte and 16 bytes of indexes (17 bytes), its value
// quant.E8M0Half: (e+1) << 21 as float32 bits below e = 2, else
// (e-1) << 23.
#define IQ4_NL_BLOCK(XO, YO, ACC) \
	NIBBLES(2+XO); \
	VPSHUFB Y2, Y13, Y2; \
	VMOVDQU 2+YO(DI), Y4; \
	SIGNED_DOT; \
	SCALE_F16(XO, YO, ACC)

#define MXFP4_BLOCK(XO, YO, ACC) \
	NIBBLES(1+XO); \
	VPSHUFB Y2, Y13, Y2; \
	VMOVDQU 2+YO(DI), Y4; \
	SIGNED_DOT; \
	MOVBLZX XO(SI), AX; \
	LEAL -1(AX), BX; \
	SHLL $23, BX; \
	LEAL 1(AX), DX; \
	SHLL $21, DX; \
	CMPL AX, $2; \
	CMOVLCS DX, BX; \
	VMOVD BX, X5; \
	VPBROADCASTD X5, Y5; \
	VPBROADCASTW YO(DI), X6; \
	VCVTPH2PS X6, Y6; \
	VMULPS Y6, Y5, Y5; \
	VFMADD231PS Y5, Y4, ACC

// func dotIQ4_NLQ8_0AVX2(x, y *byte, nb int, table *int8) float32
TEXT ·dotIQ4_NLQ8_0AVX2(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ table+24(FP), AX
	SETUP_BLOCKS
	VBROADCASTI128 (AX), Y13
	BLOCK_LOOP(IQ4_NL_BLOCK, 18, 34, iq4nltwo, iq4nlone, iq4nldone)
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func dotMXFP4Q8_0AVX2(x, y *byte, nb int, table *int8) float32
TEXT ·dotMXFP4Q8_0AVX2(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ table+24(FP), AX
	SETUP_BLOCKS
	VBROADCASTI128 (AX), Y13
	BLOCK_LOOP(MXFP4_BLOCK, 17, 34, mxfp4two, mxfp4one, mxfp4done)
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
