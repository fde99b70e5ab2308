//go:build amd64 && !purego

#include "textflag.h"
#include "flashattn_avx512_amd64.h"

// FLASH_ATTN_EXT block kernels on AVX-512 F/VL (see
// flashattn_avx512_amd64.go and the twins in twin.go): the f16 key scores
// in the block order (DotF16Twin) bit for bit. A zmm register holds the
// 8-lane accumulators of two keys, key 2p in its low 256 bits and key
// 2p+1 in its high 256 (a key pair), against the query row's run of 8 in
// both halves (VBROADCASTF64X4): each half is the AVX2 kernels' 8-lane FMA
// chain for its key. A pair's run widens as two ymm VCVTPH2PS and a
// VINSERTF64X4 (faster on Zen 5 than one zmm VCVTPH2PS of 16 halves of a
// key and a VSHUFF64X2 per pair and run, or a VINSERTF128 of the halves
// and a zmm VCVTPH2PS). The reduction adds each half's 128-bit lanes (h =
// lanes 0-3 + lanes 4-7 of the key, VSHUFF32X4) and then h as hsum8 does,
// (h0+h2)+(h1+h3), for four key pairs at a time.

// QK3_PAIRS4(QO, KO) and QK3_PAIRS2(QO, KO): one run of 8 of the head
// dimension for the three query rows against four key pairs (eight keys)
// or two: the rows' run at byte QO past (DX*2), the keys' at byte KO
// past each key pointer. The loops below unroll them at QO = 0, 32, 64,
// 96 and KO = 0, 16, 32, 48 (a run of 32 elements).
#define QK3_PAIRS4(QO, KO) \
	VBROADCASTF64X4 (QO)(SI)(DX*2), Z4; \
	VBROADCASTF64X4 (QO)(DI)(DX*2), Z5; \
	VBROADCASTF64X4 (QO)(R8)(DX*2), Z6; \
	VCVTPH2PS (KO)(R9), Y0; \
	VCVTPH2PS (KO)(R9)(AX*1), Y8; \
	VINSERTF64X4 $1, Y8, Z0, Z0; \
	VFMADD231PS Z0, Z4, Z16; \
	VFMADD231PS Z0, Z5, Z17; \
	VFMADD231PS Z0, Z6, Z18; \
	VCVTPH2PS (KO)(R9)(AX*2), Y1; \
	VCVTPH2PS (KO)(R10), Y9; \
	VINSERTF64X4 $1, Y9, Z1, Z1; \
	VFMADD231PS Z1, Z4, Z19; \
	VFMADD231PS Z1, Z5, Z20; \
	VFMADD231PS Z1, Z6, Z21; \
	VCVTPH2PS (KO)(R10)(AX*1), Y2; \
	VCVTPH2PS (KO)(R10)(AX*2), Y10; \
	VINSERTF64X4 $1, Y10, Z2, Z2; \
	VFMADD231PS Z2, Z4, Z22; \
	VFMADD231PS Z2, Z5, Z23; \
	VFMADD231PS Z2, Z6, Z24; \
	VCVTPH2PS (KO)(R11), Y3; \
	VCVTPH2PS (KO)(R11)(AX*1), Y11; \
	VINSERTF64X4 $1, Y11, Z3, Z3; \
	VFMADD231PS Z3, Z4, Z25; \
	VFMADD231PS Z3, Z5, Z26; \
	VFMADD231PS Z3, Z6, Z27

#define QK3_PAIRS2(QO, KO) \
	VBROADCASTF64X4 (QO)(SI)(DX*2), Z4; \
	VBROADCASTF64X4 (QO)(DI)(DX*2), Z5; \
	VBROADCASTF64X4 (QO)(R8)(DX*2), Z6; \
	VCVTPH2PS (KO)(R9), Y0; \
	VCVTPH2PS (KO)(R9)(AX*1), Y8; \
	VINSERTF64X4 $1, Y8, Z0, Z0; \
	VFMADD231PS Z0, Z4, Z16; \
	VFMADD231PS Z0, Z5, Z17; \
	VFMADD231PS Z0, Z6, Z18; \
	VCVTPH2PS (KO)(R9)(AX*2), Y1; \
	VCVTPH2PS (KO)(R10), Y9; \
	VINSERTF64X4 $1, Y9, Z1, Z1; \
	VFMADD231PS Z1, Z4, Z19; \
	VFMADD231PS Z1, Z5, Z20; \
	VFMADD231PS Z1, Z6, Z21

