//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels of SSM_SCAN (see ssm.go): softplus of dt in float64
// four lanes at a time, and the state update of many rows for one token
// (or many tokens) in one call; and SSM_CONV in tiles of 8 channels by 8
// tokens. Twins: ssmSoftplusTwin, ssmScanATwin, ssmScanSTwin,
// ssmScanSTokTwin and the generic SSM_CONV loop (ssm.go).

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

// The float32 exp of expTwin: EXP8 and its constants.
#include "exp_amd64.h"

// HSUM8(y, x): x (the low half of y) = the sum of y's lanes as hsum8;
// X1 is clobbered.
#define HSUM8(y, x) \
	VEXTRACTF128 $1, y, X1; \
	VADDPS X1, x, x; \
	VMOVHLPS x, x, X1; \
	VADDPS X1, x, x; \
	VMOVSHDUP x, X1; \
	VADDSS X1, x, x

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
	VMOVUPD spe11<>(SB), Y5
	VFMADD213PD spe10<>(SB), Y4, Y5
	VFMADD213PD spe9<>(SB), Y4, Y5
	VFMADD213PD spe8<>(SB), Y4, Y5
	VFMADD213PD spe7<>(SB), Y4, Y5
	VFMADD213PD spe6<>(SB), Y4, Y5
	VFMADD213PD spe5<>(SB), Y4, Y5
	VFMADD213PD spe4<>(SB), Y4, Y5
	VFMADD213PD spe3<>(SB), Y4, Y5
	VFMADD213PD spe2<>(SB), Y4, Y5
	VFMADD213PD spone<>(SB), Y4, Y5
	VFMADD213PD spone<>(SB), Y4, Y5
	VPSUBQ spmagic<>(SB), Y2, Y6
	VPADDQ spbias<>(SB), Y6, Y6
	VPSLLQ $52, Y6, Y6
	VMULPD Y6, Y5, Y5

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

// func ssmScanAAVX2(st, src *float32, stS, srcS int, a *float32, aS int, dsp *float32, dspS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int)
// For nRows rows r (strides in bytes), with d = dsp[r], xdt = x[r]*d and
// dA = exp(a[r][i]*d) (expTwin): st[r][i] = src[r][i]*dA + b[i]*xdt
// (each product rounded) for i < dState (a multiple of 8), and y[r] = the
// sum of st[r][i]*c[i] by FMA in eight lanes reduced as hsum8 (twin:
// ssmScanATwin). st may be src.
TEXT ·ssmScanAAVX2(SB), NOSPLIT, $0-128
	MOVQ st+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ a+32(FP), R8
	MOVQ dsp+48(FP), R9
	MOVQ x+64(FP), R10
	MOVQ y+80(FP), R11
	MOVQ b+96(FP), R12
	MOVQ c+104(FP), R13
	MOVQ nRows+112(FP), DX
	MOVQ dState+120(FP), BX
	VMOVUPS explo<>(SB), Y8
	VMOVUPS exphi<>(SB), Y9

scana_row:
	TESTQ DX, DX
	JLE   scana_done
	VBROADCASTSS (R9), Y10
	VMOVSS (R10), X11
	VMULSS (R9), X11, X11
	VBROADCASTSS X11, Y11
	VXORPS Y12, Y12, Y12
	XORQ AX, AX

scana_loop:
	CMPQ AX, BX
	JGE  scana_sum
	VMULPS (R8)(AX*4), Y10, Y0
	EXP8
	VMULPS (SI)(AX*4), Y0, Y5
	VMULPS (R12)(AX*4), Y11, Y6
	VADDPS Y6, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y5, Y12
	ADDQ $8, AX
	JMP  scana_loop

scana_sum:
	HSUM8(Y12, X12)
	VMOVSS X12, (R11)
	ADDQ stS+16(FP), DI
	ADDQ srcS+24(FP), SI
	ADDQ aS+40(FP), R8
	ADDQ dspS+56(FP), R9
	ADDQ xS+72(FP), R10
	ADDQ yS+88(FP), R11
	DECQ DX
	JMP  scana_row

scana_done:
	VZEROUPPER
	RET

// func ssmScanSAVX2(st, src *float32, stS, srcS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int, dA, dsp float32)
// ssmScanAAVX2 with one dA for every row and state (a scalar A per head,
// Mamba-2) and one dsp, each row's sum in two 8-lane FMA accumulators,
// the first over elements 16k..16k+7 (and a last run of 8), the second
// over 16k+8..16k+15, added lane by lane before hsum8 (twin:
// ssmScanSTwin). Rows go in pairs sharing the loads of b and c; with
// four independent sums in flight the kernel no longer waits on FMA
// latency. When decoding the previous state comes from L3, so each pair
// prefetches the source rows of the next pair (R14, R15) a line per run
// of 16; a prefetch past the rows' end is harmless and changes no result.
TEXT ·ssmScanSAVX2(SB), NOSPLIT, $0-104
	MOVQ st+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ x+32(FP), R10
	MOVQ y+48(FP), R11
	MOVQ b+64(FP), R12
	MOVQ c+72(FP), R13
	MOVQ nRows+80(FP), DX
	MOVQ dState+88(FP), BX
	VBROADCASTSS dA+96(FP), Y10
	VMOVSS dsp+100(FP), X9

