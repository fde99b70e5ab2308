//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_k_amd64.h"

// The vnni tier's K-format four-row kernels (q4_K, q5_K, q6_K): the AVX2
// ones (gemv_k_amd64.s) with each row's codes times activations summed
// by VPDPBUSD into int32 lanes on zmm registers, two 32-element chunks a
// register, then weighted by the chunks' scales with VPMULLD, in place
// of VPMADDUBSW's word pairs weighted by VPMADDWD. The AVX2 kernels'
// word sums never saturate (a pair of q6_K codes times activations is at
// most 2*63*128), every row's integer sums per super-block are exact in
// both (far below 2^31), and the min / bsum terms, the four rows'
// reduction and the float32 step are the AVX2 kernels' own
// instructions, so every out[r] equals the AVX2 kernel (and the dot
// product) bit for bit. AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

DATA gvk10<>+0(SB)/8, $0x1010101010101010
GLOBL gvk10<>(SB), RODATA|NOPTR, $8

DATA gvk30<>+0(SB)/8, $0x3030303030303030
GLOBL gvk30<>(SB), RODATA|NOPTR, $8

DATA gvksh1<>+0(SB)/8, $0x0b0a090803020100
DATA gvksh1<>+8(SB)/8, $0x0b0a090807060504
DATA gvksh1<>+16(SB)/8, $0x0b0a090803020100
DATA gvksh1<>+24(SB)/8, $0x0b0a090807060504
GLOBL gvksh1<>(SB), RODATA|NOPTR, $32

DATA gvksh2<>+0(SB)/8, $0x0302010080808080
DATA gvksh2<>+8(SB)/8, $0x0706050480808080
DATA gvksh2<>+16(SB)/8, $0x0302010080808080
DATA gvksh2<>+24(SB)/8, $0x0706050480808080
GLOBL gvksh2<>(SB), RODATA|NOPTR, $32

DATA gvkm1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gvkm1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gvkm1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA gvkm1<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL gvkm1<>(SB), RODATA|NOPTR, $32

DATA gvkm3<>+0(SB)/8, $0x3030303000000000
DATA gvkm3<>+8(SB)/8, $0x3030303000000000
DATA gvkm3<>+16(SB)/8, $0x3030303000000000
DATA gvkm3<>+24(SB)/8, $0x3030303000000000
GLOBL gvkm3<>(SB), RODATA|NOPTR, $32

DATA gvkminpat<>+0(SB)/8, $0x8009800980088008
DATA gvkminpat<>+8(SB)/8, $0x800b800b800a800a
DATA gvkminpat<>+16(SB)/8, $0x800d800d800c800c
DATA gvkminpat<>+24(SB)/8, $0x800f800f800e800e
GLOBL gvkminpat<>(SB), RODATA|NOPTR, $32

// gvkpidx: VPERMD indexes, 64 bytes for each pair JJ (0..3): dword 2JJ
// in lanes 0-7, 2JJ+1 in lanes 8-15 (a q4_K/q5_K sub-block pair's
// scales from the row's codes as dwords). gvk6idx: for each q6_K chunk
// k (0..3), dword 4k+i in lanes 4i..4i+3. gvkshr4, gvkshr1, gvkshl42,
// gvkshr02: word shift counts (low half, high half) = (0, 4), (0, 1),
// (4, 2), (0, 2).
DATA gvkpidx<>+0(SB)/8, $0x0000000000000000
DATA gvkpidx<>+8(SB)/8, $0x0000000000000000
DATA gvkpidx<>+16(SB)/8, $0x0000000000000000
DATA gvkpidx<>+24(SB)/8, $0x0000000000000000
DATA gvkpidx<>+32(SB)/8, $0x0000000100000001
DATA gvkpidx<>+40(SB)/8, $0x0000000100000001
DATA gvkpidx<>+48(SB)/8, $0x0000000100000001
DATA gvkpidx<>+56(SB)/8, $0x0000000100000001
DATA gvkpidx<>+64(SB)/8, $0x0000000200000002
DATA gvkpidx<>+72(SB)/8, $0x0000000200000002
DATA gvkpidx<>+80(SB)/8, $0x0000000200000002
DATA gvkpidx<>+88(SB)/8, $0x0000000200000002
DATA gvkpidx<>+96(SB)/8, $0x0000000300000003
DATA gvkpidx<>+104(SB)/8, $0x0000000300000003
DATA gvkpidx<>+112(SB)/8, $0x0000000300000003
DATA gvkpidx<>+120(SB)/8, $0x0000000300000003
DATA gvkpidx<>+128(SB)/8, $0x0000000400000004
DATA gvkpidx<>+136(SB)/8, $0x0000000400000004
DATA gvkpidx<>+144(SB)/8, $0x0000000400000004
DATA gvkpidx<>+152(SB)/8, $0x0000000400000004
DATA gvkpidx<>+160(SB)/8, $0x0000000500000005
DATA gvkpidx<>+168(SB)/8, $0x0000000500000005
DATA gvkpidx<>+176(SB)/8, $0x0000000500000005
DATA gvkpidx<>+184(SB)/8, $0x0000000500000005
DATA gvkpidx<>+192(SB)/8, $0x0000000600000006
DATA gvkpidx<>+200(SB)/8, $0x0000000600000006
DATA gvkpidx<>+208(SB)/8, $0x0000000600000006
DATA gvkpidx<>+216(SB)/8, $0x0000000600000006
DATA gvkpidx<>+224(SB)/8, $0x0000000700000007
DATA gvkpidx<>+232(SB)/8, $0x0000000700000007
DATA gvkpidx<>+240(SB)/8, $0x0000000700000007
DATA gvkpidx<>+248(SB)/8, $0x0000000700000007
GLOBL gvkpidx<>(SB), RODATA|NOPTR, $256

DATA gvk6idx<>+0(SB)/8, $0x0000000000000000
DATA gvk6idx<>+8(SB)/8, $0x0000000000000000
DATA gvk6idx<>+16(SB)/8, $0x0000000100000001
DATA gvk6idx<>+24(SB)/8, $0x0000000100000001
DATA gvk6idx<>+32(SB)/8, $0x0000000200000002
DATA gvk6idx<>+40(SB)/8, $0x0000000200000002
DATA gvk6idx<>+48(SB)/8, $0x0000000300000003
DATA gvk6idx<>+56(SB)/8, $0x0000000300000003
DATA gvk6idx<>+64(SB)/8, $0x0000000400000004
DATA gvk6idx<>+72(SB)/8, $0x0000000400000004
DATA gvk6idx<>+80(SB)/8, $0x0000000500000005
DATA gvk6idx<>+88(SB)/8, $0x0000000500000005
DATA gvk6idx<>+96(SB)/8, $0x0000000600000006
DATA gvk6idx<>+104(SB)/8, $0x0000000600000006
DATA gvk6idx<>+112(SB)/8, $0x0000000700000007
DATA gvk6idx<>+120(SB)/8, $0x0000000700000007
DATA gvk6idx<>+128(SB)/8, $0x0000000800000008
DATA gvk6idx<>+136(SB)/8, $0x0000000800000008
DATA gvk6idx<>+144(SB)/8, $0x0000000900000009
DATA gvk6idx<>+152(SB)/8, $0x0000000900000009
DATA gvk6idx<>+160(SB)/8, $0x0000000a0000000a
DATA gvk6idx<>+168(SB)/8, $0x0000000a0000000a
DATA gvk6idx<>+176(SB)/8, $0x0000000b0000000b
DATA gvk6idx<>+184(SB)/8, $0x0000000b0000000b
DATA gvk6idx<>+192(SB)/8, $0x0000000c0000000c
DATA gvk6idx<>+200(SB)/8, $0x0000000c0000000c
DATA gvk6idx<>+208(SB)/8, $0x0000000d0000000d
DATA gvk6idx<>+216(SB)/8, $0x0000000d0000000d
DATA gvk6idx<>+224(SB)/8, $0x0000000e0000000e
DATA gvk6idx<>+232(SB)/8, $0x0000000e0000000e
DATA gvk6idx<>+240(SB)/8, $0x0000000f0000000f
DATA gvk6idx<>+248(SB)/8, $0x0000000f0000000f
GLOBL gvk6idx<>(SB), RODATA|NOPTR, $256

DATA gvkshr4<>+0(SB)/8, $0x0000000000000000
DATA gvkshr4<>+8(SB)/8, $0x0000000000000000
DATA gvkshr4<>+16(SB)/8, $0x0000000000000000
DATA gvkshr4<>+24(SB)/8, $0x0000000000000000
DATA gvkshr4<>+32(SB)/8, $0x0004000400040004
DATA gvkshr4<>+40(SB)/8, $0x0004000400040004
DATA gvkshr4<>+48(SB)/8, $0x0004000400040004
DATA gvkshr4<>+56(SB)/8, $0x0004000400040004
GLOBL gvkshr4<>(SB), RODATA|NOPTR, $64

DATA gvkshr1<>+0(SB)/8, $0x0000000000000000
DATA gvkshr1<>+8(SB)/8, $0x0000000000000000
DATA gvkshr1<>+16(SB)/8, $0x0000000000000000
DATA gvkshr1<>+24(SB)/8, $0x0000000000000000
DATA gvkshr1<>+32(SB)/8, $0x0001000100010001
DATA gvkshr1<>+40(SB)/8, $0x0001000100010001
DATA gvkshr1<>+48(SB)/8, $0x0001000100010001
DATA gvkshr1<>+56(SB)/8, $0x0001000100010001
GLOBL gvkshr1<>(SB), RODATA|NOPTR, $64

DATA gvkshl42<>+0(SB)/8, $0x0004000400040004
DATA gvkshl42<>+8(SB)/8, $0x0004000400040004
DATA gvkshl42<>+16(SB)/8, $0x0004000400040004
DATA gvkshl42<>+24(SB)/8, $0x0004000400040004
DATA gvkshl42<>+32(SB)/8, $0x0002000200020002
DATA gvkshl42<>+40(SB)/8, $0x0002000200020002
DATA gvkshl42<>+48(SB)/8, $0x0002000200020002
DATA gvkshl42<>+56(SB)/8, $0x0002000200020002
GLOBL gvkshl42<>(SB), RODATA|NOPTR, $64

DATA gvkshr02<>+0(SB)/8, $0x0000000000000000
DATA gvkshr02<>+8(SB)/8, $0x0000000000000000
DATA gvkshr02<>+16(SB)/8, $0x0000000000000000
DATA gvkshr02<>+24(SB)/8, $0x0000000000000000
DATA gvkshr02<>+32(SB)/8, $0x0002000200020002
DATA gvkshr02<>+40(SB)/8, $0x0002000200020002
DATA gvkshr02<>+48(SB)/8, $0x0002000200020002
DATA gvkshr02<>+56(SB)/8, $0x0002000200020002
GLOBL gvkshr02<>(SB), RODATA|NOPTR, $64

// KV_KSCALES2: K2_KSCALES2 (gemv_k_amd64.s): Y12 = the scale codes of the
// q4_K/q5_K block at SI (low half) and at SI + R11 (high half).
// Clobbers Y1, Y2.
#define KV_KSCALES2 \
	VMOVDQU      4(SI), X12; \
	VINSERTI128  $1, 4(SI)(R11*1), Y12, Y12; \
	VPSHUFB      gvksh1<>(SB), Y12, Y1; \
	VPSHUFB      gvksh2<>(SB), Y12, Y12; \
	VPSRLW       $4, Y1, Y2; \
	VPBLENDD     $0x88, Y2, Y1, Y1; \
	VPAND        gvkm1<>(SB), Y1, Y1; \
	VPSRLW       $2, Y12, Y12; \
	VPAND        gvkm3<>(SB), Y12, Y12; \
	VPOR         Y1, Y12, Y12

// KV_SUM4: Y6 = the sum of Z20-Z23's 16 dword lanes folded to 8 (exact
// integers). Clobbers Z20-Z22.
#define KV_SUM4 \
	VPADDD        Z21, Z20, Z20; \
	VPADDD        Z23, Z22, Z22; \
	VPADDD        Z22, Z20, Z20; \
	VEXTRACTI64X4 $1, Z20, Y21; \
	VPADDD        Y21, Y20, Y6

// KV_Q4K_PAIR(JJ, I, A): A = the products of sub-blocks 2JJ (low
// nibbles, lanes 0-7) and 2JJ+1 (high nibbles, lanes 8-15) with their
// activations, each dword times its sub-block's scale (Z18: the row's
// codes as dwords; I: gvkpidx's pair JJ). Z15 = 0x0f bytes, Z17 =
// gvkshr4. Clobbers Z19, Z24.
#define KV_Q4K_PAIR(JJ, I, A) \
	VBROADCASTI64X4 16+32*JJ(SI), Z19; \
	VPSRLVW         Z17, Z19, Z19; \
	VPANDD          Z15, Z19, Z19; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+64*JJ(DI), Z19, A; \
	VPERMD          Z18, I, Z24; \
	VPMULLD         Z24, A, A

