//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 F kernels of SSM_CONV (see ssm.go): ssmConvAVX2 with tiles of
// 8 channels by 16 tokens, ssmConvGatherAVX2 on two tokens at a time,
// and ssmConv1AVX2 on two groups of 8 channels at a time. Every output is the generic loop's sum, (0 + x[t]*w0) +
// x[t+1]*w1 + ..., each product rounded, in the same order as the AVX2
// kernels: the zmm only holds more tokens (channels) side by side, so
// each is bit for bit the AVX2 kernel (twin: ssmConvRows).

DATA convlo<>+0(SB)/4, $0
DATA convlo<>+4(SB)/4, $1
DATA convlo<>+8(SB)/4, $2
DATA convlo<>+12(SB)/4, $3
DATA convlo<>+16(SB)/4, $16
DATA convlo<>+20(SB)/4, $17
DATA convlo<>+24(SB)/4, $18
DATA convlo<>+28(SB)/4, $19
DATA convlo<>+32(SB)/4, $8
DATA convlo<>+36(SB)/4, $9
DATA convlo<>+40(SB)/4, $10
DATA convlo<>+44(SB)/4, $11
DATA convlo<>+48(SB)/4, $24
DATA convlo<>+52(SB)/4, $25
DATA convlo<>+56(SB)/4, $26
DATA convlo<>+60(SB)/4, $27
GLOBL convlo<>(SB), RODATA|NOPTR, $64

DATA convhi<>+0(SB)/4, $4
DATA convhi<>+4(SB)/4, $5
DATA convhi<>+8(SB)/4, $6
DATA convhi<>+12(SB)/4, $7
DATA convhi<>+16(SB)/4, $20
DATA convhi<>+20(SB)/4, $21
DATA convhi<>+24(SB)/4, $22
DATA convhi<>+28(SB)/4, $23
DATA convhi<>+32(SB)/4, $12
DATA convhi<>+36(SB)/4, $13
DATA convhi<>+40(SB)/4, $14
DATA convhi<>+44(SB)/4, $15
DATA convhi<>+48(SB)/4, $28
DATA convhi<>+52(SB)/4, $29
DATA convhi<>+56(SB)/4, $30
DATA convhi<>+60(SB)/4, $31
GLOBL convhi<>(SB), RODATA|NOPTR, $64

DATA conv1perm16<>+0(SB)/4, $0
DATA conv1perm16<>+4(SB)/4, $4
DATA conv1perm16<>+8(SB)/4, $8
DATA conv1perm16<>+12(SB)/4, $12
DATA conv1perm16<>+16(SB)/4, $1
DATA conv1perm16<>+20(SB)/4, $5
DATA conv1perm16<>+24(SB)/4, $9
DATA conv1perm16<>+28(SB)/4, $13
DATA conv1perm16<>+32(SB)/4, $2
DATA conv1perm16<>+36(SB)/4, $6
DATA conv1perm16<>+40(SB)/4, $10
DATA conv1perm16<>+44(SB)/4, $14
DATA conv1perm16<>+48(SB)/4, $3
DATA conv1perm16<>+52(SB)/4, $7
DATA conv1perm16<>+56(SB)/4, $11
DATA conv1perm16<>+60(SB)/4, $15
GLOBL conv1perm16<>(SB), RODATA|NOPTR, $64

DATA conv1perm8<>+0(SB)/4, $0
DATA conv1perm8<>+4(SB)/4, $4
DATA conv1perm8<>+8(SB)/4, $1
DATA conv1perm8<>+12(SB)/4, $5
DATA conv1perm8<>+16(SB)/4, $2
DATA conv1perm8<>+20(SB)/4, $6
DATA conv1perm8<>+24(SB)/4, $3
DATA conv1perm8<>+28(SB)/4, $7
GLOBL conv1perm8<>(SB), RODATA|NOPTR, $32

// func ssmConvAVX512(dst *float32, dstT int, sx *float32, sxS int, cw *float32, nTok16 int)
// ssmConvAVX2 with 16 tokens of a channel per zmm (nTok16 a multiple of
// 16; Conv4AVX512 hands a last block of 8 to ssmConvAVX2): the
// 8x8 transposes of the two 8-token blocks run side by side in the zmm's
// halves (the unpacks and shuffles work per 128 bits), and VPERMT2PS
// pairs their 128-bit quarters into rows (lo: rows 0-3 and 8-11, hi:
// rows 4-7 and 12-15).
TEXT ·ssmConvAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ dstT+8(FP), R13
	MOVQ sx+16(FP), R8
	MOVQ sxS+24(FP), R9
	MOVQ cw+32(FP), R12
	MOVQ nTok16+40(FP), CX
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10
	LEAQ (R10)(R9*2), R11
	ADDQ R9, R11
	VMOVUPS convlo<>(SB), Z16
	VMOVUPS convhi<>(SB), Z17

