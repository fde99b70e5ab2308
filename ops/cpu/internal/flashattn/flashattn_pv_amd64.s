//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT block kernels (see flashattn_amd64.go and the twins in
// twin.go): the weighted sums of the value
// rows, f16 and float32.

// PV_KEYL(LD, S): the three rows' accumulators of a chunk of 32 floats
// (Y0..Y3, Y4..Y7, Y8..Y11) take the chunk of value row (R9), its runs of
// 8 loaded as floats by LD from S bytes apart, times the rows' weights
// (broadcast in Y13..Y15), in element order.
#define PV_KEYL(LD, S) \
	LD (R9), Y12; \
	VFMADD231PS Y12, Y13, Y0; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y12, Y15, Y8; \
	LD S(R9), Y12; \
	VFMADD231PS Y12, Y13, Y1; \
	VFMADD231PS Y12, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y9; \
	LD 2*S(R9), Y12; \
	VFMADD231PS Y12, Y13, Y2; \
	VFMADD231PS Y12, Y14, Y6; \
	VFMADD231PS Y12, Y15, Y10; \
	LD 3*S(R9), Y12; \
	VFMADD231PS Y12, Y13, Y3; \
	VFMADD231PS Y12, Y14, Y7; \
	VFMADD231PS Y12, Y15, Y11

// PV_KEY: PV_KEYL for f16 value rows.
#define PV_KEY PV_KEYL(VCVTPH2PS, 16)

// func faPV3AVX2(a0, a1, a2, p0, p1, p2 *float32, v *uint16, vs, nk, n int)
//
// For each of the nk value rows v + t*vs bytes (f16, n elements, n a
// positive multiple of 8) in order: a_r += p_r[t] * row, one FMA per
// element, for the three rows r. The accumulators go in chunks of 32
// floats per row (12 registers), then chunks of 8, and stay in registers
// over all nk keys.
TEXT ·faPV3AVX2(SB), NOSPLIT, $0-80
	MOVQ a0+0(FP), SI
	MOVQ a1+8(FP), DI
	MOVQ a2+16(FP), R8
	MOVQ v+48(FP), R13
	MOVQ vs+56(FP), BX
	MOVQ BX, R14
	SHLQ $6, R14          // R14: 64 value rows on (the next tile's row)
	MOVQ n+72(FP), DX
	SHLQ $2, DX           // DX: accumulator row bytes
	XORQ AX, AX           // AX: byte offset into the accumulators

pv_chunk32:
	LEAQ 128(AX), R9
	CMPQ R9, DX
	JG   pv_chunk8
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMOVUPS (DI)(AX*1), Y4
	VMOVUPS 32(DI)(AX*1), Y5
	VMOVUPS 64(DI)(AX*1), Y6
	VMOVUPS 96(DI)(AX*1), Y7
	VMOVUPS (R8)(AX*1), Y8
	VMOVUPS 32(R8)(AX*1), Y9
	VMOVUPS 64(R8)(AX*1), Y10
	VMOVUPS 96(R8)(AX*1), Y11
	MOVQ AX, R9
	SHRQ $1, R9
	ADDQ R13, R9          // R9: value row t at this chunk
	MOVQ p0+24(FP), R10   // R10..R12: the rows' weights of key t
	MOVQ p1+32(FP), R11
	MOVQ p2+40(FP), R12
	MOVQ nk+64(FP), CX    // CX: keys left

pv_key32:
	TESTQ CX, CX
	JLE   pv_store32
	VBROADCASTSS (R10), Y13
	VBROADCASTSS (R11), Y14
	VBROADCASTSS (R12), Y15
	PREFETCHT0 (R9)(R14*1) // this chunk of the next tile's row
	PV_KEY
	ADDQ BX, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ CX
	JMP  pv_key32

pv_store32:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y1, 32(SI)(AX*1)
	VMOVUPS Y2, 64(SI)(AX*1)
	VMOVUPS Y3, 96(SI)(AX*1)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, 32(DI)(AX*1)
	VMOVUPS Y6, 64(DI)(AX*1)
	VMOVUPS Y7, 96(DI)(AX*1)
	VMOVUPS Y8, (R8)(AX*1)
	VMOVUPS Y9, 32(R8)(AX*1)
	VMOVUPS Y10, 64(R8)(AX*1)
	VMOVUPS Y11, 96(R8)(AX*1)
	ADDQ $128, AX
	JMP  pv_chunk32

pv_chunk8:
	CMPQ AX, DX
	JGE  pv_done
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS (DI)(AX*1), Y4
	VMOVUPS (R8)(AX*1), Y8
	MOVQ AX, R9
	SHRQ $1, R9
	ADDQ R13, R9
	MOVQ p0+24(FP), R10
	MOVQ p1+32(FP), R11
	MOVQ p2+40(FP), R12
	MOVQ nk+64(FP), CX

pv_key8:
	TESTQ CX, CX
	JLE   pv_store8
	VBROADCASTSS (R10), Y13
	VBROADCASTSS (R11), Y14
	VBROADCASTSS (R12), Y15
	VCVTPH2PS (R9), Y12
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y12, Y15, Y8
	ADDQ BX, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ CX
	JMP  pv_key8

