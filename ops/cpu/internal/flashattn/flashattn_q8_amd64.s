//go:build amd64 && !purego

#include "textflag.h"
#include "flashattn_amd64.h"

// FLASH_ATTN_EXT block kernels (see flashattn_amd64.go and the twins in
// twin.go): the q8_0 key scores (their query rows quantized to q8_0)
// and the widening of q8_0 rows.

// int16 ones for VPMADDWD.
DATA faones<>+0(SB)/8, $0x0001000100010001
DATA faones<>+8(SB)/8, $0x0001000100010001
DATA faones<>+16(SB)/8, $0x0001000100010001
DATA faones<>+24(SB)/8, $0x0001000100010001
GLOBL faones<>(SB), RODATA|NOPTR, $32

// Q8ROW(Q, KD, D, A): accumulator A += (the int32 lane sums of key codes
// (sign in Y12, |k| in Y13) times the q8_0 codes of block DX of query
// row Q) * (d_k * d_q), d_k the f16 at (KD)(DX) widened into Y15 first
// and d_q the 8 floats at (D)(R12). As dotQ8_0Q8_0AVX2's SIGNED_DOT and
// SCALE_F16.
#define Q8ROW(Q, KD, D, A) \
	VMOVDQU 2(Q)(DX*1), Y14; \
	VPSIGNB Y12, Y14, Y14; \
	VPMADDUBSW Y14, Y13, Y14; \
	VPMADDWD faones<>(SB), Y14, Y14; \
	VCVTDQ2PS Y14, Y14; \
	VPBROADCASTW (KD)(DX*1), X15; \
	VCVTPH2PS X15, Y15; \
	VMULPS (D)(R12*1), Y15, Y15; \
	VFMADD231PS Y15, Y14, A

// Q8BLK(A0..A5): block DX of keys 0 (R9) and 1 (R10) against the three
// query rows: key j, row r into A(3j+r).
#define Q8BLK(A0, A1, A2, A3, A4, A5) \
	VMOVDQU 2(R9)(DX*1), Y12; \
	VPSIGNB Y12, Y12, Y13; \
	Q8ROW(SI, R9, R11, A0); \
	Q8ROW(DI, R9, R13, A1); \
	Q8ROW(R8, R9, BX, A2); \
	VMOVDQU 2(R10)(DX*1), Y12; \
	VPSIGNB Y12, Y12, Y13; \
	Q8ROW(SI, R10, R11, A3); \
	Q8ROW(DI, R10, R13, A4); \
	Q8ROW(R8, R10, BX, A5)

// func faQ8QK3x2AVX2(q0, q1, q2 *byte, d0, d1, d2 *float32, k *byte, ks, ng, nb int, o0, o1, o2 *float32)
//
// For ng groups of two q8_0 keys (key j at k + j*ks bytes, j < 2*ng, nb
// blocks): o_r[j] = the q8_0 dot product of query row q_r (nb q8_0
// blocks, its scales widened and repeated 8 times per block in d_r) with
// key row j, summed as dotQ8_0Q8_0AVX2 sums it: block i's lane sums
// times d_k*d_q into accumulator i%2 (Y(3j+r), Y(6+3j+r)), the two
// added, then hsum8.
TEXT ·faQ8QK3x2AVX2(SB), NOSPLIT, $0-104
	MOVQ q0+0(FP), SI
	MOVQ q1+8(FP), DI
	MOVQ q2+16(FP), R8
	MOVQ d0+24(FP), R11
	MOVQ d1+32(FP), R13
	MOVQ d2+40(FP), BX
	MOVQ k+48(FP), R9
	MOVQ ks+56(FP), AX
	LEAQ (R9)(AX*1), R10
	XORQ AX, AX           // AX: 8 * group

q8qk_group:
	MOVQ ng+64(FP), CX
	SHLQ $3, CX
	CMPQ AX, CX
	JGE  q8qk_done
	QK_ZERO
	XORQ DX, DX           // DX: block byte offset (34 per block)
	XORQ R12, R12         // R12: scale offset (32 per block)
	MOVQ nb+72(FP), CX

q8qk_two:
	CMPQ CX, $2
	JLT  q8qk_one
	Q8BLK(Y0, Y1, Y2, Y3, Y4, Y5)
	ADDQ $34, DX
	ADDQ $32, R12
	Q8BLK(Y6, Y7, Y8, Y9, Y10, Y11)
	ADDQ $34, DX
	ADDQ $32, R12
	SUBQ $2, CX
	JMP  q8qk_two

q8qk_one:
	TESTQ CX, CX
	JEQ   q8qk_reduce
	Q8BLK(Y0, Y1, Y2, Y3, Y4, Y5)

