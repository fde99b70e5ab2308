//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels of SSM_SCAN (see ssm.go): the state update of many
// rows for one token (or many tokens) in one call. Twins: ssmScanATwin,
// ssmScanSTwin, ssmScanSTokTwin.

// The float32 exp of expTwin: EXP8 and its constants.
#include "exp_amd64.h"

#include "ssm_amd64.h"

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

