//go:build amd64 && !purego

#include "textflag.h"
#include "dotk_amd64.h"

// The vnni tier's q4_K, q5_K and q6_K dot products: dotk_amd64.s's with
// each 32-element chunk's codes times activations summed by VPDPBUSD on
// zmm registers (two chunks a register), weighted by the chunks' scales
// with VPMULLD, as internal/gemv's gemv_k_vnni_amd64.s does for the
// four-row kernels. The AVX2 kernels' word sums never saturate (a pair
// of q6_K codes times activations is at most 2*63*128), the integer sums
// per super-block are exact in both (far below 2^31), and the min /
// bsum terms and the float32 step (KFLOAT_MIN, KFLOAT) are the AVX2
// kernels', so each equals the AVX2 dot product and the generic function
// bit for bit. AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

// dotk_amd64.s's macros (per file) with a KD prefix.

// KDHSUMD leaves the sum of Y's eight int32 lanes in the low lane of X (the
// low half of Y). T is a scratch register.
#define KDHSUMD(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4e, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xb1, X, T; \
	VPADDD T, X, X

// KDSCALE_VECS: from X1 (KSCALES), Y3 = the eight scale words in both
// lanes, Y4 = the min term's int32 lanes m_j*(bsum 2j + bsum 2j+1).
#define KDSCALE_VECS \
	VPMOVZXBW X1, Y2; \
	VPERMQ $0x44, Y2, Y3; \
	VEXTRACTI128 $1, Y2, X4; \
	VPMOVZXWD X4, Y4; \
	VPSLLD $16, Y4, Y5; \
	VPOR Y5, Y4, Y4; \
	VPMADDWD 260(DI), Y4, Y4

// KDFLOAT_MIN: X12 += (d*yd)*float(AX) - (dmin*yd)*float(BX), with d, dmin
// the f16 pair at DOFF(SI) and yd the float32 at (DI).
#define KDFLOAT_MIN(DOFF) \
	VMOVD DOFF(SI), X7; \
	VCVTPH2PS X7, X7; \
	VBROADCASTSS (DI), X8; \
	VMULPS X8, X7, X7; \
	VCVTSI2SSL AX, X9, X9; \
	VCVTSI2SSL BX, X10, X10; \
	VMULSS X9, X7, X9; \
	VMOVSHDUP X7, X11; \
	VMULSS X10, X11, X10; \
	VSUBSS X10, X9, X9; \
	VADDSS X9, X12, X12

// KDFLOAT: X12 += (d*yd)*float(AX), d the f16 at DOFF(SI).
#define KDFLOAT(DOFF) \
	MOVWLZX DOFF(SI), DX; \
	VMOVD DX, X7; \
	VCVTPH2PS X7, X7; \
	VMULSS (DI), X7, X7; \
	VCVTSI2SSL AX, X9, X9; \
	VMULSS X9, X7, X9; \
	VADDSS X9, X12, X12

// kdvpidx: VPERMD indexes, 64 bytes for each pair JJ (0..3): dword 2JJ
// in lanes 0-7, 2JJ+1 in lanes 8-15 (a q4_K/q5_K sub-block pair's
// scales from the row's codes as dwords). kdv6idx: for each q6_K chunk
// k (0..3), dword 4k+i in lanes 4i..4i+3. kdvshr4, kdvshr1, kdvshl42,
// kdvshr02: word shift counts (low half, high half) = (0, 4), (0, 1),
// (4, 2), (0, 2).
DATA kdvpidx<>+0(SB)/8, $0x0000000000000000
DATA kdvpidx<>+8(SB)/8, $0x0000000000000000
DATA kdvpidx<>+16(SB)/8, $0x0000000000000000
DATA kdvpidx<>+24(SB)/8, $0x0000000000000000
DATA kdvpidx<>+32(SB)/8, $0x0000000100000001
DATA kdvpidx<>+40(SB)/8, $0x0000000100000001
DATA kdvpidx<>+48(SB)/8, $0x0000000100000001
DATA kdvpidx<>+56(SB)/8, $0x0000000100000001
DATA kdvpidx<>+64(SB)/8, $0x0000000200000002
DATA kdvpidx<>+72(SB)/8, $0x0000000200000002
DATA kdvpidx<>+80(SB)/8, $0x0000000200000002
DATA kdvpidx<>+88(SB)/8, $0x0000000200000002
DATA kdvpidx<>+96(SB)/8, $0x0000000300000003
DATA kdvpidx<>+104(SB)/8, $0x0000000300000003
DATA kdvpidx<>+112(SB)/8, $0x0000000300000003
DATA kdvpidx<>+120(SB)/8, $0x0000000300000003
DATA kdvpidx<>+128(SB)/8, $0x0000000400000004
DATA kdvpidx<>+136(SB)/8, $0x0000000400000004
DATA kdvpidx<>+144(SB)/8, $0x0000000400000004
DATA kdvpidx<>+152(SB)/8, $0x0000000400000004
DATA kdvpidx<>+160(SB)/8, $0x0000000500000005
DATA kdvpidx<>+168(SB)/8, $0x0000000500000005
DATA kdvpidx<>+176(SB)/8, $0x0000000500000005
DATA kdvpidx<>+184(SB)/8, $0x0000000500000005
DATA kdvpidx<>+192(SB)/8, $0x0000000600000006
DATA kdvpidx<>+200(SB)/8, $0x0000000600000006
DATA kdvpidx<>+208(SB)/8, $0x0000000600000006
DATA kdvpidx<>+216(SB)/8, $0x0000000600000006
DATA kdvpidx<>+224(SB)/8, $0x0000000700000007
DATA kdvpidx<>+232(SB)/8, $0x0000000700000007
DATA kdvpidx<>+240(SB)/8, $0x0000000700000007
DATA kdvpidx<>+248(SB)/8, $0x0000000700000007
GLOBL kdvpidx<>(SB), RODATA|NOPTR, $256

