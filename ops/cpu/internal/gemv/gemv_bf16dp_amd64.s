//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The four-row bfloat16 kernel of the vnni tier where the CPU has
// AVX-512 BF16 (twin: BF16PairTwin): each row's 64-byte line of 32
// bfloat16 weights goes into one VDPBF16PS against the activation's line,
// so a line costs a load and one instruction per row, where
// bf16x4AVX2 widens it with two VPMOVZXWD and two shifts. It leaves the
// streaming to the hardware prefetchers: asking for the line GVZ_AHEAD
// bytes further along each row (GVZ_PF4), as it did, was 6-9% slower
// for weights from DRAM. On a Zen 5, MUL_MAT m=4096 n=1 alternated call
// by call in one process, medians of 150 calls, with against without:
// two threads, k=14336 (117 MB) 2218-2378 against 2075-2192 us, k=8192
// 1106-1114 against 1016-1019; one thread, k=14336 2913-3030 against
// 2700-2799; within 2-3% either way from L2 and L3 (8 to 48 MiB).

// GVB_DP(dst, s1, s2) is VDPBF16PS Z(s2), Z(s1), Z(dst), written as its
// EVEX bytes as sgemm's DPBF16 is (the Go assembler lacks AVX-512 BF16):
// EVEX.512.F3.0F38.W0 52 /r, register operands.
#define GVB_DP(dst, s1, s2) \
	BYTE $0x62; \
	BYTE $(((1-((dst>>3)&1))<<7) | ((1-((s2>>4)&1))<<6) | ((1-((s2>>3)&1))<<5) | ((1-((dst>>4)&1))<<4) | 0x02); \
	BYTE $(((15-(s1&15))<<3) | 0x06); \
	BYTE $(0x40 | ((1-((s1>>4)&1))<<3)); \
	BYTE $0x52; \
	BYTE $(0xC0 | ((dst&7)<<3) | (s2&7))

// GVB_LINE(MOV, Y, A, B, C, D) loads the activation's line into Y and
// each row's into A-D, and adds their pair products into Z0-Z3. Y and
// A-D are registers 8 and 4-7 at MOV's width: Z with a 64-byte move, Y
// with a 32-byte one for a half line (which clears the upper lanes).
#define GVB_LINE(MOV, Y, A, B, C, D) \
	MOV (DI), Y; \
	MOV (SI), A; \
	MOV (SI)(R8*1), B; \
	MOV (SI)(R8*2), C; \
	MOV (SI)(R9*1), D; \
	GVB_DP(0, 8, 4); \
	GVB_DP(1, 8, 5); \
	GVB_DP(2, 8, 6); \
	GVB_DP(3, 8, 7)

// GVB_PAIR and GVB_ODD are GVZ_PAIRS' steps of the pair kernels: a
// whole 64-byte line of each row, and a last odd run as a half line.
#define GVB_PAIR GVB_LINE(VMOVDQU32, Z8, Z4, Z5, Z6, Z7)
#define GVB_ODD GVB_LINE(VMOVDQU, Y8, Y4, Y5, Y6, Y7)

// func bf16x4DP(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// nb runs of 16: whole 64-byte lines of each row two runs at a time,
// then a last odd run as a half line (its upper lanes take 0*0).
TEXT ·bf16x4DP(SB), NOSPLIT, $0-40
	GVZ_PAIRS(GVZ_NOPF, GVB_PAIR, GVB_ODD, gvbloop, gvbodd, gvbdone)

// func bf16x4DPPF(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// bf16x4DP asking, once a line, for the same line of each of the next
// four rows into L2 (GV2_PFN), as the AVX2 kernels do; equal to it bit
// for bit (twin: BF16PairTwin). The vnni tier takes it where
// cpu.mulmat.gemv_prefetch is 1: on a Zen 4 (MUL_MAT m=4096 n=1, two
// threads, alternated call by call) it was 1.18-1.31x bf16x4DP's speed
// on a matrix of 24-48 MiB read over and over and 1.10-1.33x on 8-32
// MiB ones streamed from memory, 12% slower on one of 16 MiB held in L3;
// on a Zen 5 the next-rows prefetch was slower from memory (4096x14336).
TEXT ·bf16x4DPPF(SB), NOSPLIT, $0-40
	GVZ_PAIRS(GV2_PFN, GVB_PAIR, GVB_ODD, gvbpfloop, gvbpfodd, gvbpfdone)

// func bf16x4iDP(x *byte, y *byte, nb int, out *[4]float32, pfd int)
//
// bf16x4DP over four rows interleaved run by run (the x8 layout's half,
// run j of row r at x + 128j + 32r; see x8f16.go), equal to it bit for
// bit (twin: BF16PairTwin per row). A zmm holds two rows' runs, so rows
// 0 and 1 of the even runs go to Z0 (lanes 0-7 row 0, 8-15 row 1), of
// the odd runs to Z1, rows 2 and 3 to Z2 and Z3, against the
// activation's run broadcast to both halves: lane l of a row's even-run
// accumulator is bf16x4DP's lane l, of its odd-run one lane l+8. A last
// even run leaves the odd-run lanes a product of zeros, as bf16x4DP's
// half line does. The stream is prefetched pfd bytes ahead, as
// bf16x4iAVX2's.
TEXT ·bf16x4iDP(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   nb+16(FP), CX
	MOVQ   out+24(FP), DX
	MOVQ   pfd+32(FP), R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   CX, BX
	SHRQ   $1, CX
	JEQ    gvbiodd

gvbiloop:
	PREFETCHT0    (SI)(R12*1)
	PREFETCHT0    64(SI)(R12*1)
	PREFETCHT0    128(SI)(R12*1)
	PREFETCHT0    192(SI)(R12*1)
	VBROADCASTI64X4 (DI), Z8
	VBROADCASTI64X4 32(DI), Z9
	VMOVDQU32     (SI), Z4
	VMOVDQU32     64(SI), Z5
	VMOVDQU32     128(SI), Z6
	VMOVDQU32     192(SI), Z7
	GVB_DP(0, 8, 4)
	GVB_DP(2, 8, 5)
	GVB_DP(1, 9, 6)
	GVB_DP(3, 9, 7)
	ADDQ          $256, SI
	ADDQ          $64, DI
	DECQ          CX
	JNE           gvbiloop

gvbiodd:
	TESTQ           $1, BX
	JEQ             gvbidone
	VBROADCASTI64X4 (DI), Z8
	VMOVDQU32       (SI), Z4
	VMOVDQU32       64(SI), Z5
	GVB_DP(0, 8, 4)
	GVB_DP(2, 8, 5)
	VPXORD          Z9, Z9, Z9
	GVB_DP(1, 9, 9)
	GVB_DP(3, 9, 9)

gvbidone:
	// Row 0's lanes l + (l+8) in Z0's low half, row 1's in its high.
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z0, Y1
	VEXTRACTF64X4 $1, Z2, Y3
	GV2_HSUM8(Y0, X0, X9)
	VMOVSS        X0, (DX)
	GV2_HSUM8(Y1, X1, X9)
	VMOVSS        X1, 4(DX)
	GV2_HSUM8(Y2, X2, X9)
	VMOVSS        X2, 8(DX)
	GV2_HSUM8(Y3, X3, X9)
	VMOVSS        X3, 12(DX)
	VZEROUPPER
	RET
