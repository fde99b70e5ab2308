//go:build amd64 && !purego

#include "textflag.h"
#include "flashattn_amd64.h"

// FLASH_ATTN_EXT block kernels (see flashattn_amd64.go and the twins in
// twin.go): the f16 key scores.

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
