//go:build amd64 && !purego

#include "textflag.h"

// The six-row by sixteen-column float32 micro-kernel of the packed gemm
// path (package cpu's mul_mat_sgemm.go), k unrolled by four. Twin in sgemm.go is its
// bit-exact twin.

// SG6STEP(boff, boff2, aoff) is one k step: the 16 activation values at
// boff(DI) and boff2(DI) (boff+32) times each of the six weight rows'
// element at aoff, added into Y0-Y11 (row r in Y(2r), Y(2r+1)).
#define SG6STEP(boff, boff2, aoff) \
	VMOVUPS      boff(DI), Y12; \
	VMOVUPS      boff2(DI), Y13; \
	VBROADCASTSS aoff(SI), Y14; \
	VFMADD231PS  Y12, Y14, Y0; \
	VFMADD231PS  Y13, Y14, Y1; \
	VBROADCASTSS aoff(SI)(R8*1), Y15; \
	VFMADD231PS  Y12, Y15, Y2; \
	VFMADD231PS  Y13, Y15, Y3; \
	VBROADCASTSS aoff(SI)(R8*2), Y14; \
	VFMADD231PS  Y12, Y14, Y4; \
	VFMADD231PS  Y13, Y14, Y5; \
	VBROADCASTSS aoff(R9), Y15; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7; \
	VBROADCASTSS aoff(R9)(R8*1), Y14; \
	VFMADD231PS  Y12, Y14, Y8; \
	VFMADD231PS  Y13, Y14, Y9; \
	VBROADCASTSS aoff(R9)(R8*2), Y15; \
	VFMADD231PS  Y12, Y15, Y10; \
	VFMADD231PS  Y13, Y15, Y11

// SG6STORE(r0, r1) adds the accumulators of one row to c at DX.
#define SG6STORE(r0, r1) \
	VADDPS  (DX), r0, r0; \
	VMOVUPS r0, (DX); \
	VADDPS  32(DX), r1, r1; \
	VMOVUPS r1, 32(DX)

// func sgemm6x16AVX2(kc int, a *float32, lda int, b *float32, c *float32, ldc int)
//
// c[r*ldc + j] += sum over i < kc of a[r*lda + i] * b[16*i + j] for r < 6
// and j < 16: twelve 8-lane FMA accumulators, two per row, each output
// summed over i in order by FMA from zero, then added to c.
TEXT ·sgemm6x16AVX2(SB), NOSPLIT, $0-48
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R11
	SHLQ $2, R8
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
	ADDQ SI, R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ CX, BX
	SHRQ $2, BX
	JEQ  sg6tail

sg6loop4:
	SG6STEP(0, 32, 0)
	SG6STEP(64, 96, 4)
	SG6STEP(128, 160, 8)
	SG6STEP(192, 224, 12)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $256, DI
	DECQ BX
	JNE  sg6loop4

sg6tail:
	ANDQ $3, CX
	JEQ  sg6store

sg6loop1:
	SG6STEP(0, 32, 0)
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $64, DI
	DECQ CX
	JNE  sg6loop1

sg6store:
	SG6STORE(Y0, Y1)
	ADDQ R11, DX
	SG6STORE(Y2, Y3)
	ADDQ R11, DX
	SG6STORE(Y4, Y5)
	ADDQ R11, DX
	SG6STORE(Y6, Y7)
	ADDQ R11, DX
	SG6STORE(Y8, Y9)
	ADDQ R11, DX
	SG6STORE(Y10, Y11)
	VZEROUPPER
	RET
