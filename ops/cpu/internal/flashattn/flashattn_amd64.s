//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT block kernels (see flashattn_amd64.go and the twins in
// twin.go).

// The f16 key scores (faQK3x4AVX2, faQK1x3AVX2, faQK4x2AVX2) sum each
// dot product in the block order (twin: faDotF16Twin): one 8-lane
// accumulator per (query row, key) takes the runs of 8 elements in order
// (one FMA per lane), then hsum8 (QK_REDUCE2). Every accumulator of a
// step lives in a register, so the kernels make a single pass over the
// key rows. (dot2F16's order, four accumulators per dot product over
// runs of 32, needs 48 for 3 rows x 4 keys: the round-1 kernel parked
// them in memory and ran at about 70% of the FMA peak.)

// QK_STEP(E): the 12 accumulators Y0..Y11 (key j, row r in Y(3j+r)) take
// the run of 8 elements at byte offset DX+E of the f16 key rows (the f32
// query rows are read at 2*(DX+E)): acc += k*q, one FMA per lane.
#define QK_STEP(E) \
	VMOVUPS 2*E(SI)(DX*2), Y12; \
	VMOVUPS 2*E(DI)(DX*2), Y13; \
	VMOVUPS 2*E(R8)(DX*2), Y14; \
	VCVTPH2PS E(R9)(DX*1), Y15; \
	VFMADD231PS Y15, Y12, Y0; \
	VFMADD231PS Y15, Y13, Y1; \
	VFMADD231PS Y15, Y14, Y2; \
	VCVTPH2PS E(R10)(DX*1), Y15; \
	VFMADD231PS Y15, Y12, Y3; \
	VFMADD231PS Y15, Y13, Y4; \
	VFMADD231PS Y15, Y14, Y5; \
	VCVTPH2PS E(R11)(DX*1), Y15; \
	VFMADD231PS Y15, Y12, Y6; \
	VFMADD231PS Y15, Y13, Y7; \
	VFMADD231PS Y15, Y14, Y8; \
	VCVTPH2PS E(R12)(DX*1), Y15; \
	VFMADD231PS Y15, Y12, Y9; \
	VFMADD231PS Y15, Y13, Y10; \
	VFMADD231PS Y15, Y14, Y11

// QK_PREFETCH: asks for the lines at byte offset DX of the four keys 64
// rows on (R14 bytes), the same keys of the next tile, so that they are
// in cache when the next call reaches them (R15 is scratch). A prefetch
// never faults, so past the end of K it only costs a slot.
#define QK_PREFETCH \
	LEAQ (R9)(R14*1), R15; \
	PREFETCHT0 (R15)(DX*1); \
	LEAQ (R10)(R14*1), R15; \
	PREFETCHT0 (R15)(DX*1); \
	LEAQ (R11)(R14*1), R15; \
	PREFETCHT0 (R15)(DX*1); \
	LEAQ (R12)(R14*1), R15; \
	PREFETCHT0 (R15)(DX*1)

// QK_ZERO: clears the 12 accumulators Y0..Y11.
#define QK_ZERO \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// QK_REDUCE2(A, B, C, D): X14 = the four 8-lane sums A..D, each as
// hsum8: h = lanes 0-3 + lanes 4-7, then (h0+h2)+(h1+h3). Uses Y12..Y15.
#define QK_REDUCE2(A, B, C, D) \
	VPERM2F128 $0x20, B, A, Y12; \
	VPERM2F128 $0x31, B, A, Y13; \
	VADDPS Y13, Y12, Y12; \
	VPERM2F128 $0x20, D, C, Y13; \
	VPERM2F128 $0x31, D, C, Y14; \
	VADDPS Y14, Y13, Y13; \
	VUNPCKLPS Y13, Y12, Y14; \
	VUNPCKHPS Y13, Y12, Y15; \
	VADDPS Y15, Y14, Y14; \
	VPERMILPS $0x4E, Y14, Y15; \
	VADDPS Y15, Y14, Y14; \
	VEXTRACTF128 $1, Y14, X15; \
	VUNPCKLPS X15, X14, X14