DATA kdv6idx<>+0(SB)/8, $0x0000000000000000
DATA kdv6idx<>+8(SB)/8, $0x0000000000000000
DATA kdv6idx<>+16(SB)/8, $0x0000000100000001
DATA kdv6idx<>+24(SB)/8, $0x0000000100000001
DATA kdv6idx<>+32(SB)/8, $0x0000000200000002
DATA kdv6idx<>+40(SB)/8, $0x0000000200000002
DATA kdv6idx<>+48(SB)/8, $0x0000000300000003
DATA kdv6idx<>+56(SB)/8, $0x0000000300000003
DATA kdv6idx<>+64(SB)/8, $0x0000000400000004
DATA kdv6idx<>+72(SB)/8, $0x0000000400000004
DATA kdv6idx<>+80(SB)/8, $0x0000000500000005
DATA kdv6idx<>+88(SB)/8, $0x0000000500000005
DATA kdv6idx<>+96(SB)/8, $0x0000000600000006
DATA kdv6idx<>+104(SB)/8, $0x0000000600000006
DATA kdv6idx<>+112(SB)/8, $0x0000000700000007
DATA kdv6idx<>+120(SB)/8, $0x0000000700000007
DATA kdv6idx<>+128(SB)/8, $0x0000000800000008
DATA kdv6idx<>+136(SB)/8, $0x0000000800000008
DATA kdv6idx<>+144(SB)/8, $0x0000000900000009
DATA kdv6idx<>+152(SB)/8, $0x0000000900000009
DATA kdv6idx<>+160(SB)/8, $0x0000000a0000000a
DATA kdv6idx<>+168(SB)/8, $0x0000000a0000000a
DATA kdv6idx<>+176(SB)/8, $0x0000000b0000000b
DATA kdv6idx<>+184(SB)/8, $0x0000000b0000000b
DATA kdv6idx<>+192(SB)/8, $0x0000000c0000000c
DATA kdv6idx<>+200(SB)/8, $0x0000000c0000000c
DATA kdv6idx<>+208(SB)/8, $0x0000000d0000000d
DATA kdv6idx<>+216(SB)/8, $0x0000000d0000000d
DATA kdv6idx<>+224(SB)/8, $0x0000000e0000000e
DATA kdv6idx<>+232(SB)/8, $0x0000000e0000000e
DATA kdv6idx<>+240(SB)/8, $0x0000000f0000000f
DATA kdv6idx<>+248(SB)/8, $0x0000000f0000000f
GLOBL kdv6idx<>(SB), RODATA|NOPTR, $256

DATA kdvshr4<>+0(SB)/8, $0x0000000000000000
DATA kdvshr4<>+8(SB)/8, $0x0000000000000000
DATA kdvshr4<>+16(SB)/8, $0x0000000000000000
DATA kdvshr4<>+24(SB)/8, $0x0000000000000000
DATA kdvshr4<>+32(SB)/8, $0x0004000400040004
DATA kdvshr4<>+40(SB)/8, $0x0004000400040004
DATA kdvshr4<>+48(SB)/8, $0x0004000400040004
DATA kdvshr4<>+56(SB)/8, $0x0004000400040004
GLOBL kdvshr4<>(SB), RODATA|NOPTR, $64