conv16_loop:
	CMPQ CX, $16
	JL   conv_done
	VPXORD Z0, Z0, Z0
	VBROADCASTSS 0(R12), Z8
	VMULPS 0(R8), Z8, Z9
	VADDPS Z9, Z0, Z0
	VBROADCASTSS 4(R12), Z8
	VMULPS 4(R8), Z8, Z9
	VADDPS Z9, Z0, Z0
	VBROADCASTSS 8(R12), Z8
	VMULPS 8(R8), Z8, Z9
	VADDPS Z9, Z0, Z0
	VBROADCASTSS 12(R12), Z8
	VMULPS 12(R8), Z8, Z9
	VADDPS Z9, Z0, Z0
	VPXORD Z1, Z1, Z1
	VBROADCASTSS 16(R12), Z8
	VMULPS 0(R8)(R9*1), Z8, Z9
	VADDPS Z9, Z1, Z1
	VBROADCASTSS 20(R12), Z8
	VMULPS 4(R8)(R9*1), Z8, Z9
	VADDPS Z9, Z1, Z1
	VBROADCASTSS 24(R12), Z8
	VMULPS 8(R8)(R9*1), Z8, Z9
	VADDPS Z9, Z1, Z1
	VBROADCASTSS 28(R12), Z8
	VMULPS 12(R8)(R9*1), Z8, Z9
	VADDPS Z9, Z1, Z1
	VPXORD Z2, Z2, Z2
	VBROADCASTSS 32(R12), Z8
	VMULPS 0(R8)(R9*2), Z8, Z9
	VADDPS Z9, Z2, Z2
	VBROADCASTSS 36(R12), Z8
	VMULPS 4(R8)(R9*2), Z8, Z9
	VADDPS Z9, Z2, Z2
	VBROADCASTSS 40(R12), Z8
	VMULPS 8(R8)(R9*2), Z8, Z9
	VADDPS Z9, Z2, Z2
	VBROADCASTSS 44(R12), Z8
	VMULPS 12(R8)(R9*2), Z8, Z9
	VADDPS Z9, Z2, Z2
	VPXORD Z3, Z3, Z3
	VBROADCASTSS 48(R12), Z8
	VMULPS 0(R10), Z8, Z9
	VADDPS Z9, Z3, Z3
	VBROADCASTSS 52(R12), Z8
	VMULPS 4(R10), Z8, Z9
	VADDPS Z9, Z3, Z3
	VBROADCASTSS 56(R12), Z8
	VMULPS 8(R10), Z8, Z9
	VADDPS Z9, Z3, Z3
	VBROADCASTSS 60(R12), Z8
	VMULPS 12(R10), Z8, Z9
	VADDPS Z9, Z3, Z3
	VPXORD Z4, Z4, Z4
	VBROADCASTSS 64(R12), Z8
	VMULPS 0(R8)(R9*4), Z8, Z9
	VADDPS Z9, Z4, Z4
	VBROADCASTSS 68(R12), Z8
	VMULPS 4(R8)(R9*4), Z8, Z9
	VADDPS Z9, Z4, Z4
	VBROADCASTSS 72(R12), Z8
	VMULPS 8(R8)(R9*4), Z8, Z9
	VADDPS Z9, Z4, Z4
	VBROADCASTSS 76(R12), Z8
	VMULPS 12(R8)(R9*4), Z8, Z9
	VADDPS Z9, Z4, Z4
	VPXORD Z5, Z5, Z5
	VBROADCASTSS 80(R12), Z8
	VMULPS 0(R10)(R9*2), Z8, Z9
	VADDPS Z9, Z5, Z5
	VBROADCASTSS 84(R12), Z8
	VMULPS 4(R10)(R9*2), Z8, Z9
	VADDPS Z9, Z5, Z5
	VBROADCASTSS 88(R12), Z8
	VMULPS 8(R10)(R9*2), Z8, Z9
	VADDPS Z9, Z5, Z5
	VBROADCASTSS 92(R12), Z8
	VMULPS 12(R10)(R9*2), Z8, Z9
	VADDPS Z9, Z5, Z5
	VPXORD Z6, Z6, Z6
	VBROADCASTSS 96(R12), Z8
	VMULPS 0(R11), Z8, Z9
	VADDPS Z9, Z6, Z6
	VBROADCASTSS 100(R12), Z8
	VMULPS 4(R11), Z8, Z9
	VADDPS Z9, Z6, Z6
	VBROADCASTSS 104(R12), Z8
	VMULPS 8(R11), Z8, Z9
	VADDPS Z9, Z6, Z6
	VBROADCASTSS 108(R12), Z8
	VMULPS 12(R11), Z8, Z9
	VADDPS Z9, Z6, Z6
	VPXORD Z7, Z7, Z7
	VBROADCASTSS 112(R12), Z8
	VMULPS 0(R10)(R9*4), Z8, Z9
	VADDPS Z9, Z7, Z7
	VBROADCASTSS 116(R12), Z8
	VMULPS 4(R10)(R9*4), Z8, Z9
	VADDPS Z9, Z7, Z7
	VBROADCASTSS 120(R12), Z8
	VMULPS 8(R10)(R9*4), Z8, Z9
	VADDPS Z9, Z7, Z7
	VBROADCASTSS 124(R12), Z8
	VMULPS 12(R10)(R9*4), Z8, Z9
	VADDPS Z9, Z7, Z7
	VUNPCKLPS Z1, Z0, Z8
	VUNPCKHPS Z1, Z0, Z9
	VUNPCKLPS Z3, Z2, Z10
	VUNPCKHPS Z3, Z2, Z11
	VUNPCKLPS Z5, Z4, Z12
	VUNPCKHPS Z5, Z4, Z13
	VUNPCKLPS Z7, Z6, Z14
	VUNPCKHPS Z7, Z6, Z15
	VSHUFPS $0x44, Z10, Z8, Z0
	VSHUFPS $0xEE, Z10, Z8, Z1
	VSHUFPS $0x44, Z11, Z9, Z2
	VSHUFPS $0xEE, Z11, Z9, Z3
	VSHUFPS $0x44, Z14, Z12, Z4
	VSHUFPS $0xEE, Z14, Z12, Z5
	VSHUFPS $0x44, Z15, Z13, Z6
	VSHUFPS $0xEE, Z15, Z13, Z7
	VMOVAPS Z0, Z8
	VPERMT2PS Z4, Z16, Z8
	VPERMT2PS Z4, Z17, Z0
	VMOVAPS Z1, Z9
	VPERMT2PS Z5, Z16, Z9
	VPERMT2PS Z5, Z17, Z1
	VMOVAPS Z2, Z10
	VPERMT2PS Z6, Z16, Z10
	VPERMT2PS Z6, Z17, Z2
	VMOVAPS Z3, Z11
	VPERMT2PS Z7, Z16, Z11
	VPERMT2PS Z7, Z17, Z3
	LEAQ (DI)(R13*2), R14
	ADDQ R13, R14
	LEAQ (R14)(R13*2), R15
	ADDQ R13, R15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R13*1)
	VMOVUPS Y10, (DI)(R13*2)
	VMOVUPS Y11, (R14)
	VMOVUPS Y0, (DI)(R13*4)
	VMOVUPS Y1, (R14)(R13*2)
	VMOVUPS Y2, (R15)
	VMOVUPS Y3, (R14)(R13*4)
	LEAQ (DI)(R13*8), DI
	LEAQ (R14)(R13*8), R14
	LEAQ (R15)(R13*8), R15
	VEXTRACTF64X4 $1, Z8, (DI)
	VEXTRACTF64X4 $1, Z9, (DI)(R13*1)
	VEXTRACTF64X4 $1, Z10, (DI)(R13*2)
	VEXTRACTF64X4 $1, Z11, (R14)
	VEXTRACTF64X4 $1, Z0, (DI)(R13*4)
	VEXTRACTF64X4 $1, Z1, (R14)(R13*2)
	VEXTRACTF64X4 $1, Z2, (R15)
	VEXTRACTF64X4 $1, Z3, (R14)(R13*4)
	LEAQ (DI)(R13*8), DI
	ADDQ $64, R8
	ADDQ $64, R10
	ADDQ $64, R11
	SUBQ $16, CX
	JMP  conv16_loop

