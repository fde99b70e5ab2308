//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT's small-head kernels (head sizes up to 16; see small.go
// for the twins): keys in lanes.

// func faKTAVX2(dst *float32, ts int, k *uint16, ks, ng, d int)
//
// dst[e*ts+t] = the f16 element e of the key row at k+t*ks bytes,
// widened, for t < 8*ng and e < d (a positive multiple of 8): each block
// of 8 keys x 8 elements is widened and transposed in registers.
TEXT ·faKTAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ts+8(FP), R8
	SHLQ $2, R8           // R8: ts in bytes
	MOVQ k+16(FP), SI
	MOVQ ks+24(FP), R9
	MOVQ ng+32(FP), CX
	MOVQ d+40(FP), BX
	SHRQ $3, BX           // BX: blocks of 8 elements per key

kt_group:
	TESTQ CX, CX
	JEQ   kt_done
	MOVQ  SI, R10         // R10: block b of the group's first key
	MOVQ  DI, R12         // R12: dst of block b (dst + 8*b*ts + 8*g)
	MOVQ  BX, DX

kt_block:
	MOVQ R10, R11
	VCVTPH2PS (R11), Y0
	ADDQ R9, R11
	VCVTPH2PS (R11), Y1
	ADDQ R9, R11
	VCVTPH2PS (R11), Y2
	ADDQ R9, R11
	VCVTPH2PS (R11), Y3
	ADDQ R9, R11
	VCVTPH2PS (R11), Y4
	ADDQ R9, R11
	VCVTPH2PS (R11), Y5
	ADDQ R9, R11
	VCVTPH2PS (R11), Y6
	ADDQ R9, R11
	VCVTPH2PS (R11), Y7
	// 8x8 transpose: rows (keys) Y0..Y7 to columns (elements) Y8..Y15.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (R12)
	ADDQ R8, R12
	VMOVUPS Y9, (R12)
	ADDQ R8, R12
	VMOVUPS Y10, (R12)
	ADDQ R8, R12
	VMOVUPS Y11, (R12)
	ADDQ R8, R12
	VMOVUPS Y12, (R12)
	ADDQ R8, R12
	VMOVUPS Y13, (R12)
	ADDQ R8, R12
	VMOVUPS Y14, (R12)
	ADDQ R8, R12
	VMOVUPS Y15, (R12)
	ADDQ R8, R12          // the next block's dst
	ADDQ $16, R10
	DECQ DX
	JNZ  kt_block
	LEAQ (SI)(R9*8), SI   // the next 8 keys
	ADDQ $32, DI
	DECQ CX
	JMP  kt_group

kt_done:
	VZEROUPPER
	RET

// SC_LOGIT(A, M, OFF): A (dot products) becomes the logits A*scale + M
// (two roundings), -Inf where the mask value M is -Inf; stored at
// OFF(R9), NaN lanes ORed into Y13, maximum into Y12.
#define SC_LOGIT(A, M, OFF) \
	VMULPS Y7, A, A; \
	VADDPS M, A, A; \
	VCMPPS $0, Y5, M, Y14; \
	VBLENDVPS Y14, Y5, A, A; \
	VMOVUPS A, OFF(R9); \
	VCMPPS $3, A, A, Y14; \
	VORPS Y14, Y13, Y13; \
	VMAXPS A, Y12, Y12

// SC_LOGIT0(A, M, OFF): SC_LOGIT where no mask value of the group is
// -Inf (nothing to blend).
#define SC_LOGIT0(A, M, OFF) \
	VMULPS Y7, A, A; \
	VADDPS M, A, A; \
	VMOVUPS A, OFF(R9); \
	VCMPPS $3, A, A, Y14; \
	VORPS Y14, Y13, Y13; \
	VMAXPS A, Y12, Y12

// SC_ELEM(QOFF, B): element QOFF/4 (from R11) of the query row broadcast
// into B and FMAed with the 32 keys' elements at R12 into Y0..Y3; R12
// moves to the next element row.
#define SC_ELEM(QOFF, B) \
	VBROADCASTSS QOFF(R11), B; \
	VFMADD231PS (R12), B, Y0; \
	VFMADD231PS 32(R12), B, Y1; \
	VFMADD231PS 64(R12), B, Y2; \
	VFMADD231PS 96(R12), B, Y3; \
	ADDQ R8, R12

// SC_MASKBITS(M, SHIFT): the lanes of M that are -Inf, as bits SHIFT..,
// ORed into AX.
#define SC_MASKBITS(M, SHIFT) \
	VCMPPS $0, Y5, M, Y14; \
	VMOVMSKPS Y14, R11; \
	SHLL $SHIFT, R11; \
	ORL R11, AX

