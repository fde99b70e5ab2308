//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_x8k_amd64.h"

// The vnni tier's K-format x8 kernels (see gemv_x8k_amd64.s and x8k.go):
// the AVX2 ones with each sub-block's codes times activations summed by
// VPDPBUSD into int32 lanes, then weighted by the sub-block's scale with
// VPMULLD, in place of VPMADDUBSW's word pairs weighted by VPMADDWD.
// Every row's integer sum per super-block is exact in both (no term
// comes near 2^31), and the float32 step is the AVX2 kernels', so the
// outputs equal their twins bit for bit. q4_K takes its code vectors two
// at a time in zmm registers (rows 0-7 of each in one half, the two
// activation dwords put in the halves by VPERMD, the halves summed per
// sub-block), as gemv_x8_vnni_amd64.s does; q6_K, whose code vectors of
// consecutive chunks are 96 bytes apart, stays on ymm registers with the
// activation codes as VPDPBUSD's embedded broadcast. AVX-512 F/BW/VL and
// AVX512_VNNI (no DQ). The kernels prefetch pfd bytes ahead (R12), as
// gemv_x8_amd64.s's do.

DATA x8kv3f<>+0(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8kv3f<>+8(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8kv3f<>+16(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA x8kv3f<>+24(SB)/8, $0x3f3f3f3f3f3f3f3f
GLOBL x8kv3f<>(SB), RODATA|NOPTR, $32

DATA x8kvc0<>+0(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kvc0<>+8(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kvc0<>+16(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA x8kvc0<>+24(SB)/8, $0xc0c0c0c0c0c0c0c0
GLOBL x8kvc0<>(SB), RODATA|NOPTR, $32

DATA x8kv0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL x8kv0f<>(SB), RODATA|NOPTR, $8

// x8kvspread: gemv_x8k_amd64.s's x8kspread (bytes 4q..4q+3 of each
// 128-bit lane to the word pairs of the lane's int32 lanes), for the
// mins.
DATA x8kvspread<>+0(SB)/8, $0x8001800180008000
DATA x8kvspread<>+8(SB)/8, $0x8003800380028002
DATA x8kvspread<>+16(SB)/8, $0x8001800180008000
DATA x8kvspread<>+24(SB)/8, $0x8003800380028002
DATA x8kvspread<>+32(SB)/8, $0x8005800580048004
DATA x8kvspread<>+40(SB)/8, $0x8007800780068006
DATA x8kvspread<>+48(SB)/8, $0x8005800580048004
DATA x8kvspread<>+56(SB)/8, $0x8007800780068006
DATA x8kvspread<>+64(SB)/8, $0x8009800980088008
DATA x8kvspread<>+72(SB)/8, $0x800b800b800a800a
DATA x8kvspread<>+80(SB)/8, $0x8009800980088008
DATA x8kvspread<>+88(SB)/8, $0x800b800b800a800a
DATA x8kvspread<>+96(SB)/8, $0x800d800d800c800c
DATA x8kvspread<>+104(SB)/8, $0x800f800f800e800e
DATA x8kvspread<>+112(SB)/8, $0x800d800d800c800c
DATA x8kvspread<>+120(SB)/8, $0x800f800f800e800e
GLOBL x8kvspread<>(SB), RODATA|NOPTR, $128

// x8kvdword: VPSHUFB patterns, 32 bytes for each q (0..3), that
// zero-extend bytes 4q..4q+3 of each 128-bit lane to the lane's four
// int32 lanes: a q4_K x8 sub-block's eight scales as dwords, row r in
// lane r.
DATA x8kvdword<>+0(SB)/8, $0x8080800180808000
DATA x8kvdword<>+8(SB)/8, $0x8080800380808002
DATA x8kvdword<>+16(SB)/8, $0x8080800180808000
DATA x8kvdword<>+24(SB)/8, $0x8080800380808002
DATA x8kvdword<>+32(SB)/8, $0x8080800580808004
DATA x8kvdword<>+40(SB)/8, $0x8080800780808006
DATA x8kvdword<>+48(SB)/8, $0x8080800580808004
DATA x8kvdword<>+56(SB)/8, $0x8080800780808006
DATA x8kvdword<>+64(SB)/8, $0x8080800980808008
DATA x8kvdword<>+72(SB)/8, $0x8080800b8080800a
DATA x8kvdword<>+80(SB)/8, $0x8080800980808008
DATA x8kvdword<>+88(SB)/8, $0x8080800b8080800a
DATA x8kvdword<>+96(SB)/8, $0x8080800d8080800c
DATA x8kvdword<>+104(SB)/8, $0x8080800f8080800e
DATA x8kvdword<>+112(SB)/8, $0x8080800d8080800c
DATA x8kvdword<>+120(SB)/8, $0x8080800f8080800e
GLOBL x8kvdword<>(SB), RODATA|NOPTR, $128

// x8kvperm<>: VPERMD index, dword 0 in lanes 0-7 and dword 1 in lanes
// 8-15 (as gemv_x8_vnni_amd64.s's x8vperm<>); pair p's is it plus 2p.
DATA x8kvperm<>+0(SB)/8, $0x0000000000000000
DATA x8kvperm<>+8(SB)/8, $0x0000000000000000
DATA x8kvperm<>+16(SB)/8, $0x0000000000000000
DATA x8kvperm<>+24(SB)/8, $0x0000000000000000
DATA x8kvperm<>+32(SB)/8, $0x0000000100000001
DATA x8kvperm<>+40(SB)/8, $0x0000000100000001
DATA x8kvperm<>+48(SB)/8, $0x0000000100000001
DATA x8kvperm<>+56(SB)/8, $0x0000000100000001
GLOBL x8kvperm<>(SB), RODATA|NOPTR, $64

// X8KV_Q4VEC(C, P, I): code vectors 8C+2P and 8C+2P+1 of the q4_K x8
// block at SI (64 bytes, rows 0-7 of one in each half): the low nibbles
// times the activation dwords 2P, 2P+1 of sub-block 2C (Z20 permuted by
// I) summed into Z4, the high nibbles times those of sub-block 2C+1
// (Z21) into Z5. Z15 = 0x0f bytes. Clobbers Z0-Z3.
#define X8KV_Q4VEC(C, P, I) \
	VMOVDQU64 128+32*(8*C+2*P)(SI), Z0; \
	VPSRLW    $4, Z0, Z1; \
	VPANDD    Z15, Z0, Z0; \
	VPANDD    Z15, Z1, Z1; \
	VPERMD    Z20, I, Z2; \
	VPERMD    Z21, I, Z3; \
	VPDPBUSD  Z2, Z0, Z4; \
	VPDPBUSD  Z3, Z1, Z5

// X8KV_Q4PAIR(C, SC): sub-blocks 2C and 2C+1 (each row's sums at most
// 32*15*128): the halves of Z4 and Z5 (even and odd code vectors)
// summed, times the sub-blocks' scales (of the vector SC: Y8 for C < 2,
// Y9 after) as dwords, added to Y13. Z26-Z29 = the pair indices.
// Clobbers Z0-Z7, Z20, Z21.
#define X8KV_Q4PAIR(C, SC) \
	VMOVDQU32     4+64*C(DI), Y20; \
	VMOVDQU32     36+64*C(DI), Y21; \
	VPXORD        Z4, Z4, Z4; \
	VPXORD        Z5, Z5, Z5; \
	X8KV_Q4VEC(C, 0, Z26); \
	X8KV_Q4VEC(C, 1, Z27); \
	X8KV_Q4VEC(C, 2, Z28); \
	X8KV_Q4VEC(C, 3, Z29); \
	VEXTRACTI64X4 $1, Z4, Y6; \
	VPADDD        Y6, Y4, Y4; \
	VEXTRACTI64X4 $1, Z5, Y7; \
	VPADDD        Y7, Y5, Y5; \
	VPSHUFB       x8kvdword<>+64*(C%2)(SB), SC, Y6; \
	VPMULLD       Y6, Y4, Y4; \
	VPADDD        Y4, Y13, Y13; \
	VPSHUFB       x8kvdword<>+64*(C%2)+32(SB), SC, Y7; \
	VPMULLD       Y7, Y5, Y5; \
	VPADDD        Y5, Y13, Y13

// X8KV_Q4MIN(J, M): q4_Kx8AVX2's X8_Q4K_MIN: Y12 += the eight rows'
// m_J*(bsum_2J + bsum_2J+1), the mins of sub-block J in M (Y10 for J <
// 4, Y11 after). Clobbers Y0, Y1.
#define X8KV_Q4MIN(J, M) \
	VPSHUFB      x8kvspread<>+32*(J%4)(SB), M, Y0; \
	VPBROADCASTD 260+4*J(DI), Y1; \
	VPMADDWD     Y1, Y0, Y0; \
	VPADDD       Y0, Y12, Y12

// func q4_Kx8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q4_KTwin, as q4_Kx8AVX2 (the same isum and mins, the same
// float32 step). side holds d_y per block. nb, ng > 0.
TEXT ·q4_Kx8VNNI(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), R8
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPBROADCASTD x8kv0f<>(SB), Z15
	VMOVDQU64    x8kvperm<>(SB), Z26
	MOVL         $2, AX
	VPBROADCASTD AX, Z25
	VPADDD       Z25, Z26, Z27
	VPADDD       Z25, Z27, Z28
	VPADDD       Z25, Z28, Z29

x8vq4kgroup:
	MOVQ   R8, DI
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y14, Y14, Y14

x8vq4kblock:
	// The 6-bit triple of scale and min codes: Y8 scales 0-3, Y9
	// scales 4-7, Y10 mins 0-3, Y11 mins 4-7.
	VMOVDQU 32(SI), Y0
	VMOVDQU 64(SI), Y1
	VMOVDQU 96(SI), Y2
	VPAND   x8kv3f<>(SB), Y0, Y8
	VPAND   x8kv3f<>(SB), Y1, Y9
	VPAND   x8kv3f<>(SB), Y2, Y10
	VPAND   x8kvc0<>(SB), Y0, Y0
	VPSRLW  $2, Y0, Y0
	VPAND   x8kvc0<>(SB), Y1, Y1
	VPOR    Y1, Y0, Y0
	VPSRLW  $2, Y0, Y0
	VPAND   x8kvc0<>(SB), Y2, Y2
	VPOR    Y2, Y0, Y0
	VPSRLW  $2, Y0, Y11

	VPXOR Y12, Y12, Y12
	X8KV_Q4MIN(0, Y10)
	X8KV_Q4MIN(1, Y10)
	X8KV_Q4MIN(2, Y10)
	X8KV_Q4MIN(3, Y10)
	X8KV_Q4MIN(4, Y11)
	X8KV_Q4MIN(5, Y11)
	X8KV_Q4MIN(6, Y11)
	X8KV_Q4MIN(7, Y11)

	VPXOR Y13, Y13, Y13
	X8KV_Q4PAIR(0, Y8)
	X8K_PF_Q4K_0
	X8KV_Q4PAIR(1, Y8)
	X8K_PF_Q4K_1
	X8KV_Q4PAIR(2, Y9)
	X8K_PF_Q4K_2
	X8KV_Q4PAIR(3, Y9)
	X8K_PF_Q4K_3

	// (d_x*d_y)*float(isum) - (dmin_x*d_y)*float(mins), added, as
	// q4_Kx8AVX2.
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
	JNE          x8vq4kblock

	VMOVUPS Y14, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8vq4kgroup
	VZEROUPPER
	RET

// x8kvm16: -16 in every word: VPMADDWD of a broadcast bsum word with it
// is -32*bsum in every int32 lane.
DATA x8kvm16<>+0(SB)/4, $0xfff0fff0
GLOBL x8kvm16<>(SB), RODATA|NOPTR, $4

// X8KV_Q6UNPACK: gemv_x8k_amd64.s's X8_Q6K_UNPACK: the four code vectors
// of the 6-bit triple in Y0, Y1, Y2 (v0..v2 left in place, v3 into Y3).
// Y15 = 0x3f bytes. Clobbers Y12.
#define X8KV_Q6UNPACK \
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

// X8KV_Q6CHUNK(H, C): chunk C of half H (the 96-byte triple at
// 144+96(8H+C)), value i (unsigned, 0..63) times the activation codes
// 128H+32i+4C..+3 broadcast, summed into Y4+i. Clobbers Y0-Y3, Y12.
#define X8KV_Q6CHUNK(H, C) \
	VMOVDQU       144+96*(8*(H)+(C))(SI), Y0; \
	VMOVDQU       176+96*(8*(H)+(C))(SI), Y1; \
	VMOVDQU       208+96*(8*(H)+(C))(SI), Y2; \
	X8KV_Q6UNPACK; \
	VPDPBUSD.BCST 4+128*(H)+4*(C)(DI), Y0, Y4; \
	VPDPBUSD.BCST 36+128*(H)+4*(C)(DI), Y1, Y5; \
	VPDPBUSD.BCST 68+128*(H)+4*(C)(DI), Y2, Y6; \
	VPDPBUSD.BCST 100+128*(H)+4*(C)(DI), Y3, Y7

// X8KV_Q6QUARTER(H, K): sub-blocks j = 8H+K+2i (i = 0..3) of the block
// at SI: Y4+i starts at -32*bsum_j (the codes' bias, every row), takes
// chunks 4K..4K+3 of half H (a row's sum at most 16*63*128 + 32*2048 in
// magnitude), and is multiplied by the rows' scales of j (Y16+i, the
// signed scale bytes sign-extended to dwords) into Y13.
#define X8KV_Q6QUARTER(H, K) \
	VPMOVSXBW    16+16*(4*H+2*K)(SI), Y0; \
	VPUNPCKLWD   Y0, Y0, Y16; \
	VPSRAD       $16, Y16, Y16; \
	VPUNPCKHWD   Y0, Y0, Y17; \
	VPSRAD       $16, Y17, Y17; \
	VPMOVSXBW    32+16*(4*H+2*K)(SI), Y0; \
	VPUNPCKLWD   Y0, Y0, Y18; \
	VPSRAD       $16, Y18, Y18; \
	VPUNPCKHWD   Y0, Y0, Y19; \
	VPSRAD       $16, Y19, Y19; \
	VPBROADCASTW 260+2*(8*H+K)(DI), Y4; \
	VPMADDWD     Y20, Y4, Y4; \
	VPBROADCASTW 264+2*(8*H+K)(DI), Y5; \
	VPMADDWD     Y20, Y5, Y5; \
	VPBROADCASTW 268+2*(8*H+K)(DI), Y6; \
	VPMADDWD     Y20, Y6, Y6; \
	VPBROADCASTW 272+2*(8*H+K)(DI), Y7; \
	VPMADDWD     Y20, Y7, Y7; \
	X8KV_Q6CHUNK(H, 4*K); \
	X8KV_Q6CHUNK(H, 4*K+1); \
	X8KV_Q6CHUNK(H, 4*K+2); \
	X8KV_Q6CHUNK(H, 4*K+3); \
	VPMULLD      Y16, Y4, Y4; \
	VPADDD       Y4, Y13, Y13; \
	VPMULLD      Y17, Y5, Y5; \
	VPADDD       Y5, Y13, Y13; \
	VPMULLD      Y18, Y6, Y6; \
	VPADDD       Y6, Y13, Y13; \
	VPMULLD      Y19, Y7, Y7; \
	VPADDD       Y7, Y13, Y13

// func q6_Kx8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q6_KTwin, as q6_Kx8AVX2: per super-block and row the integer
// sum is sum(s*(q*y - 32*bsum)) (the same integer as the AVX2 kernel's
// sum(s*q*y) - 32*sum(s*bsum)), then out += (d_x*d_y)*float(isum).
// side holds d_y per block. nb, ng > 0.
TEXT ·q6_Kx8VNNI(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), R8
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPBROADCASTQ x8kv3f<>(SB), Y15
	VPBROADCASTD x8kvm16<>(SB), Y20

x8vq6group:
	MOVQ   R8, DI
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y14, Y14, Y14

x8vq6block:
	VPXOR Y13, Y13, Y13
	X8KV_Q6QUARTER(0, 0)
	X8K_PF_Q6K_0
	X8KV_Q6QUARTER(0, 1)
	X8K_PF_Q6K_1
	X8KV_Q6QUARTER(1, 0)
	X8K_PF_Q6K_2
	X8KV_Q6QUARTER(1, 1)
	X8K_PF_Q6K_3

	// (d_x*d_y)*float(isum), added, as q6_Kx8AVX2.
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
	JNE          x8vq6block

	VMOVUPS Y14, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8vq6group
	VZEROUPPER
	RET