conv_done:
	VZEROUPPER
	RET

// func ssmConv1AVX512(dst, sx, c *float32, nGroups int)
// ssmConv1AVX2 on two groups of 8 channels per zmm step (64 floats: zmm
// k holds channels 4k..4k+3, so the taps come out in channel order 0, 4,
// 8, 12, 1, 5, ... and VPERMPS puts them back), a last odd group as
// ssmConv1AVX2 (twin: ssmConvRows).
TEXT ·ssmConv1AVX512(SB), NOSPLIT, $0-32
	MOVQ    dst+0(FP), DI
	MOVQ    sx+8(FP), SI
	MOVQ    c+16(FP), R8
	MOVQ    nGroups+24(FP), CX
	VMOVUPS conv1perm16<>(SB), Z15

conv1_loop2:
	CMPQ    CX, $2
	JL      conv1_one
	VMOVUPS (SI), Z0
	VMULPS  (R8), Z0, Z0
	VMOVUPS 64(SI), Z1
	VMULPS  64(R8), Z1, Z1
	VMOVUPS 128(SI), Z2
	VMULPS  128(R8), Z2, Z2
	VMOVUPS 192(SI), Z3
	VMULPS  192(R8), Z3, Z3
	VUNPCKLPS Z1, Z0, Z4
	VUNPCKHPS Z1, Z0, Z5
	VUNPCKLPS Z3, Z2, Z6
	VUNPCKHPS Z3, Z2, Z7
	VUNPCKLPD Z6, Z4, Z8
	VUNPCKHPD Z6, Z4, Z9
	VUNPCKLPD Z7, Z5, Z10
	VUNPCKHPD Z7, Z5, Z11
	VXORPS    Y12, Y12, Y12
	VADDPS    Z8, Z12, Z12
	VADDPS    Z9, Z12, Z12
	VADDPS    Z10, Z12, Z12
	VADDPS    Z11, Z12, Z12
	VPERMPS Z12, Z15, Z12
	VMOVUPS Z12, (DI)
	ADDQ    $256, SI
	ADDQ    $256, R8
	ADDQ    $64, DI
	SUBQ    $2, CX
	JMP     conv1_loop2