// func faScoresSmallAVX2(q *float32, d int, kt *float32, ts int, m *uint16, slope, scale float32, sc *float32, ng int, bits *uint64) (mx float32, nan bool)
//
// ScoresSmallTwin for the 32*ng keys of kt (row stride ts floats), 32 at
// a time: each element of the query row q (d elements, a positive
// multiple of 4) broadcast once and FMAed into four 8-key accumulators. The mask bits of keys
// 32g..32g+31 are stored as the 32-bit word g of bits; a group of 32
// masked keys is not scored. mx is the lane-wise VMAXPS maximum of the
// logits, nan whether one is NaN.
TEXT ·faScoresSmallAVX2(SB), NOSPLIT, $0-77
	MOVQ q+0(FP), SI
	MOVQ d+8(FP), BX
	MOVQ kt+16(FP), DI
	MOVQ ts+24(FP), R8
	SHLQ $2, R8           // R8: ts in bytes
	MOVQ m+32(FP), DX
	VBROADCASTSS slope+40(FP), Y6
	VBROADCASTSS scale+44(FP), Y7
	MOVQ sc+48(FP), R9
	MOVQ ng+56(FP), CX
	MOVQ bits+64(FP), R10
	MOVL $0xff800000, AX
	VMOVD AX, X5
	VBROADCASTSS X5, Y5   // Y5: -Inf
	VMOVAPS Y5, Y12       // Y12: running maximum
	VXORPS Y13, Y13, Y13  // Y13: NaN lanes seen

sc_group:
	TESTQ CX, CX
	JEQ   sc_done
	VCVTPH2PS (DX), Y8
	VCVTPH2PS 16(DX), Y9
	VCVTPH2PS 32(DX), Y10
	VCVTPH2PS 48(DX), Y11
	VMULPS Y6, Y8, Y8
	VMULPS Y6, Y9, Y9
	VMULPS Y6, Y10, Y10
	VMULPS Y6, Y11, Y11
	XORL AX, AX
	SC_MASKBITS(Y8, 0)
	SC_MASKBITS(Y9, 8)
	SC_MASKBITS(Y10, 16)
	SC_MASKBITS(Y11, 24)
	MOVL AX, (R10)
	CMPL AX, $0xffffffff
	JEQ  sc_masked
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ BX, R13

sc_dot:
	SC_ELEM(0, Y4)
	SC_ELEM(4, Y15)
	SC_ELEM(8, Y4)
	SC_ELEM(12, Y15)
	ADDQ $16, R11
	SUBQ $4, R13
	JNZ  sc_dot
	TESTL AX, AX
	JNE   sc_some
	SC_LOGIT0(Y0, Y8, 0)
	SC_LOGIT0(Y1, Y9, 32)
	SC_LOGIT0(Y2, Y10, 64)
	SC_LOGIT0(Y3, Y11, 96)
	JMP sc_next

sc_some:
	SC_LOGIT(Y0, Y8, 0)
	SC_LOGIT(Y1, Y9, 32)
	SC_LOGIT(Y2, Y10, 64)
	SC_LOGIT(Y3, Y11, 96)
	JMP sc_next

sc_masked:
	VMOVUPS Y5, (R9)
	VMOVUPS Y5, 32(R9)
	VMOVUPS Y5, 64(R9)
	VMOVUPS Y5, 96(R9)

sc_next:
	ADDQ $64, DX
	ADDQ $128, R9
	ADDQ $128, DI
	ADDQ $4, R10
	DECQ CX
	JMP  sc_group

sc_done:
	VEXTRACTF128 $1, Y12, X0
	VMAXPS X0, X12, X12
	VPERMILPS $0x4E, X12, X0
	VMAXPS X0, X12, X12
	VPERMILPS $0xB1, X12, X0
	VMAXPS X0, X12, X12
	VMOVSS X12, mx+72(FP)
	VMOVMSKPS Y13, AX
	TESTL AX, AX
	SETNE nan+76(FP)
	VZEROUPPER
	RET

// faPVLanes<>: bit l in lane l (the lane masks of a byte of mask bits).
DATA faPVLanes<>+0(SB)/4, $1
DATA faPVLanes<>+4(SB)/4, $2
DATA faPVLanes<>+8(SB)/4, $4
DATA faPVLanes<>+12(SB)/4, $8
DATA faPVLanes<>+16(SB)/4, $16
DATA faPVLanes<>+20(SB)/4, $32
DATA faPVLanes<>+24(SB)/4, $64
DATA faPVLanes<>+28(SB)/4, $128
GLOBL faPVLanes<>(SB), RODATA|NOPTR, $32