// func faQK3x8AVX512(q0, q1, q2 *float32, k *uint16, ks, nk, n int, o0, o1, o2 *float32, pf bool)
//
// faQK3x4AVX2's sums (the block order) in zmm: for the nk keys (a
// positive multiple of 4; key j the f16 row at k + j*ks bytes), o_r[j] =
// the dot product of query row q_r with key row j (n elements, n a
// positive multiple of 8). Blocks of 8 keys (4 key pairs x 3 rows, 12
// accumulators) while they last, then one of 4; with pf, the passes over
// runs of 32 also prefetch the keys' line of the next tile (64 keys on).
TEXT ·faQK3x8AVX512(SB), NOSPLIT, $0-81
	MOVQ q0+0(FP), SI
	MOVQ q1+8(FP), DI
	MOVQ q2+16(FP), R8
	MOVQ k+24(FP), R9
	MOVQ ks+32(FP), AX
	MOVQ AX, R14
	SHLQ $6, R14          // R14: 64 key rows on (the next tile's key)
	MOVQ n+48(FP), CX
	SHLQ $1, CX           // CX: key row bytes
	MOVQ CX, BX
	ANDQ $-64, BX         // BX: bytes of the runs of 32
	MOVQ nk+40(FP), R13     // R13: keys left
	VMOVDQU32 faLaneIdx<>(SB), Z12

faQK3x8AVX512_p4_block:
	CMPQ R13, $8
	JLT  faQK3x8AVX512_p2_block
	LEAQ (R9)(AX*2), R10
	ADDQ AX, R10          // R10: key 3
	LEAQ (R10)(AX*2), R11
	ADDQ AX, R11          // R11: key 6
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	XORQ DX, DX
	CMPB pf+80(FP), $0
	JEQ  faQK3x8AVX512_p4_32

faQK3x8AVX512_p4_32pf:
	CMPQ DX, BX
	JGE  faQK3x8AVX512_p4_8
	LEAQ (R9)(R14*1), R15
	PREFETCHT0 (R15)
	PREFETCHT0 (R15)(AX*1)
	PREFETCHT0 (R15)(AX*2)
	LEAQ (R10)(R14*1), R15
	PREFETCHT0 (R15)
	PREFETCHT0 (R15)(AX*1)
	PREFETCHT0 (R15)(AX*2)
	LEAQ (R11)(R14*1), R15
	PREFETCHT0 (R15)
	PREFETCHT0 (R15)(AX*1)
	QK3_PAIRS4(0, 0)
	QK3_PAIRS4(32, 16)
	QK3_PAIRS4(64, 32)
	QK3_PAIRS4(96, 48)
	ADDQ $64, DX
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	JMP  faQK3x8AVX512_p4_32pf

faQK3x8AVX512_p4_32:
	CMPQ DX, BX
	JGE  faQK3x8AVX512_p4_8
	QK3_PAIRS4(0, 0)
	QK3_PAIRS4(32, 16)
	QK3_PAIRS4(64, 32)
	QK3_PAIRS4(96, 48)
	ADDQ $64, DX
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	JMP  faQK3x8AVX512_p4_32

faQK3x8AVX512_p4_8:
	CMPQ DX, CX
	JGE  faQK3x8AVX512_p4_reduce
	QK3_PAIRS4(0, 0)
	ADDQ $16, DX
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	JMP  faQK3x8AVX512_p4_8

faQK3x8AVX512_p4_reduce:
	MOVQ nk+40(FP), R15
	SUBQ R13, R15         // R15: the block's first key
	VSHUFF32X4 $0x88, Z19, Z16, Z9
	VSHUFF32X4 $0xDD, Z19, Z16, Z10
	VADDPS Z10, Z9, Z9
	VSHUFF32X4 $0x88, Z25, Z22, Z10
	VSHUFF32X4 $0xDD, Z25, Z22, Z11
	VADDPS Z11, Z10, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o0+56(FP), DX
	VMOVUPS Y11, (DX)(R15*4)
	VSHUFF32X4 $0x88, Z20, Z17, Z9
	VSHUFF32X4 $0xDD, Z20, Z17, Z10
	VADDPS Z10, Z9, Z9
	VSHUFF32X4 $0x88, Z26, Z23, Z10
	VSHUFF32X4 $0xDD, Z26, Z23, Z11
	VADDPS Z11, Z10, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o1+64(FP), DX
	VMOVUPS Y11, (DX)(R15*4)
	VSHUFF32X4 $0x88, Z21, Z18, Z9
	VSHUFF32X4 $0xDD, Z21, Z18, Z10
	VADDPS Z10, Z9, Z9
	VSHUFF32X4 $0x88, Z27, Z24, Z10
	VSHUFF32X4 $0xDD, Z27, Z24, Z11
	VADDPS Z11, Z10, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o2+72(FP), DX
	VMOVUPS Y11, (DX)(R15*4)
	LEAQ (R9)(AX*8), R9
	SUBQ CX, R9           // R9: the next block's first key (R9 has moved on by the row)
	SUBQ $8, R13
	JMP  faQK3x8AVX512_p4_block