// QK_REDUCE(A, B, C, D, OUT): the four sums (keys 0..3 of a row) to
// OUT[0..3] (QK_REDUCE2).
#define QK_REDUCE(A, B, C, D, OUT) \
	QK_REDUCE2(A, B, C, D); \
	VMOVUPS X14, (OUT)

// func faQK3x4AVX2(q0, q1, q2 *float32, k *uint16, ks, ng, n int, o0, o1, o2 *float32, pf bool)
//
// For ng groups of four keys, key j (j < 4*ng) the f16 row at k + j*ks
// bytes: o_r[j] = the dot product of query row q_r with key row j (n
// elements, n a positive multiple of 8), summed in the block order. The
// runs of 8 go four to a loop pass while they last, then one at a time.
// With pf, each pass also prefetches the four keys' line of the next
// tile (64 keys on), for the first reader of a tile: the prefetches cost
// a tenth of the kernel's speed when the tile is in L1 already.
TEXT ·faQK3x4AVX2(SB), NOSPLIT, $0-81
	MOVQ q0+0(FP), SI
	MOVQ q1+8(FP), DI
	MOVQ q2+16(FP), R8
	MOVQ k+24(FP), R9
	MOVQ ks+32(FP), AX
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), R12
	MOVQ AX, R14
	SHLQ $6, R14          // R14: 64 key rows on (the next tile's key)
	MOVQ n+48(FP), CX
	SHLQ $1, CX           // CX: key row bytes
	MOVQ CX, BX
	ANDQ $-64, BX         // BX: bytes of the runs of 32
	MOVQ ng+40(FP), R13
	SHLQ $4, R13          // R13: 16 * groups
	XORQ AX, AX           // AX: 16 * group

qk_group:
	CMPQ AX, R13
	JGE  qk_done
	QK_ZERO
	XORQ DX, DX
	CMPB pf+80(FP), $0
	JEQ  qk_32

qk_32pf:
	CMPQ DX, BX
	JGE  qk_8
	QK_PREFETCH
	QK_STEP(0)
	QK_STEP(16)
	QK_STEP(32)
	QK_STEP(48)
	ADDQ $64, DX
	JMP  qk_32pf

qk_32:
	CMPQ DX, BX
	JGE  qk_8
	QK_STEP(0)
	QK_STEP(16)
	QK_STEP(32)
	QK_STEP(48)
	ADDQ $64, DX
	JMP  qk_32

qk_8:
	CMPQ DX, CX
	JGE  qk_reduce
	QK_STEP(0)
	ADDQ $16, DX
	JMP  qk_8

qk_reduce:
	MOVQ o0+56(FP), DX
	ADDQ AX, DX
	QK_REDUCE(Y0, Y3, Y6, Y9, DX)
	MOVQ o1+64(FP), DX
	ADDQ AX, DX
	QK_REDUCE(Y1, Y4, Y7, Y10, DX)
	MOVQ o2+72(FP), DX
	ADDQ AX, DX
	QK_REDUCE(Y2, Y5, Y8, Y11, DX)

	// Next group: the key rows move on by 4*ks.
	MOVQ ks+32(FP), DX
	SHLQ $2, DX
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	ADDQ DX, R12
	ADDQ $16, AX
	JMP  qk_group

qk_done:
	VZEROUPPER
	RET

// PV_KEY: the three rows' accumulators of a chunk of 32 floats (Y0..Y3,
// Y4..Y7, Y8..Y11) take the chunk of value row (R9) times the rows'
// weights (broadcast in Y13..Y15), in element order.
#define PV_KEY \
	VCVTPH2PS (R9), Y12; \
	VFMADD231PS Y12, Y13, Y0; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y12, Y15, Y8; \
	VCVTPH2PS 16(R9), Y12; \
	VFMADD231PS Y12, Y13, Y1; \
	VFMADD231PS Y12, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y9; \
	VCVTPH2PS 32(R9), Y12; \
	VFMADD231PS Y12, Y13, Y2; \
	VFMADD231PS Y12, Y14, Y6; \
	VFMADD231PS Y12, Y15, Y10; \
	VCVTPH2PS 48(R9), Y12; \
	VFMADD231PS Y12, Y13, Y3; \
	VFMADD231PS Y12, Y14, Y7; \
	VFMADD231PS Y12, Y15, Y11

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

