//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels of SSM_SCAN (see ssm.go) in float64, four lanes at a
// time: softplus of dt (twin: SoftplusTwin) and Mamba-2's dA, e^(d·A)
// (twin: ExpMulTwin).

// SD4 defines a 32-byte constant holding four copies of the uint64 bits
// (eight float32 copies: C8 in exp_amd64.h).
#define SD4(name, bits) \
	DATA name<>+0(SB)/8, $bits; \
	DATA name<>+8(SB)/8, $bits; \
	DATA name<>+16(SB)/8, $bits; \
	DATA name<>+24(SB)/8, $bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

SD4(spmagic, 0x4338000000000000)
SD4(splog2e, 0x3ff71547652b82fe)
SD4(spln2hi, 0x3fe62e42fefa39ef)
SD4(spln2lo, 0x3c7abc9e3b39803f)
SD4(spsqrt2, 0x3ff6a09e667f3bcd)
SD4(spexpmin, 0x4085e00000000000)
SD4(spexplo, 0xc05b800000000000)
SD4(spexphi, 0x4056400000000000)
SD4(sptwenty, 0x4034000000000000)
SD4(sphalf, 0x3fe0000000000000)
SD4(spone, 0x3ff0000000000000)
SD4(spabs, 0x7fffffffffffffff)
SD4(spsign, 0x8000000000000000)
SD4(spbias, 0x00000000000003ff)
SD4(spe2, 0x3fe0000000000000)
SD4(spe3, 0x3fc5555555555555)
SD4(spe4, 0x3fa5555555555555)
SD4(spe5, 0x3f81111111111111)
SD4(spe6, 0x3f56c16c16c16c17)
SD4(spe7, 0x3f2a01a01a01a01a)
SD4(spe8, 0x3efa01a01a01a01a)
SD4(spe9, 0x3ec71de3a556c734)
SD4(spe10, 0x3e927e4fb7789f5c)
SD4(spe11, 0x3e5ae64567f544e4)
SD4(spl3, 0x3fd5555555555555)
SD4(spl5, 0x3fc999999999999a)
SD4(spl7, 0x3fc2492492492492)
SD4(spl9, 0x3fbc71c71c71c71c)
SD4(spl11, 0x3fb745d1745d1746)
SD4(spl13, 0x3fb3b13b13b13b14)
SD4(spl15, 0x3fb1111111111111)
SD4(spl17, 0x3fae1e1e1e1e1e1e)

// SP_EXP2KR(R, T, P, S): P = e^r·2^k, the Taylor polynomial of degree 11
// in R (r) times 2^k built from T (t = k + 1.5·2^52) in S (scratch).
#define SP_EXP2KR(R, T, P, S) \
	VMOVUPD spe11<>(SB), P; \
	VFMADD213PD spe10<>(SB), R, P; \
	VFMADD213PD spe9<>(SB), R, P; \
	VFMADD213PD spe8<>(SB), R, P; \
	VFMADD213PD spe7<>(SB), R, P; \
	VFMADD213PD spe6<>(SB), R, P; \
	VFMADD213PD spe5<>(SB), R, P; \
	VFMADD213PD spe4<>(SB), R, P; \
	VFMADD213PD spe3<>(SB), R, P; \
	VFMADD213PD spe2<>(SB), R, P; \
	VFMADD213PD spone<>(SB), R, P; \
	VFMADD213PD spone<>(SB), R, P; \
	VPSUBQ spmagic<>(SB), T, S; \
	VPADDQ spbias<>(SB), S, S; \
	VPSLLQ $52, S, S; \
	VMULPD S, P, P

// func ssmSoftplusAVX2(dst, x *float32, n int)
// dst = softplus(x) for n (a multiple of 4) elements, each lane as
// ssmSoftplusTwin step for step. dst may be x.
TEXT ·ssmSoftplusAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