conv1_one:
	TESTQ   CX, CX
	JLE     conv1_done
	VMOVDQU conv1perm8<>(SB), Y14
	VMOVUPS (SI), Y0
	VMULPS  (R8), Y0, Y0
	VMOVUPS 32(SI), Y1
	VMULPS  32(R8), Y1, Y1
	VMOVUPS 64(SI), Y2
	VMULPS  64(R8), Y2, Y2
	VMOVUPS 96(SI), Y3
	VMULPS  96(R8), Y3, Y3
	VUNPCKLPS Y1, Y0, Y4
	VUNPCKHPS Y1, Y0, Y5
	VUNPCKLPS Y3, Y2, Y6
	VUNPCKHPS Y3, Y2, Y7
	VUNPCKLPD Y6, Y4, Y8
	VUNPCKHPD Y6, Y4, Y9
	VUNPCKLPD Y7, Y5, Y10
	VUNPCKHPD Y7, Y5, Y11
	VXORPS    Y12, Y12, Y12
	VADDPS    Y8, Y12, Y12
	VADDPS    Y9, Y12, Y12
	VADDPS    Y10, Y12, Y12
	VADDPS    Y11, Y12, Y12
	VPERMPS Y12, Y14, Y12
	VMOVUPS Y12, (DI)

conv1_done:
	VZEROUPPER
	RET

DATA convidx16<>+0(SB)/4, $0
DATA convidx16<>+4(SB)/4, $1
DATA convidx16<>+8(SB)/4, $2
DATA convidx16<>+12(SB)/4, $3
DATA convidx16<>+16(SB)/4, $4
DATA convidx16<>+20(SB)/4, $5
DATA convidx16<>+24(SB)/4, $6
DATA convidx16<>+28(SB)/4, $7
DATA convidx16<>+32(SB)/4, $0
DATA convidx16<>+36(SB)/4, $1
DATA convidx16<>+40(SB)/4, $2
DATA convidx16<>+44(SB)/4, $3
DATA convidx16<>+48(SB)/4, $4
DATA convidx16<>+52(SB)/4, $5
DATA convidx16<>+56(SB)/4, $6
DATA convidx16<>+60(SB)/4, $7
GLOBL convidx16<>(SB), RODATA|NOPTR, $64
DATA convtok16<>+0(SB)/4, $0
DATA convtok16<>+4(SB)/4, $0
DATA convtok16<>+8(SB)/4, $0
DATA convtok16<>+12(SB)/4, $0
DATA convtok16<>+16(SB)/4, $0
DATA convtok16<>+20(SB)/4, $0
DATA convtok16<>+24(SB)/4, $0
DATA convtok16<>+28(SB)/4, $0
DATA convtok16<>+32(SB)/4, $1
DATA convtok16<>+36(SB)/4, $1
DATA convtok16<>+40(SB)/4, $1
DATA convtok16<>+44(SB)/4, $1
DATA convtok16<>+48(SB)/4, $1
DATA convtok16<>+52(SB)/4, $1
DATA convtok16<>+56(SB)/4, $1
DATA convtok16<>+60(SB)/4, $1
GLOBL convtok16<>(SB), RODATA|NOPTR, $64