scans_pair:
	CMPQ DX, $2
	JL   scans_row
	MOVQ stS+16(FP), CX
	LEAQ (DI)(CX*1), R8
	MOVQ srcS+24(FP), CX
	LEAQ (SI)(CX*1), R9
	LEAQ (R9)(CX*1), R14
	LEAQ (R14)(CX*1), R15
	VMOVSS (R10), X11
	VMULSS X9, X11, X11
	VBROADCASTSS X11, Y11
	MOVQ xS+40(FP), CX
	VMOVSS (R10)(CX*1), X13
	VMULSS X9, X13, X13
	VBROADCASTSS X13, Y13
	VXORPS Y12, Y12, Y12
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	VXORPS Y5, Y5, Y5
	XORQ AX, AX

scans_ploop16:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JG   scans_ploop8
	PREFETCHT0 (R14)(AX*4)
	PREFETCHT0 (R15)(AX*4)
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	VMOVUPS 32(R12)(AX*4), Y8
	VMULPS (SI)(AX*4), Y10, Y0
	VMULPS Y6, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS Y7, Y0, Y12
	VMULPS (R9)(AX*4), Y10, Y2
	VMULPS Y6, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (R8)(AX*4)
	VFMADD231PS Y7, Y2, Y14
	VMOVUPS 32(R13)(AX*4), Y7
	VMULPS 32(SI)(AX*4), Y10, Y0
	VMULPS Y8, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, 32(DI)(AX*4)
	VFMADD231PS Y7, Y0, Y15
	VMULPS 32(R9)(AX*4), Y10, Y2
	VMULPS Y8, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, 32(R8)(AX*4)
	VFMADD231PS Y7, Y2, Y5
	MOVQ CX, AX
	JMP  scans_ploop16

scans_ploop8:
	CMPQ AX, BX
	JGE  scans_psum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	VMULPS (SI)(AX*4), Y10, Y0
	VMULPS Y6, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS Y7, Y0, Y12
	VMULPS (R9)(AX*4), Y10, Y2
	VMULPS Y6, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (R8)(AX*4)
	VFMADD231PS Y7, Y2, Y14
	ADDQ $8, AX
	JMP  scans_ploop8

scans_psum:
	VADDPS Y15, Y12, Y12
	VADDPS Y5, Y14, Y14
	HSUM8(Y12, X12)
	HSUM8(Y14, X14)
	VMOVSS X12, (R11)
	MOVQ yS+56(FP), CX
	VMOVSS X14, (R11)(CX*1)
	LEAQ (R11)(CX*2), R11
	MOVQ xS+40(FP), CX
	LEAQ (R10)(CX*2), R10
	MOVQ stS+16(FP), CX
	LEAQ (R8)(CX*1), DI
	MOVQ srcS+24(FP), CX
	LEAQ (R9)(CX*1), SI
	SUBQ $2, DX
	JMP  scans_pair

scans_row:
	TESTQ DX, DX
	JLE   scans_done
	VMOVSS (R10), X11
	VMULSS X9, X11, X11
	VBROADCASTSS X11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y15, Y15, Y15
	XORQ AX, AX

scans_loop16:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JG   scans_loop8
	VMULPS (SI)(AX*4), Y10, Y0
	VMULPS (R12)(AX*4), Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y0, Y12
	VMULPS 32(SI)(AX*4), Y10, Y2
	VMULPS 32(R12)(AX*4), Y11, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, 32(DI)(AX*4)
	VFMADD231PS 32(R13)(AX*4), Y2, Y15
	MOVQ CX, AX
	JMP  scans_loop16

scans_loop8:
	CMPQ AX, BX
	JGE  scans_sum
	VMULPS (SI)(AX*4), Y10, Y5
	VMULPS (R12)(AX*4), Y11, Y6
	VADDPS Y6, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y5, Y12
	ADDQ $8, AX
	JMP  scans_loop8

scans_sum:
	VADDPS Y15, Y12, Y12
	HSUM8(Y12, X12)
	VMOVSS X12, (R11)
	ADDQ stS+16(FP), DI
	ADDQ srcS+24(FP), SI
	ADDQ xS+40(FP), R10
	ADDQ yS+56(FP), R11
	DECQ DX
	JMP  scans_row

scans_done:
	VZEROUPPER
	RET

