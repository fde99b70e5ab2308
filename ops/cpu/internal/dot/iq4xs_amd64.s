//go:build amd64 && !purego

#include "textflag.h"
#include "dot_amd64.h"

// AVX2 dot product of an IQ4_XS row with a q8_K row, its sums in
// registers (twin: IQ4_XSTwin). Per super-block of 256 elements, each
// sub-block j of 32 is q8_0's table dot (dot_q_amd64.s: the 4-bit
// indexes looked up in IQ4NLValues by VPSHUFB, elements 0..15 from the
// low nibbles, 16..31 from the high ones), its VPMADDUBSW pairs
// multiplied by the sub-block's scale ls_j-32 in VPMADDWD and added into
// eight int32 lanes (lane l: elements 4l..4l+3 of every sub-block); the
// lanes are converted once per super-block and FMA'd with d_x*d_y into
// eight float32 lanes, summed across at the end.
//
// The integer sums are exact: |y| is taken unsigned and the table value
// x times sign(y) (|x| <= 127, so it never wraps; y = -128 reads as 128),
// so a VPMADDUBSW pair is at most 2*127*128 = 32512 in magnitude, a
// lane's four products times |ls-32| <= 32 at most 4*127*128*32, and its
// sum over the eight sub-blocks at most 16646144, below 2^24: the lanes'
// conversion to float32 is exact too.

DATA xsnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL xsnib<>(SB), RODATA|NOPTR, $8

// xsshl: the dword shifts that bring nibble j of scales_l to the bottom
// of dword j; xsshh: those that bring bits 2j..2j+1 of scales_h there.
DATA xsshl<>+0x00(SB)/8, $0x0000000400000000
DATA xsshl<>+0x08(SB)/8, $0x0000000c00000008
DATA xsshl<>+0x10(SB)/8, $0x0000001400000010
DATA xsshl<>+0x18(SB)/8, $0x0000001c00000018
GLOBL xsshl<>(SB), RODATA|NOPTR, $32

DATA xsshh<>+0x00(SB)/8, $0x0000000200000000
DATA xsshh<>+0x08(SB)/8, $0x0000000600000004
DATA xsshh<>+0x10(SB)/8, $0x0000000a00000008
DATA xsshh<>+0x18(SB)/8, $0x0000000e0000000c
GLOBL xsshh<>(SB), RODATA|NOPTR, $32

// xsconst: the dwords 0x0f, 0x30 and 32.
DATA xsconst<>+0(SB)/4, $0x0f
DATA xsconst<>+4(SB)/4, $0x30
DATA xsconst<>+8(SB)/4, $32
GLOBL xsconst<>(SB), RODATA|NOPTR, $12

