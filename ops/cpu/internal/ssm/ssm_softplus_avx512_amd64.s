//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 F kernel of SSM_SCAN (see ssm.go): softplus of dt in float64
// eight lanes at a time, ssmSoftplusAVX2's steps on zmm (VPANDQ and
// VPXORQ for the AVX2 kernel's VANDPD and VXORPD, compares into mask
// registers and masked moves for its blends; the constants broadcast
// from their first eight bytes). Twin: ssmSoftplusTwin.

// SD4 defines a 32-byte constant holding four copies of the uint64 bits,
// as in ssm_softplus_amd64.s (the constants are file-local).
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

// func ssmSoftplusAVX512(dst, x *float32, n int)
// dst = softplus(x) for n (a multiple of 8) elements, each lane as
// ssmSoftplusTwin step for step. dst may be x.
TEXT ·ssmSoftplusAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD spone<>(SB), Z16
	VPXORQ       Z17, Z17, Z17

sp_loop:
	CMPQ      CX, $8
	JL        sp_done
	VCVTPS2PD (SI), Z0
	VPANDQ.BCST spabs<>(SB), Z0, Z1
	VMINPD.BCST spexpmin<>(SB), Z1, Z1

	// e^-|x| = 2^k·e^r (Z5).
	VBROADCASTSD      spmagic<>(SB), Z2
	VFNMADD231PD.BCST splog2e<>(SB), Z1, Z2
	VSUBPD.BCST       spmagic<>(SB), Z2, Z3
	VPXORQ.BCST       spsign<>(SB), Z1, Z4
	VFNMADD231PD.BCST spln2hi<>(SB), Z3, Z4
	VFNMADD231PD.BCST spln2lo<>(SB), Z3, Z4
	VBROADCASTSD      spe11<>(SB), Z5
	VFMADD213PD.BCST  spe10<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe9<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe8<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe7<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe6<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe5<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe4<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe3<>(SB), Z4, Z5
	VFMADD213PD.BCST  spe2<>(SB), Z4, Z5
	VFMADD213PD       Z16, Z4, Z5
	VFMADD213PD       Z16, Z4, Z5
	VPSUBQ.BCST       spmagic<>(SB), Z2, Z6
	VPADDQ.BCST       spbias<>(SB), Z6, Z6
	VPSLLQ            $52, Z6, Z6
	VMULPD            Z6, Z5, Z5

	// m = 1+u (Z6); f (Z8) and e (Z9): m, 0 or m/2, 1 above √2.
	VADDPD      Z16, Z5, Z6
	VCMPPD.BCST $0x1e, spsqrt2<>(SB), Z6, K1
	VMULPD.BCST sphalf<>(SB), Z6, Z8
	VBLENDMPD   Z8, Z6, K1, Z8
	VMOVAPD.Z   Z16, K1, Z9

	// ln m = e·ln 2 + 2(s + s·z·Q(z)) (Z12).
	VSUBPD            Z16, Z8, Z10
	VADDPD            Z16, Z8, Z11
	VDIVPD            Z11, Z10, Z10
	VMULPD            Z10, Z10, Z11
	VBROADCASTSD      spl17<>(SB), Z12
	VFMADD213PD.BCST  spl15<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl13<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl11<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl9<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl7<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl5<>(SB), Z11, Z12
	VFMADD213PD.BCST  spl3<>(SB), Z11, Z12
	VMULPD            Z11, Z10, Z13
	VFMADD213PD       Z10, Z13, Z12
	VADDPD            Z12, Z12, Z12
	VFMADD231PD.BCST  spln2hi<>(SB), Z9, Z12
	VFMADD231PD.BCST  spln2lo<>(SB), Z9, Z12

	// log1p(u) = ln m · u/(m-1), or u where m-1 = 0 (Z14).
	VSUBPD  Z16, Z6, Z13
	VDIVPD  Z13, Z5, Z14
	VMULPD  Z14, Z12, Z14
	VCMPPD  $0, Z17, Z13, K2
	VMOVAPD Z5, K2, Z14

	// max(x, 0) + log1p, or x above 20.
	VMAXPD      Z0, Z17, Z15
	VADDPD      Z14, Z15, Z15
	VCMPPD.BCST $0x1e, sptwenty<>(SB), Z0, K3
	VMOVAPD     Z0, K3, Z15
	VCVTPD2PS   Z15, Y15
	VMOVUPS     Y15, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         sp_loop

sp_done:
	VZEROUPPER
	RET
