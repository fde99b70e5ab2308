//go:build amd64 && !purego

#include "textflag.h"

// The x8 kernels prefetch their stream pfd bytes ahead of the block
// being read (R12: the argument pfd, the tunable X8Prefetch): one
// PREFETCHT0 per 64-byte line of each block step, spread over the step.
// Decoding reads the weights from DRAM once per token; without it the
// hardware prefetcher alone left a Zen 3 at 55-65% of its measured read
// bandwidth (BenchmarkMulMatCold with KERNBENCH_REPACK on,
// results/amd-epyc-zen3-2c/x8-prefetch.md), and 1 KiB, enough there, left
// a Zen 5 12-20% short of its decode speed at 4-8 KiB.

// The x8 kernels (see x8.go for the layout): eight interleaved weight
// rows against one q8_0 activation row, ng groups a call, each group one
// contiguous stream. A broadcast of four activation codes multiplies
// four codes of each of the eight rows (row r in bytes 4r..4r+3 of a code
// vector), so after VPMADDUBSW and VPMADDWD int32 lane r is row r's sum:
// no horizontal sums, one scale multiply per block for all eight rows,
// and the outputs leave as one 8-float store per group. Each row keeps
// the lanes of the plain layout's four-row kernel (a code vector's sums
// are one lane of it, with its own accumulator), so the outputs equal
// that kernel's bit for bit.

DATA x8nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL x8nib<>(SB), RODATA|NOPTR, $8

// X8_Q4LANE(U, ACC): lane U of the side kernel (sideQ4_0x4AVX2) for the
// eight rows of the q4_0 x8 block at SI: code vector U's low nibbles
// (elements 4U..4U+3) times the activation codes 4U..4U+3 broadcast, its
// high nibbles (16+4U..) times codes 16+4U.., the pair sums (at most
// 2*15*128 each) added as words, widened by VPMADDWD, less the prepared
// 8*sum(y) of the lane (side data at R9), converted and FMA'd with d
// (Y4) into ACC. Y14 = 0x0f bytes, Y15 = 1 words. Clobbers Y6-Y9.
#define X8_Q4LANE(U, ACC) \
	VMOVDQU      16+32*U(SI), Y6; \
	VPSRLW       $4, Y6, Y7; \
	VPAND        Y14, Y6, Y6; \
	VPAND        Y14, Y7, Y7; \
	VPBROADCASTD 2+4*U(R8), Y8; \
	VPBROADCASTD 18+4*U(R8), Y9; \
	VPMADDUBSW   Y8, Y6, Y6; \
	VPMADDUBSW   Y9, Y7, Y7; \
	VPADDW       Y7, Y6, Y6; \
	VPMADDWD     Y15, Y6, Y6; \
	VPBROADCASTD 4*U(R9), Y8; \
	VPSUBD       Y8, Y6, Y6; \
	VCVTDQ2PS    Y6, Y6; \
	VFMADD231PS  Y4, Y6, ACC

// func q4_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q4_0Twin (SideQ4_0Twin per row). side is Q4_0Prep's data (36
// bytes a block, d_y at 32). nb, ng > 0.
TEXT ·q4_0x8AVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), DI
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	VPBROADCASTQ x8nib<>(SB), Y14

x8q4group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

x8q4block:
	PREFETCHT0   (SI)(R12*1)
	PREFETCHT0   64(SI)(R12*1)
	PREFETCHT0   128(SI)(R12*1)
	VCVTPH2PS    (SI), Y4
	VBROADCASTSS 32(R9), Y5
	VMULPS       Y5, Y4, Y4
	X8_Q4LANE(0, Y0)
	X8_Q4LANE(1, Y1)
	X8_Q4LANE(2, Y2)
	X8_Q4LANE(3, Y3)
	ADDQ         $144, SI
	ADDQ         $34, R8
	ADDQ         $36, R9
	DECQ         R11
	JNE          x8q4block

	// (v0+v1) + (v2+v3), as the side kernel's VHADDPS.
	VADDPS  Y1, Y0, Y0
	VADDPS  Y3, Y2, Y2
	VADDPS  Y2, Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q4group
	VZEROUPPER
	RET

// X8_Q8LANE(V, ACC, X, T): lane V of q8_0x4AVX2 for the eight rows of
// the q8_0 x8 block at SI: code vector V times the activation codes
// 4V..4V+3 broadcast by the sign trick (|x| times y with x's sign),
// widened, converted and FMA'd with d (Y8) into ACC. Y15 = 1 words.
#define X8_Q8LANE(V, ACC, X, T) \
	VMOVDQU      16+32*V(SI), X; \
	VPBROADCASTD 2+4*V(R8), T; \
	VPSIGNB      X, T, T; \
	VPABSB       X, X; \
	VPMADDUBSW   T, X, X; \
	VPMADDWD     Y15, X, X; \
	VCVTDQ2PS    X, X; \
	VFMADD231PS  Y8, X, ACC

// func q8_0x8AVX2(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q8_0Twin (Q8_0Twin per row). side holds d_y per block. nb,
// ng > 0.
TEXT ·q8_0x8AVX2(SB), NOSPLIT, $0-56
	MOVQ     x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ     y+8(FP), DI
	MOVQ     side+16(FP), BX
	MOVQ     nb+24(FP), CX
	MOVQ     ng+32(FP), R10
	MOVQ     out+40(FP), DX
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15

x8q8group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

x8q8block:
	PREFETCHT0 (SI)(R12*1)
	PREFETCHT0 64(SI)(R12*1)
	PREFETCHT0 128(SI)(R12*1)
	PREFETCHT0 192(SI)(R12*1)
	PREFETCHT0 256(SI)(R12*1)
	VCVTPH2PS    (SI), Y8
	VBROADCASTSS (R9), Y9
	VMULPS       Y9, Y8, Y8
	X8_Q8LANE(0, Y0, Y10, Y11)
	X8_Q8LANE(1, Y1, Y12, Y13)
	X8_Q8LANE(2, Y2, Y10, Y11)
	X8_Q8LANE(3, Y3, Y12, Y13)
	X8_Q8LANE(4, Y4, Y10, Y11)
	X8_Q8LANE(5, Y5, Y12, Y13)
	X8_Q8LANE(6, Y6, Y10, Y11)
	X8_Q8LANE(7, Y7, Y12, Y13)
	ADDQ         $272, SI
	ADDQ         $34, R8
	ADDQ         $4, R9
	DECQ         R11
	JNE          x8q8block

	// HSUM8's order across the lanes: ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)).
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	DECQ    R10
	JNE     x8q8group
	VZEROUPPER
	RET