// func faMaskF16AVX2(sc *float32, m *uint16, n int, slope float32) uint64
//
// sc[t] = slope * m[t] (f16 widened) for t < n, n a multiple of 8 and at
// most 64; bit t of the result is set where sc[t] is -Inf.
TEXT ·faMaskF16AVX2(SB), NOSPLIT, $0-40
	MOVQ sc+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ n+16(FP), BX
	PREFETCHT0 128(SI)    // the next tile's mask values (the row goes on)
	PREFETCHT0 192(SI)
	PREFETCHT0 255(SI)
	VBROADCASTSS slope+24(FP), Y1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Y2   // -Inf
	XORQ AX, AX           // AX: the bits
	XORQ CX, CX           // CX: t

mask_loop:
	CMPQ CX, BX
	JGE  mask_done
	VCVTPH2PS (SI)(CX*2), Y0
	VMULPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(CX*4)
	VCMPPS $0, Y2, Y0, Y3 // EQ_OQ: == -Inf
	VMOVMSKPS Y3, DX
	SHLQ CX, DX
	ORQ  DX, AX
	ADDQ $8, CX
	JMP  mask_loop

mask_done:
	MOVQ AX, ret+32(FP)
	VZEROUPPER
	RET

// func faLogitsAVX2(sc, dots *float32, n int, scale float32) (mx float32, nan bool)
//
// For t < n (a positive multiple of 8): sc[t] holds a key's mask value
// mv; unless mv is -Inf (a masked key, left as it is), sc[t] becomes
// dots[t]*scale + mv (two roundings, as faLogit without softcap). mx is
// the lane-wise VMAXPS maximum of the new sc (masked keys are -Inf) and
// nan reports a NaN among them.
TEXT ·faLogitsAVX2(SB), NOSPLIT, $0-37
	MOVQ sc+0(FP), DI
	MOVQ dots+8(FP), SI
	MOVQ n+16(FP), BX
	VBROADCASTSS scale+24(FP), Y1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Y2   // -Inf
	VMOVAPS Y2, Y4        // Y4: running maximum
	VXORPS Y5, Y5, Y5     // Y5: NaN lanes seen
	XORQ CX, CX

logit_loop:
	CMPQ CX, BX
	JGE  logit_done
	VMOVUPS (DI)(CX*4), Y0
	VMULPS (SI)(CX*4), Y1, Y3
	VADDPS Y0, Y3, Y3
	VCMPPS $0, Y2, Y0, Y6
	VBLENDVPS Y6, Y0, Y3, Y3
	VMOVUPS Y3, (DI)(CX*4)
	VCMPPS $3, Y3, Y3, Y6 // UNORD_Q: NaN
	VORPS Y6, Y5, Y5
	VMAXPS Y3, Y4, Y4
	ADDQ $8, CX
	JMP  logit_loop

logit_done:
	VEXTRACTF128 $1, Y4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0x4E, X4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0xB1, X4, X0
	VMAXPS X0, X4, X4
	VMOVSS X4, mx+32(FP)
	VMOVMSKPS Y5, AX
	TESTL AX, AX
	SETNE nan+36(FP)
	VZEROUPPER
	RET

