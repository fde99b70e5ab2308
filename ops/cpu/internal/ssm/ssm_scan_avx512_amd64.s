//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 F kernels of SSM_SCAN with a scalar A (see ssm.go): the AVX2
// kernels ssmScanSAVX2 and ssmScanSTokAVX2 with a run of 16 states per
// zmm. The AVX2 kernels sum a row in two 8-lane accumulators, the first
// over elements 16k..16k+7 and the second over 16k+8..16k+15: here one
// zmm accumulator whose low eight lanes are the first and whose high
// eight the second, so each lane takes the same FMAs in the same order;
// a last run of 8 goes to the low lanes under mask K1 (0x00ff), and the
// high half is added to the low one before hsum8, as the AVX2 kernels
// add the two (twin: ssmScanSTwin).

#include "ssm_amd64.h"

// S16(SRC, DST, XDT, ACC): one run of 16 states of a row: Z0 = SRC*dA
// (Z10) + b (Z6) * XDT, each product rounded, stored at DST, and
// ACC += Z0*c (Z7) by FMA. Z1 is clobbered.
#define S16(SRC, DST, XDT, ACC) \
	VMULPS      SRC, Z10, Z0; \
	VMULPS      Z6, XDT, Z1; \
	VADDPS      Z1, Z0, Z0; \
	VMOVUPS     Z0, DST; \
	VFMADD231PS Z7, Z0, ACC

// S8(SRC, DST, XDT, ACC): S16 for a last run of 8 states (b in Y6, c in
// Y7): the update in ymm, the FMA into ACC's low eight lanes (K1).
#define S8(SRC, DST, XDT, ACC) \
	VMULPS      SRC, Y10, Y0; \
	VMULPS      Y6, XDT, Y1; \
	VADDPS      Y1, Y0, Y0; \
	VMOVUPS     Y0, DST; \
	VFMADD231PS Z7, Z0, K1, ACC

// SSUM(Z, Y, X): a row's sum: Z's high eight lanes added to its low
// eight, then hsum8 into X. Z1 is clobbered.
#define SSUM(Z, Y, X) \
	VEXTRACTF64X4 $1, Z, Y1; \
	VADDPS        Y1, Y, Y; \
	HSUM8(Y, X)

// func ssmScanSAVX512(st, src *float32, stS, srcS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int, dA, dsp float32)
// ssmScanSAVX2 in zmm: rows in pairs sharing the loads of b and c, the
// source rows of the next pair prefetched a line per run of 16 (twin:
// ssmScanSTwin).
TEXT ·ssmScanSAVX512(SB), NOSPLIT, $0-104
	MOVQ         st+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         x+32(FP), R10
	MOVQ         y+48(FP), R11
	MOVQ         b+64(FP), R12
	MOVQ         c+72(FP), R13
	MOVQ         nRows+80(FP), DX
	MOVQ         dState+88(FP), BX
	VBROADCASTSS dA+96(FP), Z10
	VMOVSS       dsp+100(FP), X9
	MOVL         $0xff, AX
	KMOVW        AX, K1

scans_pair:
	CMPQ         DX, $2
	JL           scans_row
	MOVQ         stS+16(FP), CX
	LEAQ         (DI)(CX*1), R8
	MOVQ         srcS+24(FP), CX
	LEAQ         (SI)(CX*1), R9
	LEAQ         (R9)(CX*1), R14
	LEAQ         (R14)(CX*1), R15
	VMOVSS       (R10), X11
	VMULSS       X9, X11, X11
	VBROADCASTSS X11, Z11
	MOVQ         xS+40(FP), CX
	VMOVSS       (R10)(CX*1), X13
	VMULSS       X9, X13, X13
	VBROADCASTSS X13, Z13
	VPXORD       Z12, Z12, Z12
	VPXORD       Z14, Z14, Z14
	XORQ         AX, AX

scans_ploop16:
	LEAQ       16(AX), CX
	CMPQ       CX, BX
	JG         scans_ptail
	PREFETCHT0 (R14)(AX*4)
	PREFETCHT0 (R15)(AX*4)
	VMOVUPS    (R12)(AX*4), Z6
	VMOVUPS    (R13)(AX*4), Z7
	S16((SI)(AX*4), (DI)(AX*4), Z11, Z12)
	S16((R9)(AX*4), (R8)(AX*4), Z13, Z14)
	MOVQ       CX, AX
	JMP        scans_ploop16

scans_ptail:
	CMPQ    AX, BX
	JGE     scans_psum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	S8((SI)(AX*4), (DI)(AX*4), Y11, Z12)
	S8((R9)(AX*4), (R8)(AX*4), Y13, Z14)

scans_psum:
	SSUM(Z12, Y12, X12)
	SSUM(Z14, Y14, X14)
	VMOVSS X12, (R11)
	MOVQ   yS+56(FP), CX
	VMOVSS X14, (R11)(CX*1)
	LEAQ   (R11)(CX*2), R11
	MOVQ   xS+40(FP), CX
	LEAQ   (R10)(CX*2), R10
	MOVQ   stS+16(FP), CX
	LEAQ   (R8)(CX*1), DI
	MOVQ   srcS+24(FP), CX
	LEAQ   (R9)(CX*1), SI
	SUBQ   $2, DX
	JMP    scans_pair

scans_row:
	TESTQ        DX, DX
	JLE          scans_done
	VMOVSS       (R10), X11
	VMULSS       X9, X11, X11
	VBROADCASTSS X11, Z11
	VPXORD       Z12, Z12, Z12
	XORQ         AX, AX

scans_loop16:
	LEAQ    16(AX), CX
	CMPQ    CX, BX
	JG      scans_tail
	VMOVUPS (R12)(AX*4), Z6
	VMOVUPS (R13)(AX*4), Z7
	S16((SI)(AX*4), (DI)(AX*4), Z11, Z12)
	MOVQ    CX, AX
	JMP     scans_loop16

scans_tail:
	CMPQ    AX, BX
	JGE     scans_sum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	S8((SI)(AX*4), (DI)(AX*4), Y11, Z12)

scans_sum:
	SSUM(Z12, Y12, X12)
	VMOVSS X12, (R11)
	ADDQ   stS+16(FP), DI
	ADDQ   srcS+24(FP), SI
	ADDQ   xS+40(FP), R10
	ADDQ   yS+56(FP), R11
	DECQ   DX
	JMP    scans_row

scans_done:
	VZEROUPPER
	RET

// func ssmScanSTokAVX512(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int)
// ssmScanSAVX512 in place for nTok tokens in turn, as ssmScanSTokAVX2
// (twin: ssmScanSTokTwin).
TEXT ·ssmScanSTokAVX512(SB), NOSPLIT, $0-128
	MOVQ  x+32(FP), SI
	MOVQ  y+56(FP), R9
	MOVQ  b+80(FP), R12
	MOVQ  c+96(FP), R13
	MOVQ  ed+112(FP), R14
	MOVQ  dState+24(FP), BX
	XORQ  R15, R15
	MOVL  $0xff, AX
	KMOVW AX, K1

stok_tok:
	CMPQ         R15, nTok+120(FP)
	JGE          stok_done
	VBROADCASTSS (R14)(R15*8), Z10
	VMOVSS       4(R14)(R15*8), X9
	MOVQ         st+0(FP), DI
	MOVQ         SI, R10
	MOVQ         R9, R11
	MOVQ         nRows+16(FP), DX

stok_pair:
	CMPQ         DX, $2
	JL           stok_row
	MOVQ         stS+8(FP), CX
	LEAQ         (DI)(CX*1), R8
	VMOVSS       (R10), X11
	VMULSS       X9, X11, X11
	VBROADCASTSS X11, Z11
	MOVQ         xS+40(FP), CX
	VMOVSS       (R10)(CX*1), X13
	VMULSS       X9, X13, X13
	VBROADCASTSS X13, Z13
	VPXORD       Z12, Z12, Z12
	VPXORD       Z14, Z14, Z14
	XORQ         AX, AX

stok_ploop16:
	LEAQ    16(AX), CX
	CMPQ    CX, BX
	JG      stok_ptail
	VMOVUPS (R12)(AX*4), Z6
	VMOVUPS (R13)(AX*4), Z7
	S16((DI)(AX*4), (DI)(AX*4), Z11, Z12)
	S16((R8)(AX*4), (R8)(AX*4), Z13, Z14)
	MOVQ    CX, AX
	JMP     stok_ploop16

stok_ptail:
	CMPQ    AX, BX
	JGE     stok_psum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	S8((DI)(AX*4), (DI)(AX*4), Y11, Z12)
	S8((R8)(AX*4), (R8)(AX*4), Y13, Z14)

stok_psum:
	SSUM(Z12, Y12, X12)
	SSUM(Z14, Y14, X14)
	VMOVSS X12, (R11)
	MOVQ   yS+64(FP), CX
	VMOVSS X14, (R11)(CX*1)
	LEAQ   (R11)(CX*2), R11
	MOVQ   xS+40(FP), CX
	LEAQ   (R10)(CX*2), R10
	MOVQ   stS+8(FP), CX
	LEAQ   (R8)(CX*1), DI
	SUBQ   $2, DX
	JMP    stok_pair

stok_row:
	TESTQ        DX, DX
	JLE          stok_next
	VMOVSS       (R10), X11
	VMULSS       X9, X11, X11
	VBROADCASTSS X11, Z11
	VPXORD       Z12, Z12, Z12
	XORQ         AX, AX

stok_loop16:
	LEAQ    16(AX), CX
	CMPQ    CX, BX
	JG      stok_tail
	VMOVUPS (R12)(AX*4), Z6
	VMOVUPS (R13)(AX*4), Z7
	S16((DI)(AX*4), (DI)(AX*4), Z11, Z12)
	MOVQ    CX, AX
	JMP     stok_loop16

stok_tail:
	CMPQ    AX, BX
	JGE     stok_sum
	VMOVUPS (R12)(AX*4), Y6
	VMOVUPS (R13)(AX*4), Y7
	S8((DI)(AX*4), (DI)(AX*4), Y11, Z12)

stok_sum:
	SSUM(Z12, Y12, X12)
	VMOVSS X12, (R11)
	ADDQ   stS+8(FP), DI
	ADDQ   xS+40(FP), R10
	ADDQ   yS+64(FP), R11
	DECQ   DX
	JMP    stok_row

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
