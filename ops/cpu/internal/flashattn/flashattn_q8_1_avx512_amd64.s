//go:build amd64 && !purego

#include "textflag.h"
#include "flashattn_avx512_amd64.h"
#include "flashattn_q8_avx512_amd64.h"

// FLASH_ATTN_EXT block kernels on AVX-512 F/BW (see
// flashattn_avx512_amd64.go and the twins in twin.go): the q8_0 key
// scores, two keys to a zmm register (key 2p in the low 256 bits, key
// 2p+1 in the high), each half faQ8QK3x2AVX2's operations for its key:
// the codes' int32 lane sums (|k| by VPABSB; the query codes' signs
// flipped where k < 0 by XOR and subtraction of the sign bytes, as
// VPSIGNB does for the nonzero k that count), widened, times d_k*d_q, into
// one of two 8-lane accumulators by the block's parity; the two added,
// then hsum8 per key (as in flashattn_qk_avx512_amd64.s).

// func faQ8QK1x8AVX512(q *byte, dq *float32, k *byte, ks, nk, nb int, o *float32)
//
// faQ8QK3x4AVX512's sums (faQ8QK1x4AVX2's) for one query row: groups of 8
// keys (4 key pairs x 2 block parities, 8 accumulators) while they last,
// then one of 4 (nk a positive multiple of 4).
TEXT ·faQ8QK1x8AVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ dq+8(FP), BX
	MOVQ k+16(FP), R9
	MOVQ ks+24(FP), CX
	LEAQ (R9)(CX*1), R10
	LEAQ (R10)(CX*1), R11
	LEAQ (R11)(CX*1), R14
	LEAQ (R14)(CX*1), DI
	LEAQ (DI)(CX*1), R8
	LEAQ (R8)(CX*1), R13
	LEAQ (R13)(CX*1), R15
	VMOVDQU32 faLaneIdx<>(SB), Z30
	MOVL $0x00010001, AX
	VPBROADCASTD AX, Z31  // Z31: int16 ones for VPMADDWD
	XORQ AX, AX           // AX: 4 * key

faQ8QK1x8AVX512_p4_group:
	MOVQ nk+32(FP), CX
	SHLQ $2, CX
	SUBQ AX, CX
	CMPQ CX, $32
	JLT  faQ8QK1x8AVX512_p2_group
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	XORQ DX, DX           // DX: block byte offset (34 per block)
	XORQ R12, R12         // R12: scale offset (32 per block)
	MOVQ nb+40(FP), CX

faQ8QK1x8AVX512_p4_two:
	CMPQ CX, $2
	JLT  faQ8QK1x8AVX512_p4_one
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z16)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z17)
	Q8_KEYS(DI, R8)
	Q8_ROW(Z0, Z3, Z18)
	Q8_KEYS(R13, R15)
	Q8_ROW(Z0, Z3, Z19)
	ADDQ $34, DX
	ADDQ $32, R12
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z20)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z21)
	Q8_KEYS(DI, R8)
	Q8_ROW(Z0, Z3, Z22)
	Q8_KEYS(R13, R15)
	Q8_ROW(Z0, Z3, Z23)
	ADDQ $34, DX
	ADDQ $32, R12
	SUBQ $2, CX
	JMP  faQ8QK1x8AVX512_p4_two

faQ8QK1x8AVX512_p4_one:
	TESTQ CX, CX
	JEQ   faQ8QK1x8AVX512_p4_reduce
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z16)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z17)
	Q8_KEYS(DI, R8)
	Q8_ROW(Z0, Z3, Z18)
	Q8_KEYS(R13, R15)
	Q8_ROW(Z0, Z3, Z19)

faQ8QK1x8AVX512_p4_reduce:
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	VSHUFF32X4 $0x88, Z17, Z16, Z9
	VSHUFF32X4 $0xDD, Z17, Z16, Z10
	VADDPS Z10, Z9, Z9
	VSHUFF32X4 $0x88, Z19, Z18, Z10
	VSHUFF32X4 $0xDD, Z19, Z18, Z11
	VADDPS Z11, Z10, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z12
	VADDPS Z12, Z11, Z11
	VPERMILPS $0x4E, Z11, Z12
	VADDPS Z12, Z11, Z11
	VPERMPS Z11, Z30, Z11
	MOVQ o+48(FP), DX
	VMOVUPS Y11, (DX)(AX*1)
	MOVQ ks+24(FP), CX
	SHLQ $3, CX
	ADDQ CX, R9
	ADDQ CX, R10
	ADDQ CX, R11
	ADDQ CX, R14
	ADDQ CX, DI
	ADDQ CX, R8
	ADDQ CX, R13
	ADDQ CX, R15
	ADDQ $32, AX
	JMP  faQ8QK1x8AVX512_p4_group

faQ8QK1x8AVX512_p2_group:
	MOVQ nk+32(FP), CX
	SHLQ $2, CX
	SUBQ AX, CX
	CMPQ CX, $16
	JLT  faQ8QK1x8AVX512_done
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	XORQ DX, DX           // DX: block byte offset (34 per block)
	XORQ R12, R12         // R12: scale offset (32 per block)
	MOVQ nb+40(FP), CX

faQ8QK1x8AVX512_p2_two:
	CMPQ CX, $2
	JLT  faQ8QK1x8AVX512_p2_one
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z16)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z17)
	ADDQ $34, DX
	ADDQ $32, R12
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z18)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z19)
	ADDQ $34, DX
	ADDQ $32, R12
	SUBQ $2, CX
	JMP  faQ8QK1x8AVX512_p2_two

faQ8QK1x8AVX512_p2_one:
	TESTQ CX, CX
	JEQ   faQ8QK1x8AVX512_p2_reduce
	VBROADCASTI64X4 2(SI)(DX*1), Z0
	VBROADCASTF64X4 (BX)(R12*1), Z3
	Q8_KEYS(R9, R10)
	Q8_ROW(Z0, Z3, Z16)
	Q8_KEYS(R11, R14)
	Q8_ROW(Z0, Z3, Z17)

faQ8QK1x8AVX512_p2_reduce:
	VADDPS Z18, Z16, Z16
	VADDPS Z19, Z17, Z17
	VSHUFF32X4 $0x88, Z17, Z16, Z9
	VSHUFF32X4 $0xDD, Z17, Z16, Z10
	VADDPS Z10, Z9, Z9
	VMOVAPS Z9, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z12
	VADDPS Z12, Z11, Z11
	VPERMILPS $0x4E, Z11, Z12
	VADDPS Z12, Z11, Z11
	VPERMPS Z11, Z30, Z11
	MOVQ o+48(FP), DX
	VMOVUPS X11, (DX)(AX*1)
	MOVQ ks+24(FP), CX
	SHLQ $2, CX
	ADDQ CX, R9
	ADDQ CX, R10
	ADDQ CX, R11
	ADDQ CX, R14
	ADDQ CX, DI
	ADDQ CX, R8
	ADDQ CX, R13
	ADDQ CX, R15
	ADDQ $16, AX
	JMP  faQ8QK1x8AVX512_p2_group

faQ8QK1x8AVX512_done:
	VZEROUPPER
	RET
