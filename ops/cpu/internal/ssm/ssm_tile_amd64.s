//go:build amd64 && !purego

#include "textflag.h"

#include "ssm_amd64.h"

// SSMROW(s0, s1, xoff, yoff): one row of ssmScanSTileAVX2's register
// tile for one token. s0, s1 hold the row's 16 scaled states; Y9/Y10 =
// b, Y11/Y12 = c; the row's w = x·q is at xoff(R11) and its 8-lane
// partial sum at yoff(R11). Each scaled state becomes fma(b, w, s), and
// the partial sum gains fma(s1, c1, s0*c0).
#define SSMROW(s0, s1, xoff, yoff) \
	VBROADCASTSS xoff(R11), Y13; \
	VFMADD231PS Y9, Y13, s0; \
	VFMADD231PS Y10, Y13, s1; \
	VMULPS Y11, s0, Y15; \
	VFMADD231PS Y12, s1, Y15; \
	VADDPS yoff(R11), Y15, Y15; \
	VMOVUPS Y15, yoff(R11)

// func ssmScanSTileAVX2(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int, buf *float32)
// The scan of nRows (a multiple of 4) rows of dState (a multiple of 16)
// over nTok (>= 1) tokens in scaled form (see ssmScaleTile): token k's
// (g, q, p, flag) at ed[4k:], the state s' = s/p, so the update is
// s' = fma(b, x·q, s') with s' first multiplied by g where flag (an
// int32) is set, y = p·(s'·c), and the state is multiplied by the last p
// at the end. Strides are in bytes. A tile of 4 rows by 16 states stays
// in registers across all the tokens, so the state is loaded and stored
// once per call and each element costs two FMA-unit operations per
// token. buf holds 40 floats per token: the 4 rows' x·q and, from float
// 8, their 8-lane partial sums of s'·c, zeroed first; tile j adds
// fma(s'[16j+8+l], c[16j+8+l], s'[16j+l]*c[16j+l]) to lane l, tiles in
// order, and y is p times hsum8 of the lanes (twin: ssmScanSTileTwin).
// On Zen 3 this measured ~1.7 cycles per 8 states per token (the
// row-pair ssmScanSTokAVX2, three FMA-unit operations per 8 states and a
// load and store of the state, ~2.2). Neither the FMA chains, the loop
// overhead (tried unrolled by two tokens) nor the y reduction (tried with
// VHADDPS) is what holds it there, and a 2-row by 32-state tile with c
// read from memory was slower (~2.1).
TEXT ·ssmScanSTileAVX2(SB), NOSPLIT, $0-136
	MOVQ st+0(FP), DI
	MOVQ x+32(FP), SI
	MOVQ y+56(FP), R9
	MOVQ nRows+16(FP), DX
	MOVQ dState+24(FP), BX
	SHLQ $2, BX

tile_group:
	CMPQ DX, $4
	JL   tile_done
	// w = x·q of the group's rows per token; partial sums zeroed.
	MOVQ SI, R10
	MOVQ ed+112(FP), CX
	MOVQ buf+128(FP), R11
	MOVQ nTok+120(FP), R13
	MOVQ xS+40(FP), R8
	VXORPS Y15, Y15, Y15

tile_xd:
	VMOVSS 4(CX), X8
	VMULSS (R10), X8, X0
	VMOVSS X0, (R11)
	VMULSS (R10)(R8*1), X8, X0
	VMOVSS X0, 4(R11)
	LEAQ (R10)(R8*2), R12
	VMULSS (R12), X8, X0
	VMOVSS X0, 8(R11)
	VMULSS (R12)(R8*1), X8, X0
	VMOVSS X0, 12(R11)
	VMOVUPS Y15, 32(R11)
	VMOVUPS Y15, 64(R11)
	VMOVUPS Y15, 96(R11)
	VMOVUPS Y15, 128(R11)
	ADDQ xT+48(FP), R10
	ADDQ $16, CX
	ADDQ $160, R11
	DECQ R13
	JNZ  tile_xd

	XORQ AX, AX

tile_col:
	MOVQ stS+8(FP), R8
	LEAQ (DI)(AX*1), R10
	LEAQ (R10)(R8*2), R14
	VMOVUPS (R10), Y0
	VMOVUPS 32(R10), Y1
	VMOVUPS (R10)(R8*1), Y2
	VMOVUPS 32(R10)(R8*1), Y3
	VMOVUPS (R14), Y4
	VMOVUPS 32(R14), Y5
	VMOVUPS (R14)(R8*1), Y6
	VMOVUPS 32(R14)(R8*1), Y7
	MOVQ b+80(FP), R12
	ADDQ AX, R12
	MOVQ c+96(FP), CX
	ADDQ AX, CX
	MOVQ ed+112(FP), R8
	MOVQ buf+128(FP), R11
	MOVQ nTok+120(FP), R13

tile_tok:
	CMPL 12(R8), $0
	JEQ  tile_noscale
	VBROADCASTSS (R8), Y8
	VMULPS Y8, Y0, Y0
	VMULPS Y8, Y1, Y1
	VMULPS Y8, Y2, Y2
	VMULPS Y8, Y3, Y3
	VMULPS Y8, Y4, Y4
	VMULPS Y8, Y5, Y5
	VMULPS Y8, Y6, Y6
	VMULPS Y8, Y7, Y7

tile_noscale:
	VMOVUPS (R12), Y9
	VMOVUPS 32(R12), Y10
	VMOVUPS (CX), Y11
	VMOVUPS 32(CX), Y12
	SSMROW(Y0, Y1, 0, 32)
	SSMROW(Y2, Y3, 4, 64)
	SSMROW(Y4, Y5, 8, 96)
	SSMROW(Y6, Y7, 12, 128)
	ADDQ $16, R8
	ADDQ bT+88(FP), R12
	ADDQ cT+104(FP), CX
	ADDQ $160, R11
	DECQ R13
	JNZ  tile_tok

	// Back to the state itself: times the last token's p.
	VBROADCASTSS -8(R8), Y8
	VMULPS Y8, Y0, Y0
	VMULPS Y8, Y1, Y1
	VMULPS Y8, Y2, Y2
	VMULPS Y8, Y3, Y3
	VMULPS Y8, Y4, Y4
	VMULPS Y8, Y5, Y5
	VMULPS Y8, Y6, Y6
	VMULPS Y8, Y7, Y7
	MOVQ stS+8(FP), R8
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, 32(R10)
	VMOVUPS Y2, (R10)(R8*1)
	VMOVUPS Y3, 32(R10)(R8*1)
	VMOVUPS Y4, (R14)
	VMOVUPS Y5, 32(R14)
	VMOVUPS Y6, (R14)(R8*1)
	VMOVUPS Y7, 32(R14)(R8*1)
	ADDQ $64, AX
	CMPQ AX, BX
	JL   tile_col

	// y of the group's rows per token: p times hsum8 of the partial sums.
	MOVQ buf+128(FP), R11
	MOVQ ed+112(FP), CX
	MOVQ nTok+120(FP), R13
	MOVQ yS+64(FP), R8
	MOVQ R9, R10

tile_y:
	LEAQ (R10)(R8*2), R12
	VMOVSS 8(CX), X8
	VMOVUPS 32(R11), Y0
	HSUM8(Y0, X0)
	VMULSS X8, X0, X0
	VMOVSS X0, (R10)
	VMOVUPS 64(R11), Y0
	HSUM8(Y0, X0)
	VMULSS X8, X0, X0
	VMOVSS X0, (R10)(R8*1)
	VMOVUPS 96(R11), Y0
	HSUM8(Y0, X0)
	VMULSS X8, X0, X0
	VMOVSS X0, (R12)
	VMOVUPS 128(R11), Y0
	HSUM8(Y0, X0)
	VMULSS X8, X0, X0
	VMOVSS X0, (R12)(R8*1)
	ADDQ yT+72(FP), R10
	ADDQ $16, CX
	ADDQ $160, R11
	DECQ R13
	JNZ  tile_y

	MOVQ stS+8(FP), R8
	LEAQ (DI)(R8*4), DI
	MOVQ xS+40(FP), R8
	LEAQ (SI)(R8*4), SI
	MOVQ yS+64(FP), R8
	LEAQ (R9)(R8*4), R9
	SUBQ $4, DX
	JMP  tile_group

tile_done:
	VZEROUPPER
	RET
