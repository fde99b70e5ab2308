//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_k_amd64.h"

// The vnni tier's q2_K and q3_K four-row kernels: the AVX2 ones
// (gemv_q2k_q3k_amd64.s) with VPDPBUSD on zmm registers as
// gemv_k_vnni_amd64.s does for q4_K-q6_K: two 32-element chunks a
// register (the codes of one 32-byte run in both halves, shifted by a
// count per half), their products summed by VPDPBUSD from zero and
// weighted by the scale of each 16 elements with VPMULLD. The AVX2
// kernels' word sums never saturate (codes at most 7), the integer
// sums per row and super-block are exact in both, and the offset/min
// terms, the rows' reduction and the float32 step are the AVX2 kernels'
// instructions, so every out[r] equals the AVX2 kernel (and the dot
// product) bit for bit. AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

// Constants of gemv_q2k_q3k_amd64.s (static data is per file), then
// gvk6idxb (gemv_k_vnni_amd64.s's gvk6idx: dword 4k+i in lanes
// 4i..4i+3 for chunk k) and the word shift counts (low half, high half)
// gvkshr02b = (0, 2), gvkshr46 = (4, 6), gvkshr1b = (0, 1).

DATA gvk03<>+0(SB)/8, $0x0303030303030303
GLOBL gvk03<>(SB), RODATA|NOPTR, $8
DATA gvk04<>+0(SB)/8, $0x0404040404040404
GLOBL gvk04<>(SB), RODATA|NOPTR, $8
DATA gvk32w<>+0(SB)/8, $0x0020002000200020
GLOBL gvk32w<>(SB), RODATA|NOPTR, $8
DATA gvq3lo<>+0(SB)/8, $0x0908070605040302
DATA gvq3lo<>+8(SB)/8, $0x0908070605040302
DATA gvq3lo<>+16(SB)/8, $0x0908070605040302
DATA gvq3lo<>+24(SB)/8, $0x0908070605040302
GLOBL gvq3lo<>(SB), RODATA|NOPTR, $32
DATA gvq3hi<>+0(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gvq3hi<>+8(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gvq3hi<>+16(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA gvq3hi<>+24(SB)/8, $0x0d0c0b0a0d0c0b0a
GLOBL gvq3hi<>(SB), RODATA|NOPTR, $32
DATA gvq3slo<>+0(SB)/8, $0
DATA gvq3slo<>+8(SB)/8, $0x0000000400000004
DATA gvq3slo<>+16(SB)/8, $0
DATA gvq3slo<>+24(SB)/8, $0x0000000400000004
GLOBL gvq3slo<>(SB), RODATA|NOPTR, $32
DATA gvq3shi<>+0(SB)/8, $0x0000000200000000
DATA gvq3shi<>+8(SB)/8, $0x0000000600000004
DATA gvq3shi<>+16(SB)/8, $0x0000000200000000
DATA gvq3shi<>+24(SB)/8, $0x0000000600000004
GLOBL gvq3shi<>(SB), RODATA|NOPTR, $32
DATA gvm0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gvm0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gvm0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA gvm0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gvm0f<>(SB), RODATA|NOPTR, $32
DATA gvm30<>+0(SB)/8, $0x3030303030303030
DATA gvm30<>+8(SB)/8, $0x3030303030303030
DATA gvm30<>+16(SB)/8, $0x3030303030303030
DATA gvm30<>+24(SB)/8, $0x3030303030303030
GLOBL gvm30<>(SB), RODATA|NOPTR, $32

DATA gvk6idxb<>+0(SB)/8, $0x0000000000000000
DATA gvk6idxb<>+8(SB)/8, $0x0000000000000000
DATA gvk6idxb<>+16(SB)/8, $0x0000000100000001
DATA gvk6idxb<>+24(SB)/8, $0x0000000100000001
DATA gvk6idxb<>+32(SB)/8, $0x0000000200000002
DATA gvk6idxb<>+40(SB)/8, $0x0000000200000002
DATA gvk6idxb<>+48(SB)/8, $0x0000000300000003
DATA gvk6idxb<>+56(SB)/8, $0x0000000300000003
DATA gvk6idxb<>+64(SB)/8, $0x0000000400000004
DATA gvk6idxb<>+72(SB)/8, $0x0000000400000004
DATA gvk6idxb<>+80(SB)/8, $0x0000000500000005
DATA gvk6idxb<>+88(SB)/8, $0x0000000500000005
DATA gvk6idxb<>+96(SB)/8, $0x0000000600000006
DATA gvk6idxb<>+104(SB)/8, $0x0000000600000006
DATA gvk6idxb<>+112(SB)/8, $0x0000000700000007
DATA gvk6idxb<>+120(SB)/8, $0x0000000700000007
DATA gvk6idxb<>+128(SB)/8, $0x0000000800000008
DATA gvk6idxb<>+136(SB)/8, $0x0000000800000008
DATA gvk6idxb<>+144(SB)/8, $0x0000000900000009
DATA gvk6idxb<>+152(SB)/8, $0x0000000900000009
DATA gvk6idxb<>+160(SB)/8, $0x0000000a0000000a
DATA gvk6idxb<>+168(SB)/8, $0x0000000a0000000a
DATA gvk6idxb<>+176(SB)/8, $0x0000000b0000000b
DATA gvk6idxb<>+184(SB)/8, $0x0000000b0000000b
DATA gvk6idxb<>+192(SB)/8, $0x0000000c0000000c
DATA gvk6idxb<>+200(SB)/8, $0x0000000c0000000c
DATA gvk6idxb<>+208(SB)/8, $0x0000000d0000000d
DATA gvk6idxb<>+216(SB)/8, $0x0000000d0000000d
DATA gvk6idxb<>+224(SB)/8, $0x0000000e0000000e
DATA gvk6idxb<>+232(SB)/8, $0x0000000e0000000e
DATA gvk6idxb<>+240(SB)/8, $0x0000000f0000000f
DATA gvk6idxb<>+248(SB)/8, $0x0000000f0000000f
GLOBL gvk6idxb<>(SB), RODATA|NOPTR, $256

DATA gvkshr02b<>+0(SB)/8, $0x0000000000000000
DATA gvkshr02b<>+8(SB)/8, $0x0000000000000000
DATA gvkshr02b<>+16(SB)/8, $0x0000000000000000
DATA gvkshr02b<>+24(SB)/8, $0x0000000000000000
DATA gvkshr02b<>+32(SB)/8, $0x0002000200020002
DATA gvkshr02b<>+40(SB)/8, $0x0002000200020002
DATA gvkshr02b<>+48(SB)/8, $0x0002000200020002
DATA gvkshr02b<>+56(SB)/8, $0x0002000200020002
GLOBL gvkshr02b<>(SB), RODATA|NOPTR, $64

DATA gvkshr46<>+0(SB)/8, $0x0004000400040004
DATA gvkshr46<>+8(SB)/8, $0x0004000400040004
DATA gvkshr46<>+16(SB)/8, $0x0004000400040004
DATA gvkshr46<>+24(SB)/8, $0x0004000400040004
DATA gvkshr46<>+32(SB)/8, $0x0006000600060006
DATA gvkshr46<>+40(SB)/8, $0x0006000600060006
DATA gvkshr46<>+48(SB)/8, $0x0006000600060006
DATA gvkshr46<>+56(SB)/8, $0x0006000600060006
GLOBL gvkshr46<>(SB), RODATA|NOPTR, $64

DATA gvkshr1b<>+0(SB)/8, $0x0000000000000000
DATA gvkshr1b<>+8(SB)/8, $0x0000000000000000
DATA gvkshr1b<>+16(SB)/8, $0x0000000000000000
DATA gvkshr1b<>+24(SB)/8, $0x0000000000000000
DATA gvkshr1b<>+32(SB)/8, $0x0001000100010001
DATA gvkshr1b<>+40(SB)/8, $0x0001000100010001
DATA gvkshr1b<>+48(SB)/8, $0x0001000100010001
DATA gvkshr1b<>+56(SB)/8, $0x0001000100010001
GLOBL gvkshr1b<>(SB), RODATA|NOPTR, $64

// KVB_SUM4: Y6 = the sum of Z20-Z23's lanes folded to 8 (exact
// integers). Clobbers Z20-Z22.
#define KVB_SUM4 \
	VPADDD        Z21, Z20, Z20; \
	VPADDD        Z23, Z22, Z22; \
	VPADDD        Z22, Z20, Z20; \
	VEXTRACTI64X4 $1, Z20, Y21; \
	VPADDD        Y21, Y20, Y6

// KV_Q2K_HALF(H, A, B, I0, I1): elements 128H..128H+127 of the q2_K block
// at SI: A = chunks 0, 1 (codes (qs >> 0, 2) & 3), B = chunks 2, 3
// ((qs >> 4, 6) & 3), VPDPBUSD lanes times their scales (Z18: the 16
// scale codes as dwords; I0, I1 = gvk6idxb's chunks 2H, 2H+1). Z14 = 0x03
// bytes, Z16 = gvkshr02b, Z17 = gvkshr46. Clobbers Z24-Z26.
#define KV_Q2K_HALF(H, A, B, I0, I1) \
	VBROADCASTI64X4 16+32*H(SI), Z24; \
	VPSRLVW         Z16, Z24, Z25; \
	VPANDD          Z14, Z25, Z25; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+128*H(DI), Z25, A; \
	VPERMD          Z18, I0, Z26; \
	VPMULLD         Z26, A, A; \
	VPSRLVW         Z17, Z24, Z25; \
	VPANDD          Z14, Z25, Z25; \
	VPXORD          B, B, B; \
	VPDPBUSD        68+128*H(DI), Z25, B; \
	VPERMD          Z18, I1, Z26; \
	VPMULLD         Z26, B, B

// KV_Q2K_ROW(H): K2_Q2K_ROW with VPDPBUSD: H = VPHADDD(scaled-product
// lanes, min-term lanes) of the q2_K block at SI. Clobbers Y1-Y3, Y6,
// Z18, Z20-Z26.
#define KV_Q2K_ROW(H) \
	VMOVDQU   (SI), X1; \
	VPAND     X15, X1, X2; \
	VPSRLW    $4, X1, X3; \
	VPAND     X15, X3, X3; \
	VPMOVZXBW X3, Y3; \
	VPMADDWD  260(DI), Y3, Y3; \
	VPMOVZXBD X2, Z18; \
	KV_Q2K_HALF(0, Z20, Z21, Z28, Z29); \
	KV_Q2K_HALF(1, Z22, Z23, Z30, Z31); \
	KVB_SUM4; \
	VPHADDD   Y3, Y6, H

// KV_Q3K_HALF(H, HB0, S0, HB1, S1, A, B, I0, I1): KV_Q2K_HALF for the
// q3_K block at SI (low bits from qs at 32+32H) with the high bits of
// Z13 (the hmask bytes in both halves, the high half shifted right one
// bit per word) moved to bit 2 in Z26 by HB0 by S0 (chunks 0, 1) and HB1
// by S1 (chunks 2, 3), each one of ZBITS_SLL, ZBITS_SRL and ZBITS_AND. Z8 = 0x04 bytes; Z18: the 16 scales less 32 as dwords.
#define KV_Q3K_HALF(H, HB0, S0, HB1, S1, A, B, I0, I1) \
	VBROADCASTI64X4 32+32*H(SI), Z24; \
	VPSRLVW         Z16, Z24, Z25; \
	VPANDD          Z14, Z25, Z25; \
	HB0(S0, Z13, Z8, Z26); \
	VPORD           Z26, Z25, Z25; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+128*H(DI), Z25, A; \
	VPERMD          Z18, I0, Z26; \
	VPMULLD         Z26, A, A; \
	VPSRLVW         Z17, Z24, Z25; \
	VPANDD          Z14, Z25, Z25; \
	HB1(S1, Z13, Z8, Z26); \
	VPORD           Z26, Z25, Z25; \
	VPXORD          B, B, B; \
	VPDPBUSD        68+128*H(DI), Z25, B; \
	VPERMD          Z18, I1, Z26; \
	VPMULLD         Z26, B, B

// KV_Q3K_ROWS: K2_Q3K_ROWS with VPDPBUSD: X6 = the fold of the q3_K
// block at SI's scaled-product and offset lanes, the scale codes in X1.
// Z19 = gvkshr1b. Clobbers Y2, Y3, Y6, Y7, Z13, Z18, Z20-Z26.
#define KV_Q3K_ROWS \
	VPMOVZXBW       X1, Y2; \
	VPSUBW          Y15, Y2, Y2; \
	VPMADDWD        260(DI), Y2, Y3; \
	VPMOVSXWD       Y2, Z18; \
	VBROADCASTI64X4 (SI), Z13; \
	VPSRLVW         Z19, Z13, Z13; \
	KV_Q3K_HALF(0, ZBITS_SLL, 2, ZBITS_AND, 0, Z20, Z21, Z28, Z29); \
	KV_Q3K_HALF(1, ZBITS_SRL, 2, ZBITS_SRL, 4, Z22, Z23, Z30, Z31); \
	KVB_SUM4; \
	K2_GV_FOLD(Y3)

// KV_Q3SCALES2: Y1 = the sixteen scale codes of the q3_K block at SI (low
// half) and of the one at SI + R11 (high half). Clobbers Y2.
#define KV_Q3SCALES2 \
	VMOVDQU     94(SI), X1; \
	VINSERTI128 $1, 94(SI)(R11*1), Y1, Y1; \
	VPSHUFB     gvq3lo<>(SB), Y1, Y2; \
	VPSRLVD     gvq3slo<>(SB), Y2, Y2; \
	VPAND       gvm0f<>(SB), Y2, Y2; \
	VPSHUFB     gvq3hi<>(SB), Y1, Y1; \
	VPSRLVD     gvq3shi<>(SB), Y1, Y1; \
	VPSLLD      $4, Y1, Y1; \
	VPAND       gvm30<>(SB), Y1, Y1; \
	VPOR        Y2, Y1, Y1

#define KV_Q3K_FN2(LOOP, DONE, PF) \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R11; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	LEAQ (R11)(R11*2), R12; \
	VPBROADCASTQ gvk03<>(SB), Z14; \
	VPBROADCASTQ gvk04<>(SB), Z8; \
	VPBROADCASTQ gvk32w<>(SB), Y15; \
	VMOVDQU64 gvkshr02b<>(SB), Z16; \
	VMOVDQU64 gvkshr46<>(SB), Z17; \
	VMOVDQU64 gvkshr1b<>(SB), Z19; \
	VMOVDQU64 gvk6idxb<>+0(SB), Z28; \
	VMOVDQU64 gvk6idxb<>+64(SB), Z29; \
	VMOVDQU64 gvk6idxb<>+128(SB), Z30; \
	VMOVDQU64 gvk6idxb<>+192(SB), Z31; \
	VXORPS X9, X9, X9; \
	TESTQ CX, CX; \
	JEQ DONE; \
LOOP: \
	PF; \
	KV_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	KV_Q3K_ROWS; \
	VMOVDQA X6, X0; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	KV_Q3K_ROWS; \
	VINSERTI128 $1, X6, Y0, Y0; \
	ADDQ R11, SI; \
	PF; \
	KV_Q3SCALES2; \
	VMOVDQU Y1, scl-32(SP); \
	KV_Q3K_ROWS; \
	VMOVDQA X6, X12; \
	ADDQ R11, SI; \
	PF; \
	VMOVDQU scl-16(SP), X1; \
	KV_Q3K_ROWS; \
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

// func q2_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q2_Kx4AVX2 with KV_Q2K_ROW (twin: the q2_K dot product; equal to
// q2_Kx4AVX2 bit for bit).
TEXT ·q2_Kx4VNNI(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R11
	MOVQ         y+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         out+32(FP), DX
	LEAQ         (R11)(R11*2), R12
	VPBROADCASTQ ·gv2knib(SB), Y15
	VPBROADCASTQ gvk03<>(SB), Z14
	VMOVDQU64    gvkshr02b<>(SB), Z16
	VMOVDQU64    gvkshr46<>(SB), Z17
	VMOVDQU64    gvk6idxb<>+0(SB), Z28
	VMOVDQU64    gvk6idxb<>+64(SB), Z29
	VMOVDQU64    gvk6idxb<>+128(SB), Z30
	VMOVDQU64    gvk6idxb<>+192(SB), Z31
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          gvq2kdone

gvq2kloop:
	K2_PFN2
	KV_Q2K_ROW(Y0)
	ADDQ R11, SI
	K2_PFN2
	KV_Q2K_ROW(Y5)
	ADDQ R11, SI
	K2_PFN2
	KV_Q2K_ROW(Y8)
	ADDQ R11, SI
	K2_PFN2
	KV_Q2K_ROW(Y9)
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
	JNE          gvq2kloop

gvq2kdone:
	VMOVUPS X12, (DX)
	VZEROUPPER
	RET

// func q3_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q3_Kx4AVX2 with KV_Q3K_ROWS (twin: the q3_K dot product; equal to
// q3_Kx4AVX2 bit for bit).
TEXT ·q3_Kx4VNNI(SB), NOSPLIT, $32-40
	KV_Q3K_FN2(gvq3kloop, gvq3kdone, K2_PFN2)