DATA kdvshr1<>+0(SB)/8, $0x0000000000000000
DATA kdvshr1<>+8(SB)/8, $0x0000000000000000
DATA kdvshr1<>+16(SB)/8, $0x0000000000000000
DATA kdvshr1<>+24(SB)/8, $0x0000000000000000
DATA kdvshr1<>+32(SB)/8, $0x0001000100010001
DATA kdvshr1<>+40(SB)/8, $0x0001000100010001
DATA kdvshr1<>+48(SB)/8, $0x0001000100010001
DATA kdvshr1<>+56(SB)/8, $0x0001000100010001
GLOBL kdvshr1<>(SB), RODATA|NOPTR, $64

DATA kdvshl42<>+0(SB)/8, $0x0004000400040004
DATA kdvshl42<>+8(SB)/8, $0x0004000400040004
DATA kdvshl42<>+16(SB)/8, $0x0004000400040004
DATA kdvshl42<>+24(SB)/8, $0x0004000400040004
DATA kdvshl42<>+32(SB)/8, $0x0002000200020002
DATA kdvshl42<>+40(SB)/8, $0x0002000200020002
DATA kdvshl42<>+48(SB)/8, $0x0002000200020002
DATA kdvshl42<>+56(SB)/8, $0x0002000200020002
GLOBL kdvshl42<>(SB), RODATA|NOPTR, $64

DATA kdvshr02<>+0(SB)/8, $0x0000000000000000
DATA kdvshr02<>+8(SB)/8, $0x0000000000000000
DATA kdvshr02<>+16(SB)/8, $0x0000000000000000
DATA kdvshr02<>+24(SB)/8, $0x0000000000000000
DATA kdvshr02<>+32(SB)/8, $0x0002000200020002
DATA kdvshr02<>+40(SB)/8, $0x0002000200020002
DATA kdvshr02<>+48(SB)/8, $0x0002000200020002
DATA kdvshr02<>+56(SB)/8, $0x0002000200020002
GLOBL kdvshr02<>(SB), RODATA|NOPTR, $64


// KD_SUM4: Y6 = the sum of Z20-Z23's lanes folded to 8 (exact integers).
// Clobbers Z20-Z22.
#define KD_SUM4 \
	VPADDD        Z21, Z20, Z20; \
	VPADDD        Z23, Z22, Z22; \
	VPADDD        Z22, Z20, Z20; \
	VEXTRACTI64X4 $1, Z20, Y21; \
	VPADDD        Y21, Y20, Y6

// KD_Q4K_PAIR(JJ, I, A): A = the products of sub-blocks 2JJ (low
// nibbles, lanes 0-7) and 2JJ+1 (high nibbles, lanes 8-15) with their
// activations, each dword times its sub-block's scale (Z18: the codes
// as dwords; I: kdvpidx's pair JJ). Z15 = 0x0f bytes, Z17 = kdvshr4.
// Clobbers Z19, Z24.
#define KD_Q4K_PAIR(JJ, I, A) \
	VBROADCASTI64X4 16+32*JJ(SI), Z19; \
	VPSRLVW         Z17, Z19, Z19; \
	VPANDD          Z15, Z19, Z19; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+64*JJ(DI), Z19, A; \
	VPERMD          Z18, I, Z24; \
	VPMULLD         Z24, A, A

// KD_Q5K_PAIR(JJ, HB, S, I, A): KD_Q4K_PAIR for q5_K with the fifth bits
// of Z13 (the qh bytes in both halves, the high half shifted right one
// bit per word) moved to bit 4 in Z25 by HB by S (ZBITS_SLL, ZBITS_SRL,
// ZBITS_AND). Z14 = 0x10 bytes. Clobbers Z19, Z24, Z25.
#define KD_Q5K_PAIR(JJ, HB, S, I, A) \
	VBROADCASTI64X4 48+32*JJ(SI), Z19; \
	VPSRLVW         Z17, Z19, Z19; \
	VPANDD          Z15, Z19, Z19; \
	HB(S, Z13, Z14, Z25); \
	VPORD           Z25, Z19, Z19; \
	VPXORD          A, A, A; \
	VPDPBUSD        4+64*JJ(DI), Z19, A; \
	VPERMD          Z18, I, Z24; \
	VPMULLD         Z24, A, A