// xsbcast: 32-byte VPSHUFB masks, mask j copying word j of each 128-bit
// lane into all eight words of that lane.
DATA xsbcast<>+0x00(SB)/8, $0x0100010001000100
DATA xsbcast<>+0x08(SB)/8, $0x0100010001000100
DATA xsbcast<>+0x10(SB)/8, $0x0100010001000100
DATA xsbcast<>+0x18(SB)/8, $0x0100010001000100
DATA xsbcast<>+0x20(SB)/8, $0x0302030203020302
DATA xsbcast<>+0x28(SB)/8, $0x0302030203020302
DATA xsbcast<>+0x30(SB)/8, $0x0302030203020302
DATA xsbcast<>+0x38(SB)/8, $0x0302030203020302
DATA xsbcast<>+0x40(SB)/8, $0x0504050405040504
DATA xsbcast<>+0x48(SB)/8, $0x0504050405040504
DATA xsbcast<>+0x50(SB)/8, $0x0504050405040504
DATA xsbcast<>+0x58(SB)/8, $0x0504050405040504
DATA xsbcast<>+0x60(SB)/8, $0x0706070607060706
DATA xsbcast<>+0x68(SB)/8, $0x0706070607060706
DATA xsbcast<>+0x70(SB)/8, $0x0706070607060706
DATA xsbcast<>+0x78(SB)/8, $0x0706070607060706
DATA xsbcast<>+0x80(SB)/8, $0x0908090809080908
DATA xsbcast<>+0x88(SB)/8, $0x0908090809080908
DATA xsbcast<>+0x90(SB)/8, $0x0908090809080908
DATA xsbcast<>+0x98(SB)/8, $0x0908090809080908
DATA xsbcast<>+0xa0(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA xsbcast<>+0xa8(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA xsbcast<>+0xb0(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA xsbcast<>+0xb8(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA xsbcast<>+0xc0(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA xsbcast<>+0xc8(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA xsbcast<>+0xd0(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA xsbcast<>+0xd8(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA xsbcast<>+0xe0(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA xsbcast<>+0xe8(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA xsbcast<>+0xf0(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA xsbcast<>+0xf8(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL xsbcast<>(SB), RODATA|NOPTR, $256

// XS_SUB(XO, YO, MO): Y1 += the int32 lanes of sub-block products of the
// 16 index bytes at XO(SI) and the 32 q8 codes at YO(DI), times the
// scale word picked from Y5 by the mask at xsbcast<>+MO.
#define XS_SUB(XO, YO, MO) \
	VMOVDQU XO(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y14, Y2, Y2; \
	VPSHUFB Y2, Y13, Y2; \
	VMOVDQU YO(DI), Y4; \
	VPSIGNB Y4, Y4, Y3; \
	VPSIGNB Y4, Y2, Y2; \
	VPMADDUBSW Y2, Y3, Y2; \
	VPSHUFB xsbcast<>+MO(SB), Y5, Y3; \
	VPMADDWD Y3, Y2, Y2; \
	VPADDD Y2, Y1, Y1

// func dotIQ4_XSQ8_KAVX2(x, y *byte, nb int, table *int8) float32
TEXT ·dotIQ4_XSQ8_KAVX2(SB), NOSPLIT, $0-36
	MOVQ           x+0(FP), SI
	MOVQ           y+8(FP), DI
	MOVQ           nb+16(FP), CX
	MOVQ           table+24(FP), AX
	VBROADCASTI128 (AX), Y13
	VPBROADCASTQ   xsnib<>(SB), Y14
	VMOVDQU        xsshl<>(SB), Y12
	VMOVDQU        xsshh<>(SB), Y11
	VPBROADCASTD   xsconst<>+0(SB), Y10
	VPBROADCASTD   xsconst<>+4(SB), Y9
	VPBROADCASTD   xsconst<>+8(SB), Y8
	VXORPS         Y0, Y0, Y0
	TESTQ          CX, CX
	JEQ            xsdone

xsloop:
	// Y5: the words ls_j-32, j = 0..7, in both 128-bit lanes.
	VPBROADCASTD 4(SI), Y5
	VPSRLVD      Y12, Y5, Y5
	VPAND        Y10, Y5, Y5
	VPBROADCASTD 2(SI), Y6
	VPSRLVD      Y11, Y6, Y6
	VPSLLD       $4, Y6, Y6
	VPAND        Y9, Y6, Y6
	VPOR         Y6, Y5, Y5
	VPSUBD       Y8, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPACKSSDW    X6, X5, X5
	VINSERTI128  $1, X5, Y5, Y5
	VPXOR        Y1, Y1, Y1
	XS_SUB(8, 4, 0x00)
	XS_SUB(24, 36, 0x20)
	XS_SUB(40, 68, 0x40)
	XS_SUB(56, 100, 0x60)
	XS_SUB(72, 132, 0x80)
	XS_SUB(88, 164, 0xa0)
	XS_SUB(104, 196, 0xc0)
	XS_SUB(120, 228, 0xe0)
	VCVTDQ2PS    Y1, Y1
	VPBROADCASTW (SI), X6
	VCVTPH2PS    X6, Y6
	VBROADCASTSS (DI), Y7
	VMULPS       Y7, Y6, Y6
	VFMADD231PS  Y6, Y1, Y0
	ADDQ         $136, SI
	ADDQ         $292, DI
	DECQ         CX
	JNE          xsloop

xsdone:
	HSUM8(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET
