//go:build amd64 && !purego

#include "textflag.h"
#include "sgemm_avx512_amd64.h"

// The six-row by thirty-two-column float32 micro-kernel of the packed gemm
// path (package cpu's mul_mat_sgemm.go) in AVX-512 F: two adjacent
// sixteen-column panels at once, k unrolled by four. Twin2 in
// sgemm_avx512_amd64.go (Twin on each panel) is its bit-exact twin.

// SG6Z(boff, aoff) is one k step: the 16 activation values of panel 0 at
// boff(DI) and of panel 1 at boff(DI)(R10*1) times each of the six weight
// rows' element at aoff, added into Z0-Z11 (row r in Z(2r) for panel 0,
// Z(2r+1) for panel 1).
#define SG6Z(boff, aoff) \
	VMOVUPS      boff(DI), Z12; \
	VMOVUPS      boff(DI)(R10*1), Z13; \
	VBROADCASTSS aoff(SI), Z14; \
	VBROADCASTSS aoff(SI)(R8*1), Z15; \
	VBROADCASTSS aoff(SI)(R8*2), Z16; \
	VBROADCASTSS aoff(R9), Z17; \
	VBROADCASTSS aoff(R9)(R8*1), Z18; \
	VBROADCASTSS aoff(R9)(R8*2), Z19; \
	VFMADD231PS  Z12, Z14, Z0; \
	VFMADD231PS  Z13, Z14, Z1; \
	VFMADD231PS  Z12, Z15, Z2; \
	VFMADD231PS  Z13, Z15, Z3; \
	VFMADD231PS  Z12, Z16, Z4; \
	VFMADD231PS  Z13, Z16, Z5; \
	VFMADD231PS  Z12, Z17, Z6; \
	VFMADD231PS  Z13, Z17, Z7; \
	VFMADD231PS  Z12, Z18, Z8; \
	VFMADD231PS  Z13, Z18, Z9; \
	VFMADD231PS  Z12, Z19, Z10; \
	VFMADD231PS  Z13, Z19, Z11

// func sgemm6x32AVX512(kc int, a *float32, lda int, b *float32, bstride int, c *float32, ldc int, pf *byte, pfstep int)
//
// c[r*ldc + p*16 + j] += sum over i < kc of a[r*lda + i] * b[p*bstride +
// 16*i + j] for r < 6, p < 2 and j < 16: twelve 16-lane FMA accumulators,
// two per row, each output summed over i in order by FMA from zero, then
// added to c. lda, bstride and ldc are in elements. Each pass of the
// unrolled loop (four k steps) also prefetches the 64-byte line at pf
// into L1, pf advancing pfstep bytes a pass (floor(kc/4) lines in all):
// the caller points it at the panels its next calls read (pfstep 64), or
// down a column of weight rows it widens next (pfstep the row stride).
TEXT ·sgemm6x32AVX512(SB), NOSPLIT, $0-72
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ bstride+32(FP), R10
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R11
	MOVQ pf+56(FP), R12
	MOVQ pfstep+64(FP), R13
	SHLQ $2, R8
	SHLQ $2, R10
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
	ADDQ SI, R9
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ CX, BX
	SHRQ $2, BX
	JEQ  sg6ztail

sg6zloop4:
	PREFETCHT0 (R12)
	SG6Z(0, 0)
	SG6Z(64, 4)
	SG6Z(128, 8)
	SG6Z(192, 12)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $256, DI
	ADDQ R13, R12
	DECQ BX
	JNE  sg6zloop4

sg6ztail:
	ANDQ $3, CX
	JEQ  sg6zstore

sg6zloop1:
	SG6Z(0, 0)
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $64, DI
	DECQ CX
	JNE  sg6zloop1

sg6zstore:
	SG6ZSTORE(Z0, Z1)
	ADDQ R11, DX
	SG6ZSTORE(Z2, Z3)
	ADDQ R11, DX
	SG6ZSTORE(Z4, Z5)
	ADDQ R11, DX
	SG6ZSTORE(Z6, Z7)
	ADDQ R11, DX
	SG6ZSTORE(Z8, Z9)
	ADDQ R11, DX
	SG6ZSTORE(Z10, Z11)
	VZEROUPPER
	RET