sp_loop:
	CMPQ CX, $4
	JL   sp_done
	VCVTPS2PD (SI), Y0
	VANDPD spabs<>(SB), Y0, Y1
	VMINPD spexpmin<>(SB), Y1, Y1

	// e^-|x| = 2^k·e^r (Y5).
	VMOVUPD spmagic<>(SB), Y2
	VFNMADD231PD splog2e<>(SB), Y1, Y2
	VSUBPD spmagic<>(SB), Y2, Y3
	VXORPD spsign<>(SB), Y1, Y4
	VFNMADD231PD spln2hi<>(SB), Y3, Y4
	VFNMADD231PD spln2lo<>(SB), Y3, Y4
	SP_EXP2KR(Y4, Y2, Y5, Y6)

	// m = 1+u (Y6); f (Y8) and e (Y9): m, 0 or m/2, 1 above √2.
	VADDPD spone<>(SB), Y5, Y6
	VCMPPD $0x1e, spsqrt2<>(SB), Y6, Y7
	VMULPD sphalf<>(SB), Y6, Y8
	VBLENDVPD Y7, Y8, Y6, Y8
	VANDPD spone<>(SB), Y7, Y9

	// ln m = e·ln 2 + 2(s + s·z·Q(z)) (Y12).
	VSUBPD spone<>(SB), Y8, Y10
	VADDPD spone<>(SB), Y8, Y11
	VDIVPD Y11, Y10, Y10
	VMULPD Y10, Y10, Y11
	VMOVUPD spl17<>(SB), Y12
	VFMADD213PD spl15<>(SB), Y11, Y12
	VFMADD213PD spl13<>(SB), Y11, Y12
	VFMADD213PD spl11<>(SB), Y11, Y12
	VFMADD213PD spl9<>(SB), Y11, Y12
	VFMADD213PD spl7<>(SB), Y11, Y12
	VFMADD213PD spl5<>(SB), Y11, Y12
	VFMADD213PD spl3<>(SB), Y11, Y12
	VMULPD Y11, Y10, Y13
	VFMADD213PD Y10, Y13, Y12
	VADDPD Y12, Y12, Y12
	VFMADD231PD spln2hi<>(SB), Y9, Y12
	VFMADD231PD spln2lo<>(SB), Y9, Y12

	// log1p(u) = ln m · u/(m-1), or u where m-1 = 0 (Y14).
	VSUBPD spone<>(SB), Y6, Y13
	VDIVPD Y13, Y5, Y14
	VMULPD Y14, Y12, Y14
	VXORPD Y15, Y15, Y15
	VCMPPD $0, Y15, Y13, Y15
	VBLENDVPD Y15, Y5, Y14, Y14

	// max(x, 0) + log1p, or x above 20.
	VXORPD Y15, Y15, Y15
	VMAXPD Y0, Y15, Y15
	VADDPD Y14, Y15, Y15
	VCMPPD $0x1e, sptwenty<>(SB), Y0, Y13
	VBLENDVPD Y13, Y0, Y15, Y15
	VCVTPD2PSY Y15, X15
	VMOVUPS X15, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  sp_loop

sp_done:
	VZEROUPPER
	RET


// func ssmExpMulAVX2(dst, x, a *float32, n int)
// dst = e^(x·a) for n (a multiple of 4) elements, each lane as
// ExpMulTwin step for step. dst may be x or a.
TEXT ·ssmExpMulAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ a+16(FP), DX
	MOVQ n+24(FP), CX

em_loop:
	CMPQ CX, $4
	JL   em_done
	VMOVUPS (SI), X0
	VMULPS  (DX), X0, X0
	VCVTPS2PD X0, Y0

	// v = min(max(x·a, -110), 89), the product second so that a NaN
	// passes through both (Y2).
	VMOVUPD spexplo<>(SB), Y1
	VMAXPD  Y0, Y1, Y1
	VMOVUPD spexphi<>(SB), Y2
	VMINPD  Y1, Y2, Y2

	// e^v = 2^k·e^r (Y6), k = t - magic (Y4), r (Y5).
	VMOVUPD spmagic<>(SB), Y3
	VFMADD231PD splog2e<>(SB), Y2, Y3
	VSUBPD spmagic<>(SB), Y3, Y4
	VMOVAPD Y2, Y5
	VFNMADD231PD spln2hi<>(SB), Y4, Y5
	VFNMADD231PD spln2lo<>(SB), Y4, Y5
	SP_EXP2KR(Y5, Y3, Y6, Y7)
	VCVTPD2PSY Y6, X6
	VMOVUPS X6, (DI)
	ADDQ $16, SI
	ADDQ $16, DX
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  em_loop

em_done:
	VZEROUPPER
	RET