pv_store8:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y8, (R8)(AX*1)
	ADDQ $32, AX
	JMP  pv_chunk8

pv_done:
	VZEROUPPER
	RET

// PV1_KEY(OFF, A0, A1, A2, A3): accumulators A0..A3 (32 floats) take the
// value row chunk at OFF(R9) times the weight in Y15.
#define PV1_KEY(OFF, A0, A1, A2, A3) \
	VCVTPH2PS OFF(R9), Y12; \
	VFMADD231PS Y12, Y15, A0; \
	VCVTPH2PS OFF+16(R9), Y13; \
	VFMADD231PS Y13, Y15, A1; \
	VCVTPH2PS OFF+32(R9), Y12; \
	VFMADD231PS Y12, Y15, A2; \
	VCVTPH2PS OFF+48(R9), Y13; \
	VFMADD231PS Y13, Y15, A3

// func faPV1AVX2(a, p *float32, v *uint16, vs, nk, n int)
//
// faPV3AVX2 for one row: for each of the nk value rows v + t*vs bytes in
// order, a += p[t] * row (n a positive multiple of 8), the accumulator in
// chunks of 64 floats (8 registers), then of 8.
TEXT ·faPV1AVX2(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ v+16(FP), R13
	MOVQ vs+24(FP), BX
	MOVQ n+40(FP), DX
	SHLQ $2, DX           // DX: accumulator bytes
	XORQ AX, AX           // AX: byte offset into the accumulator

pv1_chunk64:
	LEAQ 256(AX), R9
	CMPQ R9, DX
	JG   pv1_chunk8
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMOVUPS 128(SI)(AX*1), Y4
	VMOVUPS 160(SI)(AX*1), Y5
	VMOVUPS 192(SI)(AX*1), Y6
	VMOVUPS 224(SI)(AX*1), Y7
	MOVQ AX, R9
	SHRQ $1, R9
	ADDQ R13, R9          // R9: value row t at this chunk
	MOVQ p+8(FP), R10     // R10: weight of key t
	MOVQ nk+32(FP), CX

pv1_key64:
	TESTQ CX, CX
	JLE   pv1_store64
	VBROADCASTSS (R10), Y15
	PV1_KEY(0, Y0, Y1, Y2, Y3)
	PV1_KEY(64, Y4, Y5, Y6, Y7)
	ADDQ BX, R9
	ADDQ $4, R10
	DECQ CX
	JMP  pv1_key64

pv1_store64:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y1, 32(SI)(AX*1)
	VMOVUPS Y2, 64(SI)(AX*1)
	VMOVUPS Y3, 96(SI)(AX*1)
	VMOVUPS Y4, 128(SI)(AX*1)
	VMOVUPS Y5, 160(SI)(AX*1)
	VMOVUPS Y6, 192(SI)(AX*1)
	VMOVUPS Y7, 224(SI)(AX*1)
	ADDQ $256, AX
	JMP  pv1_chunk64

pv1_chunk8:
	CMPQ AX, DX
	JGE  pv1_done
	VMOVUPS (SI)(AX*1), Y0
	MOVQ AX, R9
	SHRQ $1, R9
	ADDQ R13, R9
	MOVQ p+8(FP), R10
	MOVQ nk+32(FP), CX

pv1_key8:
	TESTQ CX, CX
	JLE   pv1_store8
	VBROADCASTSS (R10), Y15
	VCVTPH2PS (R9), Y12
	VFMADD231PS Y12, Y15, Y0
	ADDQ BX, R9
	ADDQ $4, R10
	DECQ CX
	JMP  pv1_key8

pv1_store8:
	VMOVUPS Y0, (SI)(AX*1)
	ADDQ $32, AX
	JMP  pv1_chunk8

pv1_done:
	VZEROUPPER
	RET

// PVF_KEY: PV_KEYL for float32 value rows.
#define PVF_KEY PV_KEYL(VMOVUPS, 32)

// func faPVF3AVX2(a0, a1, a2, p0, p1, p2, v *float32, vs, nk, n int)
//
// faPV3AVX2 for float32 value rows (v + t*vs bytes).
TEXT ·faPVF3AVX2(SB), NOSPLIT, $0-80
	MOVQ a0+0(FP), SI
	MOVQ a1+8(FP), DI
	MOVQ a2+16(FP), R8
	MOVQ v+48(FP), R13
	MOVQ vs+56(FP), BX
	MOVQ n+72(FP), DX
	SHLQ $2, DX
	XORQ AX, AX

pvf_chunk32:
	LEAQ 128(AX), R9
	CMPQ R9, DX
	JG   pvf_chunk8
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMOVUPS (DI)(AX*1), Y4
	VMOVUPS 32(DI)(AX*1), Y5
	VMOVUPS 64(DI)(AX*1), Y6
	VMOVUPS 96(DI)(AX*1), Y7
	VMOVUPS (R8)(AX*1), Y8
	VMOVUPS 32(R8)(AX*1), Y9
	VMOVUPS 64(R8)(AX*1), Y10
	VMOVUPS 96(R8)(AX*1), Y11
	LEAQ (R13)(AX*1), R9
	MOVQ p0+24(FP), R10
	MOVQ p1+32(FP), R11
	MOVQ p2+40(FP), R12
	MOVQ nk+64(FP), CX

pvf_key32:
	TESTQ CX, CX
	JLE   pvf_store32
	VBROADCASTSS (R10), Y13
	VBROADCASTSS (R11), Y14
	VBROADCASTSS (R12), Y15
	PVF_KEY
	ADDQ BX, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ CX
	JMP  pvf_key32

pvf_store32:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y1, 32(SI)(AX*1)
	VMOVUPS Y2, 64(SI)(AX*1)
	VMOVUPS Y3, 96(SI)(AX*1)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, 32(DI)(AX*1)
	VMOVUPS Y6, 64(DI)(AX*1)
	VMOVUPS Y7, 96(DI)(AX*1)
	VMOVUPS Y8, (R8)(AX*1)
	VMOVUPS Y9, 32(R8)(AX*1)
	VMOVUPS Y10, 64(R8)(AX*1)
	VMOVUPS Y11, 96(R8)(AX*1)
	ADDQ $128, AX
	JMP  pvf_chunk32

pvf_chunk8:
	CMPQ AX, DX
	JGE  pvf_done
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS (DI)(AX*1), Y4
	VMOVUPS (R8)(AX*1), Y8
	LEAQ (R13)(AX*1), R9
	MOVQ p0+24(FP), R10
	MOVQ p1+32(FP), R11
	MOVQ p2+40(FP), R12
	MOVQ nk+64(FP), CX

pvf_key8:
	TESTQ CX, CX
	JLE   pvf_store8
	VBROADCASTSS (R10), Y13
	VBROADCASTSS (R11), Y14
	VBROADCASTSS (R12), Y15
	VMOVUPS (R9), Y12
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y12, Y15, Y8
	ADDQ BX, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	DECQ CX
	JMP  pvf_key8

pvf_store8:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y8, (R8)(AX*1)
	ADDQ $32, AX
	JMP  pvf_chunk8

pvf_done:
	VZEROUPPER
	RET

// PVF1_KEY(OFF, A0, A1, A2, A3): PV1_KEY for float32 value rows.
#define PVF1_KEY(OFF, A0, A1, A2, A3) \
	VFMADD231PS OFF(R9), Y15, A0; \
	VFMADD231PS OFF+32(R9), Y15, A1; \
	VFMADD231PS OFF+64(R9), Y15, A2; \
	VFMADD231PS OFF+96(R9), Y15, A3

// func faPVF1AVX2(a, p, v *float32, vs, nk, n int)
//
// faPV1AVX2 for float32 value rows (v + t*vs bytes).
TEXT ·faPVF1AVX2(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ v+16(FP), R13
	MOVQ vs+24(FP), BX
	MOVQ n+40(FP), DX
	SHLQ $2, DX
	XORQ AX, AX

pvf1_chunk64:
	LEAQ 256(AX), R9
	CMPQ R9, DX
	JG   pvf1_chunk8
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMOVUPS 128(SI)(AX*1), Y4
	VMOVUPS 160(SI)(AX*1), Y5
	VMOVUPS 192(SI)(AX*1), Y6
	VMOVUPS 224(SI)(AX*1), Y7
	LEAQ (R13)(AX*1), R9
	MOVQ p+8(FP), R10
	MOVQ nk+32(FP), CX

pvf1_key64:
	TESTQ CX, CX
	JLE   pvf1_store64
	VBROADCASTSS (R10), Y15
	PVF1_KEY(0, Y0, Y1, Y2, Y3)
	PVF1_KEY(128, Y4, Y5, Y6, Y7)
	ADDQ BX, R9
	ADDQ $4, R10
	DECQ CX
	JMP  pvf1_key64

pvf1_store64:
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS Y1, 32(SI)(AX*1)
	VMOVUPS Y2, 64(SI)(AX*1)
	VMOVUPS Y3, 96(SI)(AX*1)
	VMOVUPS Y4, 128(SI)(AX*1)
	VMOVUPS Y5, 160(SI)(AX*1)
	VMOVUPS Y6, 192(SI)(AX*1)
	VMOVUPS Y7, 224(SI)(AX*1)
	ADDQ $256, AX
	JMP  pvf1_chunk64

pvf1_chunk8:
	CMPQ AX, DX
	JGE  pvf1_done
	VMOVUPS (SI)(AX*1), Y0
	LEAQ (R13)(AX*1), R9
	MOVQ p+8(FP), R10
	MOVQ nk+32(FP), CX

pvf1_key8:
	TESTQ CX, CX
	JLE   pvf1_store8
	VBROADCASTSS (R10), Y15
	VFMADD231PS (R9), Y15, Y0
	ADDQ BX, R9
	ADDQ $4, R10
	DECQ CX
	JMP  pvf1_key8

pvf1_store8:
	VMOVUPS Y0, (SI)(AX*1)
	ADDQ $32, AX
	JMP  pvf1_chunk8

pvf1_done:
	VZEROUPPER
	RET