// func ssmScanSTokAVX2(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int)
// ssmScanSAVX2 in place (src = st) for nTok tokens in turn, token k
// reading x, y, b and c at k times their token strides (xT, yT, bT, cT,
// bytes) and dA, dsp from ed[2k], ed[2k+1] (twin: ssmScanSTokTwin). A
// block of rows keeps its state in L1 over the tokens while b and c
// stream past, and one call serves every token.
TEXT ·ssmScanSTokAVX2(SB), NOSPLIT, $0-128
	MOVQ x+32(FP), SI
	MOVQ y+56(FP), R9
	MOVQ b+80(FP), R12
	MOVQ c+96(FP), R13
	MOVQ ed+112(FP), R14
	MOVQ dState+24(FP), BX
	XORQ R15, R15

stok_tok:
	CMPQ R15, nTok+120(FP)
	JGE  stok_done
	VBROADCASTSS (R14)(R15*8), Y10
	VMOVSS 4(R14)(R15*8), X9
	MOVQ st+0(FP), DI
	MOVQ SI, R10
	MOVQ R9, R11
	MOVQ nRows+16(FP), DX

stok_pair:
	CMPQ DX, $2
	JL   stok_row
	MOVQ stS+8(FP), CX
	LEAQ (DI)(CX*1), R8
	VMOVSS (R10), X11
	VMULSS X9, X11, X11
	VBROADCASTSS X11, Y11
	MOVQ xS+40(FP), CX
	VMOVSS (R10)(CX*1), X13
	VMULSS X9, X13, X13
	VBROADCASTSS X13, Y13
	VXORPS Y12, Y12, Y12
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	VXORPS Y5, Y5, Y5
	XORQ AX, AX

stok_ploop16:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JG   stok_ploop8
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	VMOVUPS 32(R12)(AX*4), Y8
	VMULPS (DI)(AX*4), Y10, Y0
	VMULPS Y6, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS Y7, Y0, Y12
	VMULPS (R8)(AX*4), Y10, Y2
	VMULPS Y6, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (R8)(AX*4)
	VFMADD231PS Y7, Y2, Y14
	VMOVUPS 32(R13)(AX*4), Y7
	VMULPS 32(DI)(AX*4), Y10, Y0
	VMULPS Y8, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, 32(DI)(AX*4)
	VFMADD231PS Y7, Y0, Y15
	VMULPS 32(R8)(AX*4), Y10, Y2
	VMULPS Y8, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, 32(R8)(AX*4)
	VFMADD231PS Y7, Y2, Y5
	MOVQ CX, AX
	JMP  stok_ploop16

stok_ploop8:
	CMPQ AX, BX
	JGE  stok_psum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	VMULPS (DI)(AX*4), Y10, Y0
	VMULPS Y6, Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS Y7, Y0, Y12
	VMULPS (R8)(AX*4), Y10, Y2
	VMULPS Y6, Y13, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (R8)(AX*4)
	VFMADD231PS Y7, Y2, Y14
	ADDQ $8, AX
	JMP  stok_ploop8

stok_psum:
	VADDPS Y15, Y12, Y12
	VADDPS Y5, Y14, Y14
	HSUM8(Y12, X12)
	HSUM8(Y14, X14)
	VMOVSS X12, (R11)
	MOVQ yS+64(FP), CX
	VMOVSS X14, (R11)(CX*1)
	LEAQ (R11)(CX*2), R11
	MOVQ xS+40(FP), CX
	LEAQ (R10)(CX*2), R10
	MOVQ stS+8(FP), CX
	LEAQ (R8)(CX*1), DI
	SUBQ $2, DX
	JMP  stok_pair

stok_row:
	TESTQ DX, DX
	JLE   stok_next
	VMOVSS (R10), X11
	VMULSS X9, X11, X11
	VBROADCASTSS X11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y15, Y15, Y15
	XORQ AX, AX

stok_loop16:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JG   stok_loop8
	VMULPS (DI)(AX*4), Y10, Y0
	VMULPS (R12)(AX*4), Y11, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y0, Y12
	VMULPS 32(DI)(AX*4), Y10, Y2
	VMULPS 32(R12)(AX*4), Y11, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, 32(DI)(AX*4)
	VFMADD231PS 32(R13)(AX*4), Y2, Y15
	MOVQ CX, AX
	JMP  stok_loop16

stok_loop8:
	CMPQ AX, BX
	JGE  stok_sum
	VMULPS (DI)(AX*4), Y10, Y5
	VMULPS (R12)(AX*4), Y11, Y6
	VADDPS Y6, Y5, Y5
	VMOVUPS Y5, (DI)(AX*4)
	VFMADD231PS (R13)(AX*4), Y5, Y12
	ADDQ $8, AX
	JMP  stok_loop8

stok_sum:
	VADDPS Y15, Y12, Y12
	HSUM8(Y12, X12)
	VMOVSS X12, (R11)
	ADDQ stS+8(FP), DI
	ADDQ xS+40(FP), R10
	ADDQ yS+64(FP), R11
	DECQ DX
	JMP  stok_row

stok_next:
	ADDQ xT+48(FP), SI
	ADDQ yT+72(FP), R9
	ADDQ bT+88(FP), R12
	ADDQ cT+104(FP), R13
	INCQ R15
	JMP  stok_tok

stok_done:
	VZEROUPPER
	RET

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