// KV_Q4K_ROWS(H, PERM): K2B_Q4K_ROWS with VPDPBUSD: H = VPHADDD(scaled
// product lanes, min-term lanes) of the q4_K block at SI, for the row
// whose scale codes VPERMQ $PERM takes from Y12. Clobbers Y3, Y4, Y6,
// Z18-Z24.
#define KV_Q4K_ROWS(H, PERM) \
	VPERMQ    $PERM, Y12, Y3; \
	VPSHUFB   gvkminpat<>(SB), Y3, Y4; \
	VPMADDWD  260(DI), Y4, Y4; \
	VPMOVZXBD X3, Z18; \
	KV_Q4K_PAIR(0, Z28, Z20); \
	KV_Q4K_PAIR(1, Z29, Z21); \
	KV_Q4K_PAIR(2, Z30, Z22); \
	KV_Q4K_PAIR(3, Z31, Z23); \
	KV_SUM4; \
	VPHADDD   Y4, Y6, H

// KV_CONSTS: Z15 = 0x0f bytes, Z17 = gvkshr4, Z28-Z31 = gvkpidx.
#define KV_CONSTS \
	VPBROADCASTQ ·gv2knib(SB), Z15; \
	VMOVDQU64    gvkshr4<>(SB), Z17; \
	VMOVDQU64    gvkpidx<>+0(SB), Z28; \
	VMOVDQU64    gvkpidx<>+64(SB), Z29; \
	VMOVDQU64    gvkpidx<>+128(SB), Z30; \
	VMOVDQU64    gvkpidx<>+192(SB), Z31

// func q4_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q4_Kx4AVX2 with KV_Q4K_ROWS (twin: the q4_K dot product; equal to
// q4_Kx4AVX2 bit for bit).
TEXT ·q4_Kx4VNNI(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), R11
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (R11)(R11*2), R12
	KV_CONSTS
	VXORPS X14, X14, X14
	TESTQ CX, CX
	JEQ gvkq4kdone

gvkq4kloop:
	K2_PFN3
	KV_KSCALES2
	KV_Q4K_ROWS(Y0, 0x44)
	ADDQ R11, SI
	K2_PFN3
	KV_Q4K_ROWS(Y9, 0xee)
	ADDQ R11, SI
	K2_PFN3
	KV_KSCALES2
	KV_Q4K_ROWS(Y10, 0x44)
	ADDQ R11, SI
	K2_PFN3
	KV_Q4K_ROWS(Y13, 0xee)
	SUBQ R12, SI
	VPHADDD Y9, Y0, Y0
	VPHADDD Y13, Y10, Y10
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VEXTRACTI128 $1, Y10, X1
	VPADDD X1, X10, X10
	VSHUFPS $0x88, X10, X0, X2
	VSHUFPS $0xdd, X10, X0, X3
	VCVTDQ2PS X2, X2
	VCVTDQ2PS X3, X3
	VMOVD (SI), X4
	VPINSRD $1, (SI)(R11*1), X4, X4
	VPINSRD $2, (SI)(R11*2), X4, X4
	VPINSRD $3, (SI)(R12*1), X4, X4
	VCVTPH2PS X4, Y4
	VBROADCASTSS (DI), Y5
	VMULPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VSHUFPS $0x88, X5, X4, X6
	VSHUFPS $0xdd, X5, X4, X7
	VMULPS X2, X6, X6
	VMULPS X3, X7, X7
	VSUBPS X7, X6, X6
	VADDPS X6, X14, X14
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNE gvkq4kloop

gvkq4kdone:
	VMOVUPS X14, (DX)
	VZEROUPPER
	RET