// QK1_STEP(E): the 12 accumulators Y0..Y11 (key j in Yj) take the run of
// 8 elements at byte offset E of the key rows at R9, R9+ks, R9+2ks (AX:
// ks), R10.., R11.., R12.. (keys 3, 6, 9 on); the query is read at
// 2*(DX+E) bytes.
#define QK1_STEP(E) \
	VMOVUPS 2*E(SI)(DX*2), Y12; \
	VCVTPH2PS E(R9), Y13; \
	VFMADD231PS Y13, Y12, Y0; \
	VCVTPH2PS E(R9)(AX*1), Y14; \
	VFMADD231PS Y14, Y12, Y1; \
	VCVTPH2PS E(R9)(AX*2), Y15; \
	VFMADD231PS Y15, Y12, Y2; \
	VCVTPH2PS E(R10), Y13; \
	VFMADD231PS Y13, Y12, Y3; \
	VCVTPH2PS E(R10)(AX*1), Y14; \
	VFMADD231PS Y14, Y12, Y4; \
	VCVTPH2PS E(R10)(AX*2), Y15; \
	VFMADD231PS Y15, Y12, Y5; \
	VCVTPH2PS E(R11), Y13; \
	VFMADD231PS Y13, Y12, Y6; \
	VCVTPH2PS E(R11)(AX*1), Y14; \
	VFMADD231PS Y14, Y12, Y7; \
	VCVTPH2PS E(R11)(AX*2), Y15; \
	VFMADD231PS Y15, Y12, Y8; \
	VCVTPH2PS E(R12), Y13; \
	VFMADD231PS Y13, Y12, Y9; \
	VCVTPH2PS E(R12)(AX*1), Y14; \
	VFMADD231PS Y14, Y12, Y10; \
	VCVTPH2PS E(R12)(AX*2), Y15; \
	VFMADD231PS Y15, Y12, Y11

// QK1_PREFETCH: asks for the current line of the 12 keys 64 rows on (R14
// bytes: the same keys of the next tile); R15 is scratch.
#define QK1_PREFETCH \
	LEAQ (R9)(R14*1), R15; \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(AX*1); \
	PREFETCHT0 (R15)(AX*2); \
	LEAQ (R10)(R14*1), R15; \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(AX*1); \
	PREFETCHT0 (R15)(AX*2); \
	LEAQ (R11)(R14*1), R15; \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(AX*1); \
	PREFETCHT0 (R15)(AX*2); \
	LEAQ (R12)(R14*1), R15; \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(AX*1); \
	PREFETCHT0 (R15)(AX*2)

// QK1_ADVANCE(B): the key pointers R9..R12 move on by B bytes.
#define QK1_ADVANCE(B) \
	ADDQ $B, R9; \
	ADDQ $B, R10; \
	ADDQ $B, R11; \
	ADDQ $B, R12

// func faQK1x3AVX2(q *float32, k *uint16, ks, ng, n int, o *float32, pf bool)
//
// faQK3x4AVX2's sums (the block order) for one query row and ng groups
// of three keys (key j at k + j*ks bytes, j < 3*ng): o[j] = the dot
// product of q with key row j. Four groups (12 keys, 12 independent FMA
// chains) go together while they last, with pf prefetching the keys of
// the next tile; a group left over goes alone (3 accumulators).
TEXT ·faQK1x3AVX2(SB), NOSPLIT, $0-49
	MOVQ q+0(FP), SI
	MOVQ k+8(FP), R13     // R13: the first key of the next groups
	MOVQ ks+16(FP), AX
	MOVQ n+32(FP), CX
	MOVQ o+40(FP), DI
	SHLQ $1, CX           // CX: key row bytes
	MOVQ CX, BX
	ANDQ $-64, BX         // BX: bytes of the runs of 32
	MOVQ ng+24(FP), R8    // R8: groups left
	MOVQ AX, R14
	SHLQ $6, R14          // R14: 64 key rows on

qk1_block:
	CMPQ R8, $4
	JLT  qk1_group
	QK_ZERO
	MOVQ R13, R9
	LEAQ (R9)(AX*2), R10
	ADDQ AX, R10          // R10: key 3
	LEAQ (R10)(AX*2), R11
	ADDQ AX, R11          // R11: key 6
	LEAQ (R11)(AX*2), R12
	ADDQ AX, R12          // R12: key 9
	XORQ DX, DX
	CMPB pf+48(FP), $0
	JEQ  qk1b_32

qk1b_32pf:
	CMPQ DX, BX
	JGE  qk1b_8
	QK1_PREFETCH
	QK1_STEP(0)
	QK1_STEP(16)
	QK1_STEP(32)
	QK1_STEP(48)
	ADDQ $64, DX
	QK1_ADVANCE(64)
	JMP  qk1b_32pf

