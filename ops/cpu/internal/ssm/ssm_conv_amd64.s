//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels of SSM_CONV (see ssm.go), in tiles of 8 channels by
// 8 tokens, by gathers, or for one token. Twin: the generic SSM_CONV
// loop (ssm.go).

// func ssmConvAVX2(dst *float32, dstT int, sx *float32, sxS int, cw *float32, nTok8 int)
// SSM_CONV with d_conv 4 for 8 channels and nTok8 (a multiple of 8)
// tokens: channel k's window sums (0 + x[t]*w0) + x[t+1]*w1 + ... in
// order, each product rounded (as the generic loop, which is the twin),
// with x at sx + k*sxS (bytes) and w = cw[4k:4k+4]. Lanes hold 8 tokens of
// one channel; an 8x8 transpose turns them into rows of 8 channels, stored
// at dst + t*dstT (bytes), so the result is written row by row.
TEXT ·ssmConvAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ dstT+8(FP), R13
	MOVQ sx+16(FP), R8
	MOVQ sxS+24(FP), R9
	MOVQ cw+32(FP), R12
	MOVQ nTok8+40(FP), CX
	LEAQ (R8)(R9*2), R10
	ADDQ R9, R10
	LEAQ (R10)(R9*2), R11
	ADDQ R9, R11