// faPVTail<>[r]: the mask bits of the keys past nk in a group of eight
// keys with r (1..7) left.
DATA faPVTail<>+0(SB)/8, $0
DATA faPVTail<>+8(SB)/8, $0xfe
DATA faPVTail<>+16(SB)/8, $0xfc
DATA faPVTail<>+24(SB)/8, $0xf8
DATA faPVTail<>+32(SB)/8, $0xf0
DATA faPVTail<>+40(SB)/8, $0xe0
DATA faPVTail<>+48(SB)/8, $0xc0
DATA faPVTail<>+56(SB)/8, $0x80
GLOBL faPVTail<>(SB), RODATA|NOPTR, $64

// PVT_FMA(MEM, A): A += Y8 * MEM (the 8 keys' values of an element).
#define PVT_FMA(MEM, A) VFMADD231PS MEM, Y8, A

// PVT_FMAM(MEM, A): PVT_FMA with the masked lanes (Y10) of MEM zeroed.
#define PVT_FMAM(MEM, A) \
	VANDNPS MEM, Y10, Y9; \
	VFMADD231PS Y9, Y8, A

// func faValuesSmallTAVX2(acc, p, vt *float32, ts, nk, n int, bits *uint64)
//
// ValuesSmallTTwin: for each pass of 8 elements of acc (n a positive
// multiple of 8), element i's eight lane accumulators Y0..Y7 take the
// keys in groups of 8 from the transposed value tile (element i of key t
// at vt[i*ts+t]), lane l the keys t%8 == l, by one FMA each; a group with
// masked keys (or keys past nk) takes their p and values as zeros, a
// group masked whole is skipped. Then acc[i] += ((l0+l1)+(l2+l3)) +
// ((l4+l5)+(l6+l7)).
TEXT ·faValuesSmallTAVX2(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ ts+24(FP), R8
	SHLQ $2, R8           // R8: ts in bytes
	LEAQ (R8)(R8*2), R12  // R12: 3*ts in bytes
	MOVQ nk+32(FP), BX
	MOVQ n+40(FP), DX
	SHRQ $3, DX           // DX: passes
	MOVQ vt+16(FP), R15   // R15: the pass's first element row
	VMOVUPS faPVLanes<>(SB), Y11

pvt_pass:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ p+8(FP), SI
	MOVQ R15, R10         // R10: element row 0 at key t
	XORQ CX, CX           // CX: t

pvt_group:
	CMPQ CX, BX
	JGE  pvt_reduce
	MOVQ CX, R13
	SHRQ $6, R13
	MOVQ bits+48(FP), R14
	MOVQ (R14)(R13*8), AX
	SHRQ CX, AX
	ANDQ $0xff, AX
	MOVQ BX, R14
	SUBQ CX, R14
	CMPQ R14, $8
	JGE  pvt_full
	LEAQ faPVTail<>(SB), R13
	ORQ  (R13)(R14*8), AX

pvt_full:
	CMPQ AX, $0xff
	JEQ  pvt_next
	LEAQ (R10)(R8*4), R11 // R11: element row 4 at key t
	TESTQ AX, AX
	JNE  pvt_masked
	VMOVUPS (SI), Y8
	PVT_FMA((R10), Y0)
	PVT_FMA((R10)(R8*1), Y1)
	PVT_FMA((R10)(R8*2), Y2)
	PVT_FMA((R10)(R12*1), Y3)
	PVT_FMA((R11), Y4)
	PVT_FMA((R11)(R8*1), Y5)
	PVT_FMA((R11)(R8*2), Y6)
	PVT_FMA((R11)(R12*1), Y7)
	JMP pvt_next

pvt_masked:
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	VPAND Y11, Y10, Y10
	VPCMPEQD Y11, Y10, Y10 // Y10: all ones in the masked lanes
	VANDNPS (SI), Y10, Y8
	PVT_FMAM((R10), Y0)
	PVT_FMAM((R10)(R8*1), Y1)
	PVT_FMAM((R10)(R8*2), Y2)
	PVT_FMAM((R10)(R12*1), Y3)
	PVT_FMAM((R11), Y4)
	PVT_FMAM((R11)(R8*1), Y5)
	PVT_FMAM((R11)(R8*2), Y6)
	PVT_FMAM((R11)(R12*1), Y7)

pvt_next:
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $8, CX
	JMP  pvt_group

pvt_reduce:
	// Y0..Y7 to their lane sums ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)),
	// added to acc[0..7].
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	LEAQ (R15)(R8*8), R15 // the next pass's element rows
	DECQ DX
	JNZ  pvt_pass
	VZEROUPPER
	RET
