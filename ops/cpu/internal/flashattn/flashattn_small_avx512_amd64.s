//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT's small-head kernels on AVX-512 F (see small.go for the
// twins and flashattn_small_amd64.s for the AVX2 kernels): keys in
// lanes; the scores take 64 keys (four zmm registers) to a group, the
// value sums 16 elements to a pass.

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

// faPVZTail<>[r]: the mask bits of the keys past nk in a group of eight
// keys with r (1..7) left (flashattn_small_amd64.s's faPVTail<>).
DATA faPVZTail<>+0(SB)/8, $0
DATA faPVZTail<>+8(SB)/8, $0xfe
DATA faPVZTail<>+16(SB)/8, $0xfc
DATA faPVZTail<>+24(SB)/8, $0xf8
DATA faPVZTail<>+32(SB)/8, $0xf0
DATA faPVZTail<>+40(SB)/8, $0xe0
DATA faPVZTail<>+48(SB)/8, $0xc0
DATA faPVZTail<>+56(SB)/8, $0x80
GLOBL faPVZTail<>(SB), RODATA|NOPTR, $64

// PVZ_ROW(J, MEM, MEM8): Z(J) += Z8 * (element row J at MEM in its low
// half, element row J+8 at MEM8 in its high half), the 8 keys' values.
#define PVZ_ROW(J, MEM, MEM8) \
	VMOVUPS MEM, Y9; \
	VINSERTF64X4 $1, MEM8, Z9, Z9; \
	VFMADD231PS Z9, Z8, J

// PVZ_ROWM(J, MEM, MEM8): PVZ_ROW with the masked lanes (clear in K1) of
// the values zeroed.
#define PVZ_ROWM(J, MEM, MEM8) \
	VMOVUPS MEM, Y9; \
	VINSERTF64X4 $1, MEM8, Z9, Z9; \
	VMOVAPS.Z Z9, K1, Z9; \
	VFMADD231PS Z9, Z8, J

// PVZ_REDUCE(A0, .., A7, T, OFF): A0..A7 (8-lane accumulators of eight
// elements, as ymm) to their lane sums ((l0+l1)+(l2+l3)) +
// ((l4+l5)+(l6+l7)), added to acc at OFF(DI) (faValuesSmallTAVX2's
// reduction).
#define PVZ_REDUCE(A0, A1, A2, A3, A4, A5, A6, A7, OFF) \
	VHADDPS A1, A0, A0; \
	VHADDPS A3, A2, A2; \
	VHADDPS A2, A0, A0; \
	VHADDPS A5, A4, A4; \
	VHADDPS A7, A6, A6; \
	VHADDPS A6, A4, A4; \
	VPERM2F128 $0x20, A4, A0, A1; \
	VPERM2F128 $0x31, A4, A0, A2; \
	VADDPS A2, A1, A1; \
	VADDPS OFF(DI), A1, A1; \
	VMOVUPS A1, OFF(DI)

// func faValuesSmallTAVX512(acc, p, vt *float32, ts, nk, n int, bits *uint64)
//
// faValuesSmallTAVX2 (ValuesSmallTTwin) for 16 elements of acc a pass (n
// a positive multiple of 16): Z0..Z7 hold the eight lane accumulators of
// element j (low half) and element j+8 (high half), the group's eight
// probabilities in both halves of Z8, each lane one FMA per group of 8
// keys as in the AVX2 kernel (the masked lanes' p and values zeroed,
// groups masked whole skipped); the halves are then reduced as there.
TEXT ·faValuesSmallTAVX512(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ ts+24(FP), R8
	SHLQ $2, R8           // R8: ts in bytes
	LEAQ (R8)(R8*2), R12  // R12: 3*ts in bytes
	MOVQ nk+32(FP), BX
	MOVQ n+40(FP), DX
	SHRQ $4, DX           // DX: passes
	MOVQ vt+16(FP), R15   // R15: the pass's first element row

pvz_pass:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ p+8(FP), SI
	MOVQ R15, R10         // R10: element row 0 at key t
	XORQ CX, CX           // CX: t

pvz_group:
	CMPQ CX, BX
	JGE  pvz_reduce
	MOVQ CX, R13
	SHRQ $6, R13
	MOVQ bits+48(FP), R14
	MOVQ (R14)(R13*8), AX
	SHRQ CX, AX
	ANDQ $0xff, AX
	MOVQ BX, R14
	SUBQ CX, R14
	CMPQ R14, $8
	JGE  pvz_full
	LEAQ faPVZTail<>(SB), R13
	ORQ  (R13)(R14*8), AX

pvz_full:
	CMPQ AX, $0xff
	JEQ  pvz_next
	LEAQ (R10)(R8*4), R11 // R11: element row 4 at key t
	LEAQ (R10)(R8*8), R9  // R9: element row 8
	LEAQ (R9)(R8*4), R13  // R13: element row 12
	VBROADCASTF64X4 (SI), Z8
	TESTQ AX, AX
	JNE  pvz_masked
	PVZ_ROW(Z0, (R10), (R9))
	PVZ_ROW(Z1, (R10)(R8*1), (R9)(R8*1))
	PVZ_ROW(Z2, (R10)(R8*2), (R9)(R8*2))
	PVZ_ROW(Z3, (R10)(R12*1), (R9)(R12*1))
	PVZ_ROW(Z4, (R11), (R13))
	PVZ_ROW(Z5, (R11)(R8*1), (R13)(R8*1))
	PVZ_ROW(Z6, (R11)(R8*2), (R13)(R8*2))
	PVZ_ROW(Z7, (R11)(R12*1), (R13)(R12*1))
	JMP pvz_next

pvz_masked:
	NOTL AX
	ANDL $0xff, AX
	MOVL AX, R14
	SHLL $8, R14
	ORL  R14, AX
	KMOVW AX, K1          // K1: the live lanes, in both halves
	VMOVAPS.Z Z8, K1, Z8
	PVZ_ROWM(Z0, (R10), (R9))
	PVZ_ROWM(Z1, (R10)(R8*1), (R9)(R8*1))
	PVZ_ROWM(Z2, (R10)(R8*2), (R9)(R8*2))
	PVZ_ROWM(Z3, (R10)(R12*1), (R9)(R12*1))
	PVZ_ROWM(Z4, (R11), (R13))
	PVZ_ROWM(Z5, (R11)(R8*1), (R13)(R8*1))
	PVZ_ROWM(Z6, (R11)(R8*2), (R13)(R8*2))
	PVZ_ROWM(Z7, (R11)(R12*1), (R13)(R12*1))

pvz_next:
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $8, CX
	JMP  pvz_group

pvz_reduce:
	// The high halves (elements 8..15) to Y8..Y15 first: the VEX
	// reduction of the low halves clears the upper bits.
	VEXTRACTF64X4 $1, Z0, Y8
	VEXTRACTF64X4 $1, Z1, Y9
	VEXTRACTF64X4 $1, Z2, Y10
	VEXTRACTF64X4 $1, Z3, Y11
	VEXTRACTF64X4 $1, Z4, Y12
	VEXTRACTF64X4 $1, Z5, Y13
	VEXTRACTF64X4 $1, Z6, Y14
	VEXTRACTF64X4 $1, Z7, Y15
	PVZ_REDUCE(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, 0)
	PVZ_REDUCE(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15, 32)
	ADDQ $64, DI
	MOVQ R8, R9
	SHLQ $4, R9
	ADDQ R9, R15          // the next pass's element rows
	DECQ DX
	JNZ  pvz_pass
	VZEROUPPER
	RET