qk1b_32:
	CMPQ DX, BX
	JGE  qk1b_8
	QK1_STEP(0)
	QK1_STEP(16)
	QK1_STEP(32)
	QK1_STEP(48)
	ADDQ $64, DX
	QK1_ADVANCE(64)
	JMP  qk1b_32

qk1b_8:
	CMPQ DX, CX
	JGE  qk1b_reduce
	QK1_STEP(0)
	ADDQ $16, DX
	QK1_ADVANCE(16)
	JMP  qk1b_8

qk1b_reduce:
	QK_REDUCE(Y0, Y1, Y2, Y3, DI)
	ADDQ $16, DI
	QK_REDUCE(Y4, Y5, Y6, Y7, DI)
	ADDQ $16, DI
	QK_REDUCE(Y8, Y9, Y10, Y11, DI)
	ADDQ $16, DI
	LEAQ (R12)(AX*2), R13
	ADDQ AX, R13
	SUBQ CX, R13          // R13: key 12 (R12 has moved on by the row)
	SUBQ $4, R8
	JMP  qk1_block

qk1_group:
	TESTQ R8, R8
	JLE   qk1_done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	MOVQ R13, R9
	XORQ DX, DX

qk1g_8:
	CMPQ DX, CX
	JGE  qk1g_reduce
	VMOVUPS (SI)(DX*2), Y12
	LEAQ (R9)(DX*1), R10  // R10: this run of key 0
	VCVTPH2PS (R10), Y13
	VFMADD231PS Y13, Y12, Y0
	VCVTPH2PS (R10)(AX*1), Y14
	VFMADD231PS Y14, Y12, Y1
	VCVTPH2PS (R10)(AX*2), Y15
	VFMADD231PS Y15, Y12, Y2
	ADDQ $16, DX
	JMP  qk1g_8

qk1g_reduce:
	// Key 2 twice over: its sum is lane 2.
	QK_REDUCE2(Y0, Y1, Y2, Y2)
	VMOVLPS X14, (DI)
	VEXTRACTPS $2, X14, 8(DI)
	LEAQ (R13)(AX*2), R13
	ADDQ AX, R13          // R13: the next group
	ADDQ $12, DI
	DECQ R8
	JMP  qk1_group

qk1_done:
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

// PVF_KEY: PV_KEY for float32 value rows.
#define PVF_KEY \
	VMOVUPS (R9), Y12; \
	VFMADD231PS Y12, Y13, Y0; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y12, Y15, Y8; \
	VMOVUPS 32(R9), Y12; \
	VFMADD231PS Y12, Y13, Y1; \
	VFMADD231PS Y12, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y9; \
	VMOVUPS 64(R9), Y12; \
	VFMADD231PS Y12, Y13, Y2; \
	VFMADD231PS Y12, Y14, Y6; \
	VFMADD231PS Y12, Y15, Y10; \
	VMOVUPS 96(R9), Y12; \
	VFMADD231PS Y12, Y13, Y3; \
	VFMADD231PS Y12, Y14, Y7; \
	VFMADD231PS Y12, Y15, Y11

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

// func faRoundF16AVX2(dst, src *float32, n int)
//
// dst[i] = src[i] rounded to binary16 (to nearest, ties to even, as
// quant.FP32ToFP16) and widened back, for i < n (a multiple of 8).
TEXT ·faRoundF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

