//go:build amd64 && !purego

#include "textflag.h"

// Register-resident loops that reach the CPU's peak arithmetic rate, and a
// streaming read loop, for the machine roofline. None of them touches
// memory but readAVX2, which only loads.

// func fmaAVX2(iters int)
// 12 independent chains of VFMADD231PS on 8 float32 lanes: 192 FLOPs per
// iteration. Twelve chains cover the FMA latency (4 to 5 cycles) times the
// FMA pipes (2) of current cores. The registers start at zero and stay
// there, so no denormals slow the loop.
TEXT ·fmaAVX2(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	TESTQ CX, CX
	JLE fmadone

fmaloop:
	VFMADD231PS Y13, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VFMADD231PS Y13, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VFMADD231PS Y13, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VFMADD231PS Y13, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VFMADD231PS Y13, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VFMADD231PS Y13, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	DECQ CX
	JNZ fmaloop

fmadone:
	VZEROUPPER
	RET

// func int8AVX2(iters int)
// The integer dot product of ggml's quantized kernels on AVX2: unsigned by
// signed bytes multiplied and added in pairs to int16 (VPMADDUBSW), pairs
// of those added to int32 (VPMADDWD by ones), and accumulated (VPADDD).
// One group is 32 byte products: 64 integer operations. Six independent
// groups per iteration: 384 operations.
TEXT ·int8AVX2(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y13, Y13, Y13
	VPXOR Y14, Y14, Y14
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15 // 1 in every int16 lane
	TESTQ CX, CX
	JLE i8done

i8loop:
	VPMADDUBSW Y14, Y13, Y0
	VPMADDUBSW Y14, Y13, Y1
	VPMADDUBSW Y14, Y13, Y2
	VPMADDUBSW Y14, Y13, Y3
	VPMADDUBSW Y14, Y13, Y4
	VPMADDUBSW Y14, Y13, Y5
	VPMADDWD Y15, Y0, Y0
	VPMADDWD Y15, Y1, Y1
	VPMADDWD Y15, Y2, Y2
	VPMADDWD Y15, Y3, Y3
	VPMADDWD Y15, Y4, Y4
	VPMADDWD Y15, Y5, Y5
	VPADDD Y0, Y6, Y6
	VPADDD Y1, Y7, Y7
	VPADDD Y2, Y8, Y8
	VPADDD Y3, Y9, Y9
	VPADDD Y4, Y10, Y10
	VPADDD Y5, Y11, Y11
	DECQ CX
	JNZ i8loop

i8done:
	VZEROUPPER
	RET

// func readAVX2(p *byte, n int)
// Loads n bytes (a multiple of 256) from p, 32 at a time into four
// accumulators.
TEXT ·readAVX2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $8, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	TESTQ CX, CX
	JLE rddone

rdloop:
	VPADDQ 0(SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y0, Y0
	VPADDQ 160(SI), Y1, Y1
	VPADDQ 192(SI), Y2, Y2
	VPADDQ 224(SI), Y3, Y3
	ADDQ $256, SI
	DECQ CX
	JNZ rdloop

rddone:
	VZEROUPPER
	RET

// The zmm peak loops (fmaAVX512, int8VNNI512): twelve independent
// chains accumulating into Z0-Z11 from the operands Z13 and Z14.

// ZMM_CHAINS_ZERO clears the chains' accumulators and operands.
#define ZMM_CHAINS_ZERO \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14

// ZMM_CHAINS(OP) is one step of each chain: OP Z13, Z14, Zi for i < 12.
#define ZMM_CHAINS(OP) \
	OP Z13, Z14, Z0; \
	OP Z13, Z14, Z1; \
	OP Z13, Z14, Z2; \
	OP Z13, Z14, Z3; \
	OP Z13, Z14, Z4; \
	OP Z13, Z14, Z5; \
	OP Z13, Z14, Z6; \
	OP Z13, Z14, Z7; \
	OP Z13, Z14, Z8; \
	OP Z13, Z14, Z9; \
	OP Z13, Z14, Z10; \
	OP Z13, Z14, Z11

// func fmaAVX512(iters int)
// The zmm form of fmaAVX2: 12 independent chains of VFMADD231PS on 16
// float32 lanes, 384 FLOPs per iteration. On a core whose FMA units are
// 256 bits wide (Zen 4) a zmm FMA takes two of them, so this equals the
// ymm rate; on a full-width core (Zen 5, Sapphire Rapids) it doubles it.
TEXT ·fmaAVX512(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	ZMM_CHAINS_ZERO
	TESTQ CX, CX
	JLE fma5done

fma5loop:
	ZMM_CHAINS(VFMADD231PS)
	DECQ CX
	JNZ fma5loop

fma5done:
	VZEROUPPER
	RET

// func int8VNNI512(iters int)
// The integer dot product of the vnni tier: VPDPBUSD multiplies 64
// unsigned by signed byte pairs, adds them in fours and accumulates into
// 16 int32 lanes, 128 integer operations counted as int8AVX2 counts them
// (a multiply and an add per byte pair). 12 independent chains: 1536
// operations per iteration.
TEXT ·int8VNNI512(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	ZMM_CHAINS_ZERO
	TESTQ CX, CX
	JLE v5done

v5loop:
	ZMM_CHAINS(VPDPBUSD)
	DECQ CX
	JNZ v5loop

v5done:
	VZEROUPPER
	RET

// DPBF16(dst, s1, s2) is VDPBF16PS Z(s2), Z(s1), Z(dst). The Go
// assembler lacks AVX-512 BF16, so it is written as its EVEX bytes
// (EVEX.512.F3.0F38.W0 52 /r, register operands): the prefix carries the
// inverted high bits of dst (R, R'), s2 (B, X) and s1 (vvvv, V'), ModRM
// dst's and s2's low three bits.
#define DPBF16(dst, s1, s2) \
	BYTE $0x62; \
	BYTE $(((1-((dst>>3)&1))<<7) | ((1-((s2>>4)&1))<<6) | ((1-((s2>>3)&1))<<5) | ((1-((dst>>4)&1))<<4) | 0x02); \
	BYTE $(((15-(s1&15))<<3) | 0x06); \
	BYTE $(0x40 | ((1-((s1>>4)&1))<<3)); \
	BYTE $0x52; \
	BYTE $(0xC0 | ((dst&7)<<3) | (s2&7))

// func bf16DotAVX512(iters int)
// The bf16 dot product of the vnni tier's bf16 kernels: VDPBF16PS
// multiplies 16 pairs of bfloat16 values per 32-bit lane and adds both
// products into the lane's float32, 64 FLOPs counted as an FMA counts
// them (a multiply and an add per product). 12 independent chains: 768
// FLOPs per iteration.
TEXT ·bf16DotAVX512(SB), NOSPLIT, $0-8
	MOVQ iters+0(FP), CX
	ZMM_CHAINS_ZERO
	TESTQ CX, CX
	JLE b16done

b16loop:
	DPBF16(0, 13, 14)
	DPBF16(1, 13, 14)
	DPBF16(2, 13, 14)
	DPBF16(3, 13, 14)
	DPBF16(4, 13, 14)
	DPBF16(5, 13, 14)
	DPBF16(6, 13, 14)
	DPBF16(7, 13, 14)
	DPBF16(8, 13, 14)
	DPBF16(9, 13, 14)
	DPBF16(10, 13, 14)
	DPBF16(11, 13, 14)
	DECQ CX
	JNZ b16loop

b16done:
	VZEROUPPER
	RET

// func readAVX512(p *byte, n int)
// Loads n bytes (a multiple of 256) from p, 64 at a time into four
// accumulators.
TEXT ·readAVX512(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $8, CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	TESTQ CX, CX
	JLE rd5done

rd5loop:
	VPADDQ 0(SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ $256, SI
	DECQ CX
	JNZ rd5loop

rd5done:
	VZEROUPPER
	RET