conv_loop:
	CMPQ CX, $8
	JL   conv_done
	VXORPS Y0, Y0, Y0
	VBROADCASTSS 0(R12), Y8
	VMULPS 0(R8), Y8, Y9
	VADDPS Y9, Y0, Y0
	VBROADCASTSS 4(R12), Y8
	VMULPS 4(R8), Y8, Y9
	VADDPS Y9, Y0, Y0
	VBROADCASTSS 8(R12), Y8
	VMULPS 8(R8), Y8, Y9
	VADDPS Y9, Y0, Y0
	VBROADCASTSS 12(R12), Y8
	VMULPS 12(R8), Y8, Y9
	VADDPS Y9, Y0, Y0
	VXORPS Y1, Y1, Y1
	VBROADCASTSS 16(R12), Y8
	VMULPS 0(R8)(R9*1), Y8, Y9
	VADDPS Y9, Y1, Y1
	VBROADCASTSS 20(R12), Y8
	VMULPS 4(R8)(R9*1), Y8, Y9
	VADDPS Y9, Y1, Y1
	VBROADCASTSS 24(R12), Y8
	VMULPS 8(R8)(R9*1), Y8, Y9
	VADDPS Y9, Y1, Y1
	VBROADCASTSS 28(R12), Y8
	VMULPS 12(R8)(R9*1), Y8, Y9
	VADDPS Y9, Y1, Y1
	VXORPS Y2, Y2, Y2
	VBROADCASTSS 32(R12), Y8
	VMULPS 0(R8)(R9*2), Y8, Y9
	VADDPS Y9, Y2, Y2
	VBROADCASTSS 36(R12), Y8
	VMULPS 4(R8)(R9*2), Y8, Y9
	VADDPS Y9, Y2, Y2
	VBROADCASTSS 40(R12), Y8
	VMULPS 8(R8)(R9*2), Y8, Y9
	VADDPS Y9, Y2, Y2
	VBROADCASTSS 44(R12), Y8
	VMULPS 12(R8)(R9*2), Y8, Y9
	VADDPS Y9, Y2, Y2
	VXORPS Y3, Y3, Y3
	VBROADCASTSS 48(R12), Y8
	VMULPS 0(R10), Y8, Y9
	VADDPS Y9, Y3, Y3
	VBROADCASTSS 52(R12), Y8
	VMULPS 4(R10), Y8, Y9
	VADDPS Y9, Y3, Y3
	VBROADCASTSS 56(R12), Y8
	VMULPS 8(R10), Y8, Y9
	VADDPS Y9, Y3, Y3
	VBROADCASTSS 60(R12), Y8
	VMULPS 12(R10), Y8, Y9
	VADDPS Y9, Y3, Y3
	VXORPS Y4, Y4, Y4
	VBROADCASTSS 64(R12), Y8
	VMULPS 0(R8)(R9*4), Y8, Y9
	VADDPS Y9, Y4, Y4
	VBROADCASTSS 68(R12), Y8
	VMULPS 4(R8)(R9*4), Y8, Y9
	VADDPS Y9, Y4, Y4
	VBROADCASTSS 72(R12), Y8
	VMULPS 8(R8)(R9*4), Y8, Y9
	VADDPS Y9, Y4, Y4
	VBROADCASTSS 76(R12), Y8
	VMULPS 12(R8)(R9*4), Y8, Y9
	VADDPS Y9, Y4, Y4
	VXORPS Y5, Y5, Y5
	VBROADCASTSS 80(R12), Y8
	VMULPS 0(R10)(R9*2), Y8, Y9
	VADDPS Y9, Y5, Y5
	VBROADCASTSS 84(R12), Y8
	VMULPS 4(R10)(R9*2), Y8, Y9
	VADDPS Y9, Y5, Y5
	VBROADCASTSS 88(R12), Y8
	VMULPS 8(R10)(R9*2), Y8, Y9
	VADDPS Y9, Y5, Y5
	VBROADCASTSS 92(R12), Y8
	VMULPS 12(R10)(R9*2), Y8, Y9
	VADDPS Y9, Y5, Y5
	VXORPS Y6, Y6, Y6
	VBROADCASTSS 96(R12), Y8
	VMULPS 0(R11), Y8, Y9
	VADDPS Y9, Y6, Y6
	VBROADCASTSS 100(R12), Y8
	VMULPS 4(R11), Y8, Y9
	VADDPS Y9, Y6, Y6
	VBROADCASTSS 104(R12), Y8
	VMULPS 8(R11), Y8, Y9
	VADDPS Y9, Y6, Y6
	VBROADCASTSS 108(R12), Y8
	VMULPS 12(R11), Y8, Y9
	VADDPS Y9, Y6, Y6
	VXORPS Y7, Y7, Y7
	VBROADCASTSS 112(R12), Y8
	VMULPS 0(R10)(R9*4), Y8, Y9
	VADDPS Y9, Y7, Y7
	VBROADCASTSS 116(R12), Y8
	VMULPS 4(R10)(R9*4), Y8, Y9
	VADDPS Y9, Y7, Y7
	VBROADCASTSS 120(R12), Y8
	VMULPS 8(R10)(R9*4), Y8, Y9
	VADDPS Y9, Y7, Y7
	VBROADCASTSS 124(R12), Y8
	VMULPS 12(R10)(R9*4), Y8, Y9
	VADDPS Y9, Y7, Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R13*1)
	VMOVUPS Y10, (DI)(R13*2)
	LEAQ (DI)(R13*2), R14
	ADDQ R13, R14
	VMOVUPS Y11, (R14)
	VMOVUPS Y12, (DI)(R13*4)
	VMOVUPS Y13, (R14)(R13*2)
	LEAQ (R14)(R13*2), R15
	ADDQ R13, R15
	VMOVUPS Y14, (R15)
	VMOVUPS Y15, (R14)(R13*4)
	LEAQ (DI)(R13*8), DI
	ADDQ $32, R8
	ADDQ $32, R10
	ADDQ $32, R11
	SUBQ $8, CX
	JMP  conv_loop

conv_done:
	VZEROUPPER
	RET

DATA convidx<>+0(SB)/4, $0
DATA convidx<>+4(SB)/4, $1
DATA convidx<>+8(SB)/4, $2
DATA convidx<>+12(SB)/4, $3
DATA convidx<>+16(SB)/4, $4
DATA convidx<>+20(SB)/4, $5
DATA convidx<>+24(SB)/4, $6
DATA convidx<>+28(SB)/4, $7
GLOBL convidx<>(SB), RODATA|NOPTR, $32