// KV_Q5K_PAIR(JJ, HB, S, I, A): KV_Q4K_PAIR for q5_K: the fifth bits of
// Z13 (the row's 32 qh bytes in both halves, the high half shifted right
// one bit per word: bit 2JJ of each byte is then sub-block 2JJ's in the
// low half and 2JJ+1's in the high half) moved to bit 4 in Z25 by HB by
// S, one of ZBITS_SLL, ZBITS_SRL and ZBITS_AND.
// Z14 = 0x10 bytes. Clobbers Z19, Z24, Z25.
#define KV_Q5K_PAIR(JJ, HB, S, I, A) \
	VBROADCASTI64X4 48+32*JJ(SI), Z19; \
	VPSRLVW         Z17, Z19, Z19; \
	VPANDD          Z15, Z19, Z19; \
	HB(S, Z13, Z14, Z25); \
	VPORD           Z25, Z19, Z19; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+64*JJ(DI), Z19, A; \
	VPERMD          Z18, I, Z24; \
	VPMULLD         Z24, A, A

// KV_Q5K_ROWS: K2_Q5K_ROWS with VPDPBUSD: X6 = the fold (K2_GV_FOLD) of
// the q5_K block at SI's scaled-product and min-term lanes, the scale
// codes given in X1. Z16 = gvkshr1. Clobbers Y3, Y4, Y6, Y7, Z13,
// Z18-Z25.
#define KV_Q5K_ROWS \
	VPERMQ          $0x44, Y1, Y3; \
	VPSHUFB         gvkminpat<>(SB), Y3, Y4; \
	VPMADDWD        260(DI), Y4, Y4; \
	VPMOVZXBD       X1, Z18; \
	VBROADCASTI64X4 16(SI), Z13; \
	VPSRLVW         Z16, Z13, Z13; \
	KV_Q5K_PAIR(0, ZBITS_SLL, 4, Z28, Z20); \
	KV_Q5K_PAIR(1, ZBITS_SLL, 2, Z29, Z21); \
	KV_Q5K_PAIR(2, ZBITS_AND, 0, Z30, Z22); \
	KV_Q5K_PAIR(3, ZBITS_SRL, 2, Z31, Z23); \
	KV_SUM4; \
	K2_GV_FOLD(Y4)

// func q5_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q5_Kx4AVX2 with KV_Q5K_ROWS (twin: the q5_K dot product; equal to
// q5_Kx4AVX2 bit for bit).
TEXT ·q5_Kx4VNNI(SB), NOSPLIT, $48-40
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), R11
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (R11)(R11*2), R12
	KV_CONSTS
	VPBROADCASTQ gvk10<>(SB), Z14
	VMOVDQU64 gvkshr1<>(SB), Z16
	VXORPS X0, X0, X0
	VMOVUPS X0, acc-16(SP)
	TESTQ CX, CX
	JEQ gvkq5kdone

gvkq5kloop:
	K2_PFN3
	KV_KSCALES2
	VMOVDQU Y12, scl-48(SP)
	VMOVDQA X12, X1
	KV_Q5K_ROWS
	VMOVDQA X6, X0
	ADDQ R11, SI
	K2_PFN3
	VMOVDQU scl-32(SP), X1
	KV_Q5K_ROWS
	VINSERTI128 $1, X6, Y0, Y0
	ADDQ R11, SI
	K2_PFN3
	KV_KSCALES2
	VMOVDQU Y12, scl-48(SP)
	VMOVDQA X12, X1
	KV_Q5K_ROWS
	VMOVDQA X6, X12
	ADDQ R11, SI
	K2_PFN3
	VMOVDQU scl-32(SP), X1
	KV_Q5K_ROWS
	VINSERTI128 $1, X6, Y12, Y12
	SUBQ R12, SI
	K2_GV_COMBINE
	VCVTDQ2PS X4, X4
	VCVTDQ2PS X5, X5
	VMOVD (SI), X6
	VPINSRD $1, (SI)(R11*1), X6, X6
	VPINSRD $2, (SI)(R11*2), X6, X6
	VPINSRD $3, (SI)(R12*1), X6, X6
	VCVTPH2PS X6, Y6
	VBROADCASTSS (DI), Y7
	VMULPS Y7, Y6, Y6
	VEXTRACTF128 $1, Y6, X7
	VSHUFPS $0x88, X7, X6, X8
	VSHUFPS $0xdd, X7, X6, X9
	VMULPS X4, X8, X8
	VMULPS X5, X9, X9
	VSUBPS X9, X8, X8
	VADDPS acc-16(SP), X8, X8
	VMOVUPS X8, acc-16(SP)
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNE gvkq5kloop