// func ssmConvGatherAVX512(dst *float32, dstT int, sx *float32, sxS int, c *float32, cS int, nTok int)
// ssmConvGatherAVX2 on two tokens per zmm: lanes 0-7 hold token t's 8
// channels and lanes 8-15 token t+1's (the taps gathered at k*sxS and
// k*sxS + 1, the weights at k*cS in both halves), each lane's sum the
// generic loop's; a last odd token in ymm as ssmConvGatherAVX2 (twin:
// ssmConvRows).
TEXT ·ssmConvGatherAVX512(SB), NOSPLIT, $0-56
	MOVQ         dst+0(FP), DI
	MOVQ         dstT+8(FP), R13
	MOVQ         sx+16(FP), R8
	MOVQ         c+32(FP), R12
	MOVQ         nTok+48(FP), CX
	VMOVDQU32    convidx16<>(SB), Z14
	VPBROADCASTD sxS+24(FP), Z15
	VPMULLD      Z14, Z15, Z15
	VPADDD       convtok16<>(SB), Z15, Z15
	VPBROADCASTD cS+40(FP), Z13
	VPMULLD      Z14, Z13, Z13
	KXNORW       K1, K1, K1
	VGATHERDPS   (R12)(Z13*4), K1, Z4
	KXNORW       K1, K1, K1
	VGATHERDPS   4(R12)(Z13*4), K1, Z5
	KXNORW       K1, K1, K1
	VGATHERDPS   8(R12)(Z13*4), K1, Z6
	KXNORW       K1, K1, K1
	VGATHERDPS   12(R12)(Z13*4), K1, Z7

gconv2_loop:
	CMPQ          CX, $2
	JL            gconv_one
	VPXORD        Z0, Z0, Z0
	KXNORW        K1, K1, K1
	VGATHERDPS    (R8)(Z15*4), K1, Z1
	VMULPS        Z4, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	VGATHERDPS    4(R8)(Z15*4), K1, Z1
	VMULPS        Z5, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	VGATHERDPS    8(R8)(Z15*4), K1, Z1
	VMULPS        Z6, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	VGATHERDPS    12(R8)(Z15*4), K1, Z1
	VMULPS        Z7, Z1, Z1
	VADDPS        Z1, Z0, Z0
	VMOVUPS       Y0, (DI)
	VEXTRACTF64X4 $1, Z0, (DI)(R13*1)
	LEAQ          (DI)(R13*2), DI
	ADDQ          $8, R8
	SUBQ          $2, CX
	JMP           gconv2_loop

gconv_one:
	TESTQ         CX, CX
	JLE           gconv_done
	VPXORD        Z0, Z0, Z0
	KXNORW        K1, K1, K1
	KSHIFTRW      $8, K1, K1
	VGATHERDPS    (R8)(Z15*4), K1, Z1
	VMULPS        Z4, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	KSHIFTRW      $8, K1, K1
	VGATHERDPS    4(R8)(Z15*4), K1, Z1
	VMULPS        Z5, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	KSHIFTRW      $8, K1, K1
	VGATHERDPS    8(R8)(Z15*4), K1, Z1
	VMULPS        Z6, Z1, Z1
	VADDPS        Z1, Z0, Z0
	KXNORW        K1, K1, K1
	KSHIFTRW      $8, K1, K1
	VGATHERDPS    12(R8)(Z15*4), K1, Z1
	VMULPS        Z7, Z1, Z1
	VADDPS        Z1, Z0, Z0
	VMOVUPS       Y0, (DI)

gconv_done:
	VZEROUPPER
	RET