// KD_Q6K_HALF(H, A, B, I0, I1): the 128 elements of half H as two zmm
// chunks, each dword times the scale of its 16 elements (Z18: the 16
// scales as dwords; I0, I1: kdv6idx's chunks 2H, 2H+1). Z15 = 0x0f, Z14
// = 0x30 bytes, Z16 = kdvshl42, Z17 = kdvshr02. Clobbers Z19, Z24-Z27.
#define KD_Q6K_HALF(H, A, B, I0, I1) \
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

// KD_PIDX: Z28-Z31 = kdvpidx.
#define KD_PIDX \
	VMOVDQU64 kdvpidx<>+0(SB), Z28; \
	VMOVDQU64 kdvpidx<>+64(SB), Z29; \
	VMOVDQU64 kdvpidx<>+128(SB), Z30; \
	VMOVDQU64 kdvpidx<>+192(SB), Z31

// func dotQ4_KQ8_KVNNI(x, y *byte, nb int) float32
TEXT ·dotQ4_KQ8_KVNNI(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Z15
	VMOVDQU64    kdvshr4<>(SB), Z17
	KD_PIDX
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          kdq4kdone

kdq4kloop:
	KSCALES
	KDSCALE_VECS
	VPMOVZXBD X1, Z18
	KD_Q4K_PAIR(0, Z28, Z20)
	KD_Q4K_PAIR(1, Z29, Z21)
	KD_Q4K_PAIR(2, Z30, Z22)
	KD_Q4K_PAIR(3, Z31, Z23)
	KD_SUM4
	KDHSUMD(Y6, X6, X7)
	VMOVD     X6, AX
	KDHSUMD(Y4, X4, X7)
	VMOVD     X4, BX
	KDFLOAT_MIN(0)
	ADDQ      $144, SI
	ADDQ      $292, DI
	DECQ      CX
	JNE       kdq4kloop

kdq4kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ5_KQ8_KVNNI(x, y *byte, nb int) float32
TEXT ·dotQ5_KQ8_KVNNI(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Z15
	VPBROADCASTQ ·k10(SB), Z14
	VMOVDQU64    kdvshr4<>(SB), Z17
	VMOVDQU64    kdvshr1<>(SB), Z16
	KD_PIDX
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          kdq5kdone

kdq5kloop:
	KSCALES
	KDSCALE_VECS
	VPMOVZXBD       X1, Z18
	VBROADCASTI64X4 16(SI), Z13
	VPSRLVW         Z16, Z13, Z13
	KD_Q5K_PAIR(0, ZBITS_SLL, 4, Z28, Z20)
	KD_Q5K_PAIR(1, ZBITS_SLL, 2, Z29, Z21)
	KD_Q5K_PAIR(2, ZBITS_AND, 0, Z30, Z22)
	KD_Q5K_PAIR(3, ZBITS_SRL, 2, Z31, Z23)
	KD_SUM4
	KDHSUMD(Y6, X6, X7)
	VMOVD   X6, AX
	KDHSUMD(Y4, X4, X7)
	VMOVD   X4, BX
	KDFLOAT_MIN(0)
	ADDQ    $176, SI
	ADDQ    $292, DI
	DECQ    CX
	JNE     kdq5kloop

kdq5kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET

// func dotQ6_KQ8_KVNNI(x, y *byte, nb int) float32
TEXT ·dotQ6_KQ8_KVNNI(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTQ ·knib(SB), Z15
	VPBROADCASTQ ·k30(SB), Z14
	VMOVDQU64    kdvshl42<>(SB), Z16
	VMOVDQU64    kdvshr02<>(SB), Z17
	VMOVDQU64    kdv6idx<>+0(SB), Z28
	VMOVDQU64    kdv6idx<>+64(SB), Z29
	VMOVDQU64    kdv6idx<>+128(SB), Z30
	VMOVDQU64    kdv6idx<>+192(SB), Z31
	VXORPS       X12, X12, X12
	TESTQ        CX, CX
	JEQ          kdq6kdone

kdq6kloop:
	VPMOVSXBW 192(SI), Y2
	VPMADDWD  260(DI), Y2, Y3
	VPMOVSXBD 192(SI), Z18
	KD_Q6K_HALF(0, Z20, Z21, Z28, Z29)
	KD_Q6K_HALF(1, Z22, Z23, Z30, Z31)
	KD_SUM4
	KDHSUMD(Y6, X6, X7)
	VMOVD     X6, AX
	KDHSUMD(Y3, X3, X7)
	VMOVD     X3, BX
	SHLL      $5, BX
	SUBL      BX, AX
	KDFLOAT(208)
	ADDQ      $210, SI
	ADDQ      $292, DI
	DECQ      CX
	JNE       kdq6kloop

kdq6kdone:
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET
