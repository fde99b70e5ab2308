//go:build amd64 && !purego

#include "textflag.h"

#include "ssm_amd64.h"

// The register-tiled scaled-state scan in zmm: ssmScanSTileAVX2 with a
// tile of 4 rows by 32 states, each row's two runs of 16 held as the
// low halves (states 0-7 and 16-23) in one zmm and the high halves
// (8-15 and 24-31) in another. The state update is elementwise, and the
// partial sum of the two runs, fma(s_hi, c_hi, s_lo*c_lo), comes out of
// one zmm VMULPS and one VFMADD231PS as run 0's eight lanes (low) and
// run 1's (high), which are added to the partial sums in that order: so
// each lane takes the AVX2 kernel's operations in its order, and a last
// column of 16 states is the AVX2 kernel's (twin: ssmScanSTileTwin).

// LDST(ZA, ZB, YA, YB, m0, m1, m2, m3): ZA = [m0 | m2], ZB = [m1 | m3]
// (32-byte halves): a row's 32 states (or b, c) split into the tile's
// low and high halves.
#define LDST(ZA, ZB, YA, YB, m0, m1, m2, m3) \
	VMOVUPS      m0, YA; \
	VINSERTF64X4 $1, m2, ZA, ZA; \
	VMOVUPS      m1, YB; \
	VINSERTF64X4 $1, m3, ZB, ZB

// STST undoes LDST: the 32 states back to memory in order.
#define STST(ZA, ZB, YA, YB, m0, m1, m2, m3) \
	VMOVUPS       YA, m0; \
	VEXTRACTF64X4 $1, ZA, m2; \
	VMOVUPS       YB, m1; \
	VEXTRACTF64X4 $1, ZB, m3

// SSMROW32(sa, sb, xoff, yoff): one row of the tile for one token, as
// SSMROW on two runs of 16: Z9/Z10 = b, Z11/Z12 = c split as the states;
// w at xoff(R11), the 8-lane partial sum at yoff(R11) gains run 0's
// fma(s1, c1, s0*c0) (the low half of Z15), then run 1's (the high half).
#define SSMROW32(sa, sb, xoff, yoff) \
	VBROADCASTSS  xoff(R11), Z13; \
	VFMADD231PS   Z9, Z13, sa; \
	VFMADD231PS   Z10, Z13, sb; \
	VMULPS        Z11, sa, Z15; \
	VFMADD231PS   Z12, sb, Z15; \
	VEXTRACTF64X4 $1, Z15, Y14; \
	VADDPS        yoff(R11), Y15, Y15; \
	VADDPS        Y15, Y14, Y15; \
	VMOVUPS       Y15, yoff(R11)

// SSMROW: ssm_tile_amd64.s's, for the last column of 16.
#define SSMROW(s0, s1, xoff, yoff) \
	VBROADCASTSS xoff(R11), Y13; \
	VFMADD231PS Y9, Y13, s0; \
	VFMADD231PS Y10, Y13, s1; \
	VMULPS Y11, s0, Y15; \
	VFMADD231PS Y12, s1, Y15; \
	VADDPS yoff(R11), Y15, Y15; \
	VMOVUPS Y15, yoff(R11)

// func ssmScanSTileAVX512(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int, buf *float32)
// ssmScanSTileAVX2 with columns of 32 states in zmm and a last column of
// 16 in ymm; the same arguments and buf (twin: ssmScanSTileTwin).
TEXT ·ssmScanSTileAVX512(SB), NOSPLIT, $0-136
	MOVQ st+0(FP), DI
	MOVQ x+32(FP), SI
	MOVQ y+56(FP), R9
	MOVQ nRows+16(FP), DX
	MOVQ dState+24(FP), BX
	SHLQ $2, BX

tz_group:
	CMPQ DX, $4
	JL   tz_done
	// w = x·q of the group's rows per token; partial sums zeroed.
	MOVQ SI, R10
	MOVQ ed+112(FP), CX
	MOVQ buf+128(FP), R11
	MOVQ nTok+120(FP), R13
	MOVQ xS+40(FP), R8
	VXORPS Y15, Y15, Y15

tz_xd:
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
	JNZ  tz_xd

	XORQ AX, AX

tz_col:
	LEAQ 128(AX), R8
	CMPQ R8, BX
	JG   tz_col16
	MOVQ stS+8(FP), R8
	LEAQ (DI)(AX*1), R10
	LEAQ (R10)(R8*2), R14
	LDST(Z0, Z1, Y0, Y1, (R10), 32(R10), 64(R10), 96(R10))
	LDST(Z2, Z3, Y2, Y3, (R10)(R8*1), 32(R10)(R8*1), 64(R10)(R8*1), 96(R10)(R8*1))
	LDST(Z4, Z5, Y4, Y5, (R14), 32(R14), 64(R14), 96(R14))
	LDST(Z6, Z7, Y6, Y7, (R14)(R8*1), 32(R14)(R8*1), 64(R14)(R8*1), 96(R14)(R8*1))
	MOVQ b+80(FP), R12
	ADDQ AX, R12
	MOVQ c+96(FP), CX
	ADDQ AX, CX
	MOVQ ed+112(FP), R8
	MOVQ buf+128(FP), R11
	MOVQ nTok+120(FP), R13

tz_tok:
	CMPL 12(R8), $0
	JEQ  tz_noscale
	VBROADCASTSS (R8), Z8
	VMULPS Z8, Z0, Z0
	VMULPS Z8, Z1, Z1
	VMULPS Z8, Z2, Z2
	VMULPS Z8, Z3, Z3
	VMULPS Z8, Z4, Z4
	VMULPS Z8, Z5, Z5
	VMULPS Z8, Z6, Z6
	VMULPS Z8, Z7, Z7

tz_noscale:
	LDST(Z9, Z10, Y9, Y10, (R12), 32(R12), 64(R12), 96(R12))
	LDST(Z11, Z12, Y11, Y12, (CX), 32(CX), 64(CX), 96(CX))
	SSMROW32(Z0, Z1, 0, 32)
	SSMROW32(Z2, Z3, 4, 64)
	SSMROW32(Z4, Z5, 8, 96)
	SSMROW32(Z6, Z7, 12, 128)
	ADDQ $16, R8
	ADDQ bT+88(FP), R12
	ADDQ cT+104(FP), CX
	ADDQ $160, R11
	DECQ R13
	JNZ  tz_tok

	// Back to the state itself: times the last token's p.
	VBROADCASTSS -8(R8), Z8
	VMULPS Z8, Z0, Z0
	VMULPS Z8, Z1, Z1
	VMULPS Z8, Z2, Z2
	VMULPS Z8, Z3, Z3
	VMULPS Z8, Z4, Z4
	VMULPS Z8, Z5, Z5
	VMULPS Z8, Z6, Z6
	VMULPS Z8, Z7, Z7
	MOVQ stS+8(FP), R8
	STST(Z0, Z1, Y0, Y1, (R10), 32(R10), 64(R10), 96(R10))
	STST(Z2, Z3, Y2, Y3, (R10)(R8*1), 32(R10)(R8*1), 64(R10)(R8*1), 96(R10)(R8*1))
	STST(Z4, Z5, Y4, Y5, (R14), 32(R14), 64(R14), 96(R14))
	STST(Z6, Z7, Y6, Y7, (R14)(R8*1), 32(R14)(R8*1), 64(R14)(R8*1), 96(R14)(R8*1))
	ADDQ $128, AX
	JMP  tz_col

	// A last column of 16 states, as ssmScanSTileAVX2's.
tz_col16:
	CMPQ AX, BX
	JGE  tz_y0
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

t16_tok:
	CMPL 12(R8), $0
	JEQ  t16_noscale
	VBROADCASTSS (R8), Y8
	VMULPS Y8, Y0, Y0
	VMULPS Y8, Y1, Y1
	VMULPS Y8, Y2, Y2
	VMULPS Y8, Y3, Y3
	VMULPS Y8, Y4, Y4
	VMULPS Y8, Y5, Y5
	VMULPS Y8, Y6, Y6
	VMULPS Y8, Y7, Y7

t16_noscale:
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
	JNZ  t16_tok

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

tz_y0:
	// y of the group's rows per token: p times hsum8 of the partial sums.
	MOVQ buf+128(FP), R11
	MOVQ ed+112(FP), CX
	MOVQ nTok+120(FP), R13
	MOVQ yS+64(FP), R8
	MOVQ R9, R10

tz_y:
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
	JNZ  tz_y

	MOVQ stS+8(FP), R8
	LEAQ (DI)(R8*4), DI
	MOVQ xS+40(FP), R8
	LEAQ (SI)(R8*4), SI
	MOVQ yS+64(FP), R8
	LEAQ (R9)(R8*4), R9
	SUBQ $4, DX
	JMP  tz_group

tz_done:
	VZEROUPPER
	RET