q8qk_reduce:
	VADDPS Y6, Y0, Y0
	VADDPS Y7, Y1, Y1
	VADDPS Y8, Y2, Y2
	VADDPS Y9, Y3, Y3
	VADDPS Y10, Y4, Y4
	VADDPS Y11, Y5, Y5
	MOVQ o0+80(FP), DX
	MOVQ o1+88(FP), R12
	QK_REDUCE2(Y0, Y3, Y1, Y4)
	VMOVLPS X14, (DX)(AX*1)
	VMOVHPS X14, (R12)(AX*1)
	MOVQ o2+96(FP), DX
	QK_REDUCE2(Y2, Y5, Y2, Y5)
	VMOVLPS X14, (DX)(AX*1)

	// Next group: the key rows move on by 2*ks.
	MOVQ ks+56(FP), DX
	SHLQ $1, DX
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ $8, AX
	JMP  q8qk_group

q8qk_done:
	VZEROUPPER
	RET

// func faDequantQ8AVX2(dst *float32, src *byte, nb int)
//
// dst = the nb q8_0 blocks at src widened: element j of a block is
// float32(code) * d, as quant.DequantizeRow and axpyQ8_0 form it.
TEXT ·faDequantQ8AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX

dq8_loop:
	TESTQ CX, CX
	JLE   dq8_done
	VPBROADCASTW (SI), X0
	VCVTPH2PS X0, Y0
	VPMOVSXBD 2(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)
	VPMOVSXBD 10(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, 32(DI)
	VPMOVSXBD 18(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, 64(DI)
	VPMOVSXBD 26(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y0, Y1, Y1
	VMOVUPS Y1, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JMP  dq8_loop

dq8_done:
	VZEROUPPER
	RET

// Q8KEY1(KR, A): accumulator A += (the int32 lane sums of the codes of
// block DX of key row KR times the query codes in Y8) * (d_k * d_q), d_q
// the 8 floats in Y9: Q8ROW with the query block in registers.
#define Q8KEY1(KR, A) \
	VMOVDQU 2(KR)(DX*1), Y12; \
	VPSIGNB Y12, Y12, Y13; \
	VPSIGNB Y12, Y8, Y14; \
	VPMADDUBSW Y14, Y13, Y14; \
	VPMADDWD faones<>(SB), Y14, Y14; \
	VCVTDQ2PS Y14, Y14; \
	VPBROADCASTW (KR)(DX*1), X15; \
	VCVTPH2PS X15, Y15; \
	VMULPS Y9, Y15, Y15; \
	VFMADD231PS Y15, Y14, A

// Q8BLK1(A0, A1, A2, A3): block DX (scales at R12) of keys 0..3 against
// the query row.
#define Q8BLK1(A0, A1, A2, A3) \
	VMOVDQU 2(SI)(DX*1), Y8; \
	VMOVUPS (DI)(R12*1), Y9; \
	Q8KEY1(R8, A0); \
	Q8KEY1(R9, A1); \
	Q8KEY1(R10, A2); \
	Q8KEY1(R11, A3)

// func faQ8QK1x4AVX2(q *byte, dq *float32, k *byte, ks, ng, nb int, o *float32)
//
// faQ8QK3x2AVX2's sums for one query row and ng groups of four keys (key
// j at k + j*ks bytes, j < 4*ng): block i of key j into Y(j) (i even) or
// Y(4+j).
TEXT ·faQ8QK1x4AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ dq+8(FP), DI
	MOVQ k+16(FP), R8
	MOVQ ks+24(FP), AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	MOVQ o+48(FP), BX
	MOVQ ng+32(FP), R13   // R13: groups left

q8qk1_group:
	TESTQ R13, R13
	JLE   q8qk1_done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ DX, DX
	XORQ R12, R12
	MOVQ nb+40(FP), CX

q8qk1_two:
	CMPQ CX, $2
	JLT  q8qk1_one
	Q8BLK1(Y0, Y1, Y2, Y3)
	ADDQ $34, DX
	ADDQ $32, R12
	Q8BLK1(Y4, Y5, Y6, Y7)
	ADDQ $34, DX
	ADDQ $32, R12
	SUBQ $2, CX
	JMP  q8qk1_two

q8qk1_one:
	TESTQ CX, CX
	JEQ   q8qk1_reduce
	Q8BLK1(Y0, Y1, Y2, Y3)

q8qk1_reduce:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	QK_REDUCE(Y0, Y1, Y2, Y3, BX)

	MOVQ ks+24(FP), AX
	SHLQ $2, AX
	ADDQ AX, R8
	ADDQ AX, R9
	ADDQ AX, R10
	ADDQ AX, R11
	ADDQ $16, BX
	DECQ R13
	JMP  q8qk1_group

q8qk1_done:
	VZEROUPPER
	RET