round_loop:
	CMPQ AX, CX
	JGE  round_done
	VMOVUPS (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP  round_loop

round_done:
	VZEROUPPER
	RET

// QK4_STEP(E): the 8 accumulators Y0..Y7 (key j, row r in Y(4j+r)) take
// the run of 8 elements at byte offset DX+E of the two f16 key rows (R9,
// R10; the four f32 query rows SI, DI, R8, R12 are read at 2*(DX+E)).
#define QK4_STEP(E) \
	VMOVUPS 2*E(SI)(DX*2), Y8; \
	VMOVUPS 2*E(DI)(DX*2), Y9; \
	VMOVUPS 2*E(R8)(DX*2), Y10; \
	VMOVUPS 2*E(R12)(DX*2), Y11; \
	VCVTPH2PS E(R9)(DX*1), Y12; \
	VCVTPH2PS E(R10)(DX*1), Y13; \
	VFMADD231PS Y12, Y8, Y0; \
	VFMADD231PS Y12, Y9, Y1; \
	VFMADD231PS Y12, Y10, Y2; \
	VFMADD231PS Y12, Y11, Y3; \
	VFMADD231PS Y13, Y8, Y4; \
	VFMADD231PS Y13, Y9, Y5; \
	VFMADD231PS Y13, Y10, Y6; \
	VFMADD231PS Y13, Y11, Y7

// func faQK4x2AVX2(q0, q1, q2, q3 *float32, k *uint16, ks, ng, n int, o0, o1, o2, o3 *float32, pf bool)
//
// faQK3x4AVX2's sums (the block order) for four query rows and ng groups
// of two keys (key j at k + j*ks bytes, j < 2*ng): o_r[j] = the dot
// product of q_r with key row j. The four rows of GQA decode take each
// key row once (8 accumulators, 4 query rows and 2 keys in registers);
// with pf, the passes prefetch the keys of the next tile.
TEXT ·faQK4x2AVX2(SB), NOSPLIT, $0-97
	MOVQ q0+0(FP), SI
	MOVQ q1+8(FP), DI
	MOVQ q2+16(FP), R8
	MOVQ q3+24(FP), R12
	MOVQ k+32(FP), R9
	MOVQ ks+40(FP), AX
	LEAQ (R9)(AX*1), R10
	MOVQ AX, R14
	SHLQ $6, R14          // R14: 64 key rows on (the next tile's key)
	MOVQ n+56(FP), CX
	SHLQ $1, CX           // CX: key row bytes
	MOVQ CX, BX
	ANDQ $-64, BX         // BX: bytes of the runs of 32
	MOVQ ng+48(FP), R11
	SHLQ $3, R11          // R11: 8 * groups
	XORQ AX, AX           // AX: 8 * group

qk4_group:
	CMPQ AX, R11
	JGE  qk4_done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ DX, DX
	CMPB pf+96(FP), $0
	JEQ  qk4_32

qk4_32pf:
	CMPQ DX, BX
	JGE  qk4_8
	LEAQ (R9)(R14*1), R15
	PREFETCHT0 (R15)(DX*1)
	LEAQ (R10)(R14*1), R15
	PREFETCHT0 (R15)(DX*1)
	QK4_STEP(0)
	QK4_STEP(16)
	QK4_STEP(32)
	QK4_STEP(48)
	ADDQ $64, DX
	JMP  qk4_32pf

qk4_32:
	CMPQ DX, BX
	JGE  qk4_8
	QK4_STEP(0)
	QK4_STEP(16)
	QK4_STEP(32)
	QK4_STEP(48)
	ADDQ $64, DX
	JMP  qk4_32

qk4_8:
	CMPQ DX, CX
	JGE  qk4_reduce
	QK4_STEP(0)
	ADDQ $16, DX
	JMP  qk4_8

qk4_reduce:
	// Rows 0 and 1: X14 = (r0k0, r0k1, r1k0, r1k1); rows 2, 3 likewise.
	QK_REDUCE2(Y0, Y4, Y1, Y5)
	MOVQ o0+64(FP), DX
	VMOVLPS X14, (DX)(AX*1)
	MOVQ o1+72(FP), DX
	VMOVHPS X14, (DX)(AX*1)
	QK_REDUCE2(Y2, Y6, Y3, Y7)
	MOVQ o2+80(FP), DX
	VMOVLPS X14, (DX)(AX*1)
	MOVQ o3+88(FP), DX
	VMOVHPS X14, (DX)(AX*1)

	// Next group: the key rows move on by 2*ks.
	MOVQ ks+40(FP), DX
	SHLQ $1, DX
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ $8, AX
	JMP  qk4_group

qk4_done:
	VZEROUPPER
	RET
