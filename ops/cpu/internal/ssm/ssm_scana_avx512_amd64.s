//go:build amd64 && !purego

#include "textflag.h"

// The vector-A scan (Mamba-1) with the exponentials in zmm: EXP16 is
// exp_amd64.h's EXP8 on 16 lanes (the same operations lane by lane, the
// constants broadcast from their first four bytes, VRNDSCALEPS $0 for
// VROUNDPS $0: both round to nearest even), so each dA equals
// expTwin's. The row's sum keeps the AVX2 kernel's single 8-lane
// accumulator: a run of 16 adds its low eight products, then its high
// eight (twin: ssmScanATwin).

// The float32 exp of expTwin: EXP8 and its constants.
#include "exp_amd64.h"

#include "ssm_amd64.h"

// EXP16: Z0 = exp(Z0) lane by lane, as EXP8. Z8 must hold explo and Z9
// exphi; Z1-Z4 are clobbered.
#define EXP16 \
	VMAXPS           Z0, Z8, Z0; \
	VMINPS           Z0, Z9, Z0; \
	VMULPS.BCST      explog2e<>(SB), Z0, Z1; \
	VRNDSCALEPS      $0, Z1, Z1; \
	VMOVAPS          Z0, Z2; \
	VFMADD231PS.BCST expnc1<>(SB), Z1, Z2; \
	VFMADD231PS.BCST expnc2<>(SB), Z1, Z2; \
	VBROADCASTSS     expp0<>(SB), Z3; \
	VFMADD213PS.BCST expp1<>(SB), Z2, Z3; \
	VFMADD213PS.BCST expp2<>(SB), Z2, Z3; \
	VFMADD213PS.BCST expp3<>(SB), Z2, Z3; \
	VFMADD213PS.BCST expp4<>(SB), Z2, Z3; \
	VFMADD213PS.BCST expp5<>(SB), Z2, Z3; \
	VMULPS           Z2, Z2, Z4; \
	VFMADD213PS      Z2, Z4, Z3; \
	VADDPS.BCST      expone<>(SB), Z3, Z3; \
	VCVTPS2DQ        Z1, Z1; \
	VPADDD.BCST      expbias<>(SB), Z1, Z1; \
	VPSLLD           $23, Z1, Z1; \
	VMULPS           Z1, Z3, Z0

// func ssmScanAAVX512(st, src *float32, stS, srcS int, a *float32, aS int, dsp *float32, dspS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int)
// ssmScanAAVX2 with runs of 16 in zmm and a last run of 8 in ymm (twin:
// ssmScanATwin).
TEXT ·ssmScanAAVX512(SB), NOSPLIT, $0-128
	MOVQ         st+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         a+32(FP), R8
	MOVQ         dsp+48(FP), R9
	MOVQ         x+64(FP), R10
	MOVQ         y+80(FP), R11
	MOVQ         b+96(FP), R12
	MOVQ         c+104(FP), R13
	MOVQ         nRows+112(FP), DX
	MOVQ         dState+120(FP), BX
	VBROADCASTSS explo<>(SB), Z8
	VBROADCASTSS exphi<>(SB), Z9

scana_row:
	TESTQ        DX, DX
	JLE          scana_done
	VBROADCASTSS (R9), Z10
	VMOVSS       (R10), X11
	VMULSS       (R9), X11, X11
	VBROADCASTSS X11, Z11
	VXORPS       Y12, Y12, Y12
	XORQ         AX, AX

scana_loop16:
	LEAQ          16(AX), CX
	CMPQ          CX, BX
	JG            scana_tail
	VMULPS        (R8)(AX*4), Z10, Z0
	EXP16
	VMULPS        (SI)(AX*4), Z0, Z5
	VMULPS        (R12)(AX*4), Z11, Z6
	VADDPS        Z6, Z5, Z5
	VMOVUPS       Z5, (DI)(AX*4)
	VFMADD231PS   (R13)(AX*4), Y5, Y12
	VEXTRACTF64X4 $1, Z5, Y5
	VFMADD231PS   32(R13)(AX*4), Y5, Y12
	MOVQ          CX, AX
	JMP           scana_loop16

scana_tail:
	CMPQ        AX, BX
	JGE         scana_sum
	VMULPS      (R8)(AX*4), Y10, Y0
	EXP8
	VMULPS      (SI)(AX*4), Y0, Y5
	VMULPS      (R12)(AX*4), Y11, Y6
	VADDPS      Y6, Y5, Y5
	VMOVUPS     Y5, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y5, Y12

scana_sum:
	HSUM8(Y12, X12)
	VMOVSS X12, (R11)
	ADDQ   stS+16(FP), DI
	ADDQ   srcS+24(FP), SI
	ADDQ   aS+40(FP), R8
	ADDQ   dspS+56(FP), R9
	ADDQ   xS+72(FP), R10
	ADDQ   yS+88(FP), R11
	DECQ   DX
	JMP    scana_row

scana_done:
	VZEROUPPER
	RET