// func ssmConvGatherAVX2(dst *float32, dstT int, sx *float32, sxS int, c *float32, cS int, nTok int)
// SSM_CONV with d_conv 4 for 8 channels and nTok tokens, lanes holding
// the 8 channels: each tap of x (channel k's row at sx + k*sxS floats,
// sxS and cS counted in floats here) and each weight (c + k*cS) is
// gathered, and token t's 8 sums, (0 + x[t]*w0) + x[t+1]*w1 + ... in order
// as the generic loop, are stored at dst + t*dstT (bytes). For the tokens
// short of a run of 8, the decode case above all.
TEXT ·ssmConvGatherAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ dstT+8(FP), R13
	MOVQ sx+16(FP), R8
	MOVQ c+32(FP), R12
	MOVQ nTok+48(FP), CX
	VMOVDQU convidx<>(SB), Y14
	VPBROADCASTD sxS+24(FP), Y15
	VPMULLD Y14, Y15, Y15
	VPBROADCASTD cS+40(FP), Y13
	VPMULLD Y14, Y13, Y13
	VPCMPEQD Y12, Y12, Y12
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, (R12)(Y13*4), Y4
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 4(R12)(Y13*4), Y5
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 8(R12)(Y13*4), Y6
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 12(R12)(Y13*4), Y7

gconv_loop:
	TESTQ CX, CX
	JLE   gconv_done
	VXORPS Y0, Y0, Y0
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, (R8)(Y15*4), Y1
	VMULPS Y4, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 4(R8)(Y15*4), Y1
	VMULPS Y5, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 8(R8)(Y15*4), Y1
	VMULPS Y6, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVDQA Y12, Y11
	VGATHERDPS Y11, 12(R8)(Y15*4), Y1
	VMULPS Y7, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ R13, DI
	ADDQ $4, R8
	DECQ CX
	JMP  gconv_loop

gconv_done:
	VZEROUPPER
	RET

DATA conv1perm<>+0(SB)/4, $0
DATA conv1perm<>+4(SB)/4, $4
DATA conv1perm<>+8(SB)/4, $1
DATA conv1perm<>+12(SB)/4, $5
DATA conv1perm<>+16(SB)/4, $2
DATA conv1perm<>+20(SB)/4, $6
DATA conv1perm<>+24(SB)/4, $3
DATA conv1perm<>+28(SB)/4, $7
GLOBL conv1perm<>(SB), RODATA|NOPTR, $32

// func ssmConv1AVX2(dst, sx, c *float32, nGroups int)
// SSM_CONV with d_conv 4 and one token for nGroups groups of 8 channels
// whose windows and weights are packed (4 floats per channel, 32 per
// group): the products x*w are taken in place, transposed to one vector
// per tap (lanes in channel order 0,2,4,6,1,3,5,7), summed (0 + p0) + p1
// + p2 + p3 as the generic loop, and permuted back to channel order
// (twin: ssmConvRows).
TEXT ·ssmConv1AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ sx+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ nGroups+24(FP), CX
	VMOVDQU conv1perm<>(SB), Y15

conv1_loop:
	TESTQ CX, CX
	JLE   conv1_done
	VMOVUPS (SI), Y0
	VMULPS (R8), Y0, Y0
	VMOVUPS 32(SI), Y1
	VMULPS 32(R8), Y1, Y1
	VMOVUPS 64(SI), Y2
	VMULPS 64(R8), Y2, Y2
	VMOVUPS 96(SI), Y3
	VMULPS 96(R8), Y3, Y3
	VUNPCKLPS Y1, Y0, Y4
	VUNPCKHPS Y1, Y0, Y5
	VUNPCKLPS Y3, Y2, Y6
	VUNPCKHPS Y3, Y2, Y7
	VUNPCKLPD Y6, Y4, Y8
	VUNPCKHPD Y6, Y4, Y9
	VUNPCKLPD Y7, Y5, Y10
	VUNPCKHPD Y7, Y5, Y11
	VXORPS Y12, Y12, Y12
	VADDPS Y8, Y12, Y12
	VADDPS Y9, Y12, Y12
	VADDPS Y10, Y12, Y12
	VADDPS Y11, Y12, Y12
	VPERMPS Y12, Y15, Y12
	VMOVUPS Y12, (DI)
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $32, DI
	DECQ CX
	JMP  conv1_loop

conv1_done:
	VZEROUPPER
	RET
