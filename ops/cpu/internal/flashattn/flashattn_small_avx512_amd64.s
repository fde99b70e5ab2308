//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT's small-head scores on AVX-512 F (see small.go for the
// twin and flashattn_small_amd64.s for the AVX2 kernel): keys in lanes,
// 64 keys (four zmm registers) to a group.

// SCZ_LOGIT(A, M, K, OFF): A (dot products) becomes the logits A*scale +
// M (two roundings), -Inf where the mask value M is -Inf (the lanes of
// K); stored at OFF(R9), NaN lanes ORed into K3, maximum into Z12.
#define SCZ_LOGIT(A, M, K, OFF) \
	VMULPS Z7, A, A; \
	VADDPS M, A, A; \
	VMOVAPS Z5, K, A; \
	VMOVUPS A, OFF(R9); \
	VCMPPS $3, A, A, K1; \
	KORW K1, K3, K3; \
	VMAXPS A, Z12, Z12

// SCZ_LOGIT0(A, M, OFF): SCZ_LOGIT where no mask value of the group is
// -Inf (nothing to blend).
#define SCZ_LOGIT0(A, M, OFF) \
	VMULPS Z7, A, A; \
	VADDPS M, A, A; \
	VMOVUPS A, OFF(R9); \
	VCMPPS $3, A, A, K1; \
	KORW K1, K3, K3; \
	VMAXPS A, Z12, Z12

// SCZ_ELEM(QOFF, B): element QOFF/4 (from R11) of the query row broadcast
// into B and FMAed with the 64 keys' elements at R12 into Z0..Z3; R12
// moves to the next element row.
#define SCZ_ELEM(QOFF, B) \
	VBROADCASTSS QOFF(R11), B; \
	VFMADD231PS (R12), B, Z0; \
	VFMADD231PS 64(R12), B, Z1; \
	VFMADD231PS 128(R12), B, Z2; \
	VFMADD231PS 192(R12), B, Z3; \
	ADDQ R8, R12

// func faScoresSmallAVX512(q *float32, d int, kt *float32, ts int, m *uint16, slope, scale float32, sc *float32, ng int, bits *uint64) (mx float32, nan bool)
//
// ScoresSmallTwin for the 64*ng keys of kt (row stride ts floats), 64 at
// a time: each element of the query row q (d elements, a positive
// multiple of 4) broadcast once and FMAed into four 16-key accumulators
// (each key's dot product the twin's FMA chain). The mask bits of keys
// 64g..64g+63 are stored as the word g of bits; a group of 64 masked keys
// is not scored. mx is the lane-wise VMAXPS maximum of the logits, nan
// whether one is NaN.
TEXT ·faScoresSmallAVX512(SB), NOSPLIT, $0-77
	MOVQ q+0(FP), SI
	MOVQ d+8(FP), BX
	MOVQ kt+16(FP), DI
	MOVQ ts+24(FP), R8
	SHLQ $2, R8           // R8: ts in bytes
	MOVQ m+32(FP), DX
	VBROADCASTSS slope+40(FP), Z6
	VBROADCASTSS scale+44(FP), Z7
	MOVQ sc+48(FP), R9
	MOVQ ng+56(FP), CX
	MOVQ bits+64(FP), R10
	MOVL $0xff800000, AX
	VMOVD AX, X5
	VBROADCASTSS X5, Z5   // Z5: -Inf
	VMOVAPS Z5, Z12       // Z12: running maximum
	KXORW K3, K3, K3      // K3: NaN lanes seen

scz_group:
	TESTQ CX, CX
	JEQ   scz_done
	VCVTPH2PS (DX), Z8
	VCVTPH2PS 32(DX), Z9
	VCVTPH2PS 64(DX), Z10
	VCVTPH2PS 96(DX), Z11
	VMULPS Z6, Z8, Z8
	VMULPS Z6, Z9, Z9
	VMULPS Z6, Z10, Z10
	VMULPS Z6, Z11, Z11
	VCMPPS $0, Z5, Z8, K4
	VCMPPS $0, Z5, Z9, K5
	VCMPPS $0, Z5, Z10, K6
	VCMPPS $0, Z5, Z11, K7
	KMOVW K4, AX
	KMOVW K5, R14
	SHLQ  $16, R14
	ORQ   R14, AX
	KMOVW K6, R14
	SHLQ  $32, R14
	ORQ   R14, AX
	KMOVW K7, R14
	SHLQ  $48, R14
	ORQ   R14, AX
	MOVQ  AX, (R10)
	CMPQ  AX, $-1
	JEQ   scz_masked
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ BX, R13

scz_dot:
	SCZ_ELEM(0, Z4)
	SCZ_ELEM(4, Z13)
	SCZ_ELEM(8, Z4)
	SCZ_ELEM(12, Z13)
	ADDQ $16, R11
	SUBQ $4, R13
	JNZ  scz_dot
	TESTQ AX, AX
	JNE   scz_some
	SCZ_LOGIT0(Z0, Z8, 0)
	SCZ_LOGIT0(Z1, Z9, 64)
	SCZ_LOGIT0(Z2, Z10, 128)
	SCZ_LOGIT0(Z3, Z11, 192)
	JMP scz_next

scz_some:
	SCZ_LOGIT(Z0, Z8, K4, 0)
	SCZ_LOGIT(Z1, Z9, K5, 64)
	SCZ_LOGIT(Z2, Z10, K6, 128)
	SCZ_LOGIT(Z3, Z11, K7, 192)
	JMP scz_next

scz_masked:
	VMOVUPS Z5, (R9)
	VMOVUPS Z5, 64(R9)
	VMOVUPS Z5, 128(R9)
	VMOVUPS Z5, 192(R9)

scz_next:
	ADDQ $128, DX
	ADDQ $256, R9
	ADDQ $256, DI
	ADDQ $8, R10
	DECQ CX
	JMP  scz_group

scz_done:
	VEXTRACTF64X4 $1, Z12, Y0
	VMAXPS Y0, Y12, Y12
	VEXTRACTF128 $1, Y12, X0
	VMAXPS X0, X12, X12
	VPERMILPS $0x4E, X12, X0
	VMAXPS X0, X12, X12
	VPERMILPS $0xB1, X12, X0
	VMAXPS X0, X12, X12
	VMOVSS X12, mx+72(FP)
	KMOVW K3, AX
	TESTL AX, AX
	SETNE nan+76(FP)
	VZEROUPPER
	RET