gvkq5kdone:
	VMOVUPS acc-16(SP), X0
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// KV_Q6K_HALF(H, A, B, I0, I1): the 128 elements of half H as two zmm
// chunks (K2_Q6K_HALF's first two 32-element chunks in A, its last two in
// B), each dword of VPDPBUSD times the scale of its 16 elements (Z18: the
// row's 16 scales as dwords; I0, I1: gvk6idx's chunks 2H, 2H+1). Z15 =
// 0x0f bytes, Z14 = 0x30 bytes, Z16 = gvkshl42, Z17 = gvkshr02.
// Clobbers Z19, Z24-Z27.
#define KV_Q6K_HALF(H, A, B, I0, I1) \
	VMOVDQU64       64*H(SI), Z19; \
	VBROADCASTI64X4 128+32*H(SI), Z24; \
	VPSLLVW         Z16, Z24, Z26; \
	VPANDD          Z14, Z26, Z26; \
	VPANDD          Z15, Z19, Z27; \
	VPORD           Z26, Z27, Z27; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+128*H(DI), Z27, A; \
	VPERMD          Z18, I0, Z26; \
	VPMULLD         Z26, A, A; \
	VPSRLVW         Z17, Z24, Z24; \
	VPANDD          Z14, Z24, Z24; \
	VPSRLW          $4, Z19, Z19; \
	VPANDD          Z15, Z19, Z19; \
	VPORD           Z24, Z19, Z19; \
	VPXORD          B, B, B; \
	VPDPBUSD        68+128*H(DI), Z19, B; \
	VPERMD          Z18, I1, Z26; \
	VPMULLD         Z26, B, B

// KV_Q6K_ROW: K2_Q6K_ROW with VPDPBUSD: X6 = the fold of the q6_K block
// at SI's scaled-product and bsum lanes. Clobbers Y2, Y3, Y6, Y7,
// Z18-Z27.
#define KV_Q6K_ROW \
	VPMOVSXBW 192(SI), Y2; \
	VPMADDWD  260(DI), Y2, Y3; \
	VPMOVSXBD 192(SI), Z18; \
	KV_Q6K_HALF(0, Z20, Z21, Z28, Z29); \
	KV_Q6K_HALF(1, Z22, Z23, Z30, Z31); \
	KV_SUM4; \
	K2_GV_FOLD(Y3)

// KV_GV_ROWS(ROW): gemv_k_amd64.s's K2_GV_ROWS: the four rows' folds
// into Y0 and Y12, SI back at row 0.
#define KV_GV_ROWS(ROW) \
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

// func q6_Kx4VNNI(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// q6_Kx4AVX2 with KV_Q6K_ROW (twin: the q6_K dot product; equal to
// q6_Kx4AVX2 bit for bit).
TEXT ·q6_Kx4VNNI(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ ldx+8(FP), R11
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (R11)(R11*2), R12
	VPBROADCASTQ ·gv2knib(SB), Z15
	VPBROADCASTQ gvk30<>(SB), Z14
	VMOVDQU64 gvkshl42<>(SB), Z16
	VMOVDQU64 gvkshr02<>(SB), Z17
	VMOVDQU64 gvk6idx<>+0(SB), Z28
	VMOVDQU64 gvk6idx<>+64(SB), Z29
	VMOVDQU64 gvk6idx<>+128(SB), Z30
	VMOVDQU64 gvk6idx<>+192(SB), Z31
	VXORPS X13, X13, X13
	TESTQ CX, CX
	JEQ gvkq6kdone

gvkq6kloop:
	KV_GV_ROWS(K2_PFN4; KV_Q6K_ROW)
	K2_GV_COMBINE
	VPSLLD $5, X5, X5
	VPSUBD X5, X4, X4
	VCVTDQ2PS X4, X4
	MOVWLZX 208(SI), AX
	VMOVD AX, X6
	VPINSRW $1, 208(SI)(R11*1), X6, X6
	VPINSRW $2, 208(SI)(R11*2), X6, X6
	VPINSRW $3, 208(SI)(R12*1), X6, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS (DI), X7
	VMULPS X7, X6, X6
	VMULPS X4, X6, X6
	VADDPS X6, X13, X13
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNE gvkq6kloop

gvkq6kdone:
	VMOVUPS X13, (DX)
	VZEROUPPER
	RET