faQK3x8AVX512_p2_block:
	CMPQ R13, $4
	JLT  faQK3x8AVX512_done
	LEAQ (R9)(AX*2), R10
	ADDQ AX, R10          // R10: key 3
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	XORQ DX, DX
	CMPB pf+80(FP), $0
	JEQ  faQK3x8AVX512_p2_32

faQK3x8AVX512_p2_32pf:
	CMPQ DX, BX
	JGE  faQK3x8AVX512_p2_8
	LEAQ (R9)(R14*1), R15
	PREFETCHT0 (R15)
	PREFETCHT0 (R15)(AX*1)
	PREFETCHT0 (R15)(AX*2)
	LEAQ (R10)(R14*1), R15
	PREFETCHT0 (R15)
	QK3_PAIRS2(0, 0)
	QK3_PAIRS2(32, 16)
	QK3_PAIRS2(64, 32)
	QK3_PAIRS2(96, 48)
	ADDQ $64, DX
	ADDQ $64, R9
	ADDQ $64, R10
	JMP  faQK3x8AVX512_p2_32pf

faQK3x8AVX512_p2_32:
	CMPQ DX, BX
	JGE  faQK3x8AVX512_p2_8
	QK3_PAIRS2(0, 0)
	QK3_PAIRS2(32, 16)
	QK3_PAIRS2(64, 32)
	QK3_PAIRS2(96, 48)
	ADDQ $64, DX
	ADDQ $64, R9
	ADDQ $64, R10
	JMP  faQK3x8AVX512_p2_32

faQK3x8AVX512_p2_8:
	CMPQ DX, CX
	JGE  faQK3x8AVX512_p2_reduce
	QK3_PAIRS2(0, 0)
	ADDQ $16, DX
	ADDQ $16, R9
	ADDQ $16, R10
	JMP  faQK3x8AVX512_p2_8

faQK3x8AVX512_p2_reduce:
	MOVQ nk+40(FP), R15
	SUBQ R13, R15         // R15: the block's first key
	VSHUFF32X4 $0x88, Z19, Z16, Z9
	VSHUFF32X4 $0xDD, Z19, Z16, Z10
	VADDPS Z10, Z9, Z9
	VMOVAPS Z9, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o0+56(FP), DX
	VMOVUPS X11, (DX)(R15*4)
	VSHUFF32X4 $0x88, Z20, Z17, Z9
	VSHUFF32X4 $0xDD, Z20, Z17, Z10
	VADDPS Z10, Z9, Z9
	VMOVAPS Z9, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o1+64(FP), DX
	VMOVUPS X11, (DX)(R15*4)
	VSHUFF32X4 $0x88, Z21, Z18, Z9
	VSHUFF32X4 $0xDD, Z21, Z18, Z10
	VADDPS Z10, Z9, Z9
	VMOVAPS Z9, Z10
	VUNPCKLPS Z10, Z9, Z11
	VUNPCKHPS Z10, Z9, Z15
	VADDPS Z15, Z11, Z11
	VPERMILPS $0x4E, Z11, Z15
	VADDPS Z15, Z11, Z11
	VPERMPS Z11, Z12, Z11
	MOVQ o2+72(FP), DX
	VMOVUPS X11, (DX)(R15*4)
	LEAQ (R9)(AX*4), R9
	SUBQ CX, R9           // R9: the next block's first key (R9 has moved on by the row)
	SUBQ $4, R13
	JMP  faQK3x8AVX512_p2_block

faQK3x8AVX512_done:
	VZEROUPPER
	RET
