//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_x8k_amd64.h"

// The kernels prefetch their stream pfd bytes ahead (R12), as
// gemv_x8_amd64.s's do.

// The K formats' x8 kernels (see x8k.go for the layouts): eight
// interleaved q4_K or q6_K rows against one q8_K activation row, ng
// groups a call, each group one contiguous stream. A broadcast of four
// activation codes multiplies four codes of each of the eight rows (row
// r in bytes 4r..4r+3 of a code vector), VPMADDUBSW's word pairs of a
// sub-block are summed as words (bounded: no wrap), and one VPMADDWD
// with the sub-block's scale in both words of each row's lane weights
// them: int32 lane r is row r's exact integer sum, with no horizontal
// sums. The float32 step per super-block is the dot product's, on eight
// rows at once and rounded at every operation (no FMA), so the outputs
// equal the dot product (and the plain layout's four-row kernels) bit
// for bit.

DATA x8k3f<>+0(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8k3f<>+8(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8k3f<>+16(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8k3f<>+24(SB)/8, $0x3f3f3f3f3f3f3f3f
GLOBL x8k3f<>(SB), RODATA|NOPTR, $32

DATA x8kc0<>+0(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kc0<>+8(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kc0<>+16(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kc0<>+24(SB)/8, $0xc0c0c0c0c0c0c0c0
GLOBL x8kc0<>(SB), RODATA|NOPTR, $32

DATA x8k0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL x8k0f<>(SB), RODATA|NOPTR, $8

// x8kspread: VPSHUFB patterns, 32 bytes for each q (0..3), that spread
// bytes 4q..4q+3 of each 128-bit lane to the word pairs of the lane's
// four int32 lanes (zero-extended): a q4_K x8 sub-block's eight values
// as [v_r, v_r] in int32 lane r.
DATA x8kspread<>+0(SB)/8, $0x8001800180008000
DATA x8kspread<>+8(SB)/8, $0x8003800380028002
DATA x8kspread<>+16(SB)/8, $0x8001800180008000
DATA x8kspread<>+24(SB)/8, $0x8003800380028002
DATA x8kspread<>+32(SB)/8, $0x8005800580048004
DATA x8kspread<>+40(SB)/8, $0x8007800780068006
DATA x8kspread<>+48(SB)/8, $0x8005800580048004
DATA x8kspread<>+56(SB)/8, $0x8007800780068006
DATA x8kspread<>+64(SB)/8, $0x8009800980088008
DATA x8kspread<>+72(SB)/8, $0x800b800b800a800a
DATA x8kspread<>+80(SB)/8, $0x8009800980088008
DATA x8kspread<>+88(SB)/8, $0x800b800b800a800a
DATA x8kspread<>+96(SB)/8, $0x800d800d800c800c
DATA x8kspread<>+104(SB)/8, $0x800f800f800e800e
DATA x8kspread<>+112(SB)/8, $0x800d800d800c800c
DATA x8kspread<>+120(SB)/8, $0x800f800f800e800e
GLOBL x8kspread<>(SB), RODATA|NOPTR, $128

// X8_Q6K_UNPACK: the four code vectors of the 6-bit triple in Y0, Y1, Y2
// (v0..v2 left in place, v3 into Y3). Y15 = 0x3f bytes. Clobbers Y12.
#define X8_Q6K_UNPACK \
	VPANDN Y0, Y15, Y3; \
	VPSRLW $2, Y3, Y3; \
	VPANDN Y1, Y15, Y12; \
	VPOR   Y12, Y3, Y3; \
	VPSRLW $2, Y3, Y3; \
	VPANDN Y2, Y15, Y12; \
	VPOR   Y12, Y3, Y3; \
	VPSRLW $2, Y3, Y3; \
	VPAND  Y15, Y0, Y0; \
	VPAND  Y15, Y1, Y1; \
	VPAND  Y15, Y2, Y2

// X8_Q6K_FIRST(H, C): chunk C of half H (the 96-byte triple at
// 144+96(8H+C)), value i times the activation codes 128H+32i+4C..+3
// broadcast: word pairs into Y4..Y7 (value i in Y4+i). Clobbers Y0-Y3,
// Y12.
#define X8_Q6K_FIRST(H, C) \
	VMOVDQU      144+96*(8*(H)+(C))(SI), Y0; \
	VMOVDQU      176+96*(8*(H)+(C))(SI), Y1; \
	VMOVDQU      208+96*(8*(H)+(C))(SI), Y2; \
	X8_Q6K_UNPACK; \
	VPBROADCASTD 4+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y0, Y4; \
	VPBROADCASTD 36+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y1, Y5; \
	VPBROADCASTD 68+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y2, Y6; \
	VPBROADCASTD 100+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y3, Y7

// X8_Q6K_ADD(H, C): X8_Q6K_FIRST's word pairs added to Y4..Y7 (two
// chunks' pairs sum to at most 2*2*63*128 in magnitude: no wrap).
#define X8_Q6K_ADD(H, C) \
	VMOVDQU      144+96*(8*(H)+(C))(SI), Y0; \
	VMOVDQU      176+96*(8*(H)+(C))(SI), Y1; \
	VMOVDQU      208+96*(8*(H)+(C))(SI), Y2; \
	X8_Q6K_UNPACK; \
	VPBROADCASTD 4+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y0, Y0; \
	VPADDW       Y0, Y4, Y4; \
	VPBROADCASTD 36+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y1, Y1; \
	VPADDW       Y1, Y5, Y5; \
	VPBROADCASTD 68+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y2, Y2; \
	VPADDW       Y2, Y6, Y6; \
	VPBROADCASTD 100+128*(H)+4*(C)(DI), Y12; \
	VPMADDUBSW   Y12, Y3, Y3; \
	VPADDW       Y3, Y7, Y7

// X8_Q6K_SCALE: Y4..Y7 weighted by the scale words Y8..Y11 into Y13.
#define X8_Q6K_SCALE \
	VPMADDWD Y8, Y4, Y4; \
	VPADDD   Y4, Y13, Y13; \
	VPMADDWD Y9, Y5, Y5; \
	VPADDD   Y5, Y13, Y13; \
	VPMADDWD Y10, Y6, Y6; \
	VPADDD   Y6, Y13, Y13; \
	VPMADDWD Y11, Y7, Y7; \
	VPADDD   Y7, Y13, Y13

// X8_Q6K_QUARTER(H, K): sub-blocks 8H+K+2i (i = 0..3) of the block at
// SI: their scale words into Y8..Y11 (row r's signed scale in both words
// of int32 lane r), Y13 -= 32*sum(s*bsum) (16 times VPMADDWD's
// [s,s].[b,b]), then chunks 4K..4K+3 of half H, two at a time.
#define X8_Q6K_QUARTER(H, K) \
	VPMOVSXBW    16+16*(4*H+2*K)(SI), Y0; \
	VPUNPCKLWD   Y0, Y0, Y8; \
	VPUNPCKHWD   Y0, Y0, Y9; \
	VPMOVSXBW    32+16*(4*H+2*K)(SI), Y0; \
	VPUNPCKLWD   Y0, Y0, Y10; \
	VPUNPCKHWD   Y0, Y0, Y11; \
	VPBROADCASTW 260+2*(8*H+K)(DI), Y3; \
	VPMADDWD     Y8, Y3, Y3; \
	VPBROADCASTW 264+2*(8*H+K)(DI), Y1; \
	VPMADDWD     Y9, Y1, Y1; \
	VPADDD       Y1, Y3, Y3; \
	VPBROADCASTW 268+2*(8*H+K)(DI), Y1; \
	VPMADDWD     Y10, Y1, Y1; \
	VPADDD       Y1, Y3, Y3; \
	VPBROADCASTW 272+2*(8*H+K)(DI), Y1; \
	VPMADDWD     Y11, Y1, Y1; \
	VPADDD       Y1, Y3, Y3; \
	VPSLLD       $4, Y3, Y3; \
	VPSUBD       Y3, Y13, Y13; \
	X8_Q6K_FIRST(H, 4*K); \
	X8_Q6K_ADD(H, 4*K+1); \
	X8_Q6K_SCALE; \
	X8_Q6K_FIRST(H, 4*K+2); \
	X8_Q6K_ADD(H, 4*K+3); \
	X8_Q6K_SCALE

// func q6_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q6_KTwin (the q6_K dot product per row). Per super-block and
// row the integer sum is sum(s*q*y) - 32*sum(s*bsum), then out +=
// (d_x*d_y)*float(isum) as the dot product rounds it. side holds d_y
// per block. nb, ng > 0.
TEXT ·q6_Kx8AVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), R8
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPBROADCASTQ x8k3f<>(SB), Y15

x8q6group:
	MOVQ   R8, DI
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y14, Y14, Y14

x8q6block:
	VPXOR Y13, Y13, Y13
	X8_Q6K_QUARTER(0, 0)
	X8K_PF_Q6K_0
	X8_Q6K_QUARTER(0, 1)
	X8K_PF_Q6K_1
	X8_Q6K_QUARTER(1, 0)
	X8K_PF_Q6K_2
	X8_Q6K_QUARTER(1, 1)
	X8K_PF_Q6K_3

	// (d_x*d_y)*float(isum), added: the dot product's rounding.
	VCVTDQ2PS    Y13, Y13
	VCVTPH2PS    (SI), Y0
	VBROADCASTSS (R9), Y1
	VMULPS       Y1, Y0, Y0
	VMULPS       Y13, Y0, Y0
	VADDPS       Y0, Y14, Y14
	ADDQ         $1680, SI
	ADDQ         $292, DI
	ADDQ         $4, R9
	DECQ         R11
	JNE          x8q6block

	VMOVUPS Y14, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q6group
	VZEROUPPER
	RET

// X8_Q4K_FIRST(C, V): code vector 8C+V of the q4_K x8 block at SI (low
// nibbles: sub-block 2C, elements 4V..4V+3; high nibbles: sub-block
// 2C+1) times the activation codes broadcast: word pairs into Y4 (low)
// and Y5 (high). Y15 = 0x0f bytes. Clobbers Y0-Y3.
#define X8_Q4K_FIRST(C, V) \
	VMOVDQU      128+32*(8*C+V)(SI), Y0; \
	VPSRLW       $4, Y0, Y1; \
	VPAND        Y15, Y0, Y0; \
	VPAND        Y15, Y1, Y1; \
	VPBROADCASTD 4+64*C+4*V(DI), Y2; \
	VPBROADCASTD 36+64*C+4*V(DI), Y3; \
	VPMADDUBSW   Y2, Y0, Y4; \
	VPMADDUBSW   Y3, Y1, Y5

// X8_Q4K_ADD(C, V): X8_Q4K_FIRST's word pairs added to Y4 and Y5 (a
// sub-block's eight sum to at most 8*2*15*128 in magnitude: no wrap).
#define X8_Q4K_ADD(C, V) \
	VMOVDQU      128+32*(8*C+V)(SI), Y0; \
	VPSRLW       $4, Y0, Y1; \
	VPAND        Y15, Y0, Y0; \
	VPAND        Y15, Y1, Y1; \
	VPBROADCASTD 4+64*C+4*V(DI), Y2; \
	VPBROADCASTD 36+64*C+4*V(DI), Y3; \
	VPMADDUBSW   Y2, Y0, Y0; \
	VPADDW       Y0, Y4, Y4; \
	VPMADDUBSW   Y3, Y1, Y1; \
	VPADDW       Y1, Y5, Y5

// X8_Q4K_PAIR(C, SC): sub-blocks 2C and 2C+1, weighted by their scales
// (of the vector SC: Y8 for C < 2, Y9 after) and added to Y13.
#define X8_Q4K_PAIR(C, SC) \
	X8_Q4K_FIRST(C, 0); \
	X8_Q4K_ADD(C, 1); \
	X8_Q4K_ADD(C, 2); \
	X8_Q4K_ADD(C, 3); \
	X8_Q4K_ADD(C, 4); \
	X8_Q4K_ADD(C, 5); \
	X8_Q4K_ADD(C, 6); \
	X8_Q4K_ADD(C, 7); \
	VPSHUFB  x8kspread<>+64*(C%2)(SB), SC, Y6; \
	VPMADDWD Y6, Y4, Y4; \
	VPADDD   Y4, Y13, Y13; \
	VPSHUFB  x8kspread<>+64*(C%2)+32(SB), SC, Y7; \
	VPMADDWD Y7, Y5, Y5; \
	VPADDD   Y5, Y13, Y13

// X8_Q4K_MIN(J, M): Y12 += the eight rows' m_J*(bsum_2J + bsum_2J+1),
// the mins of sub-block J in M (Y10 for J < 4, Y11 after). Clobbers
// Y0, Y1.
#define X8_Q4K_MIN(J, M) \
	VPSHUFB      x8kspread<>+32*(J%4)(SB), M, Y0; \
	VPBROADCASTD 260+4*J(DI), Y1; \
	VPMADDWD     Y1, Y0, Y0; \
	VPADDD       Y0, Y12, Y12

// func q4_Kx8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q4_KTwin (the q4_K dot product per row). Per super-block and
// row: isum = sum(sc*q*y), mins = sum(m_j*(bsum_2j+bsum_2j+1)) (VPMADDWD's
// [m,m].[b_2j,b_2j+1], as the four-row kernel forms it), then out +=
// (d_x*d_y)*float(isum) - (dmin_x*d_y)*float(mins) as the dot product
// rounds it. side holds d_y per block. nb, ng > 0.
TEXT ·q4_Kx8AVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), R8
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPBROADCASTQ x8k0f<>(SB), Y15

x8q4kgroup:
	MOVQ   R8, DI
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y14, Y14, Y14

x8q4kblock:
	// The 6-bit triple of scale and min codes: Y8 scales 0-3, Y9
	// scales 4-7, Y10 mins 0-3, Y11 mins 4-7.
	VMOVDQU 32(SI), Y0
	VMOVDQU 64(SI), Y1
	VMOVDQU 96(SI), Y2
	VPAND   x8k3f<>(SB), Y0, Y8
	VPAND   x8k3f<>(SB), Y1, Y9
	VPAND   x8k3f<>(SB), Y2, Y10
	VPAND   x8kc0<>(SB), Y0, Y0
	VPSRLW  $2, Y0, Y0
	VPAND   x8kc0<>(SB), Y1, Y1
	VPOR    Y1, Y0, Y0
	VPSRLW  $2, Y0, Y0
	VPAND   x8kc0<>(SB), Y2, Y2
	VPOR    Y2, Y0, Y0
	VPSRLW  $2, Y0, Y11

	VPXOR Y12, Y12, Y12
	X8_Q4K_MIN(0, Y10)
	X8_Q4K_MIN(1, Y10)
	X8_Q4K_MIN(2, Y10)
	X8_Q4K_MIN(3, Y10)
	X8_Q4K_MIN(4, Y11)
	X8_Q4K_MIN(5, Y11)
	X8_Q4K_MIN(6, Y11)
	X8_Q4K_MIN(7, Y11)

	VPXOR Y13, Y13, Y13
	X8_Q4K_PAIR(0, Y8)
	X8K_PF_Q4K_0
	X8_Q4K_PAIR(1, Y8)
	X8K_PF_Q4K_1
	X8_Q4K_PAIR(2, Y9)
	X8K_PF_Q4K_2
	X8_Q4K_PAIR(3, Y9)
	X8K_PF_Q4K_3

	// (d_x*d_y)*float(isum) - (dmin_x*d_y)*float(mins), added: the dot
	// product's rounding.
	VCVTDQ2PS    Y13, Y13
	VCVTDQ2PS    Y12, Y12
	VCVTPH2PS    (SI), Y0
	VCVTPH2PS    16(SI), Y1
	VBROADCASTSS (R9), Y2
	VMULPS       Y2, Y0, Y0
	VMULPS       Y2, Y1, Y1
	VMULPS       Y13, Y0, Y0
	VMULPS       Y12, Y1, Y1
	VSUBPS       Y1, Y0, Y0
	VADDPS       Y0, Y14, Y14
	ADDQ         $1152, SI
	ADDQ         $292, DI
	ADDQ         $4, R9
	DECQ         R11
	JNE          x8q4kblock

	VMOVUPS Y14, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q4kgroup
	VZEROUPPER
	RET
