//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The f16 and bf16 x8 kernels in zmm (AVX-512 F/BW plus F16C's
// VCVTPH2PS on zmm): both halves of a group in one pass. A run of 16
// values of a row is one zmm, whose low eight lanes are the AVX2
// kernel's first accumulator and whose high eight its second, so every
// lane takes the same FMAs in the same order; at the end the high half
// is added to the low one and reduced as GV2_FLOAT_STORE does, so each
// output equals f16x4iAVX2's (twin: F16Twin per row). Eight zmm
// accumulators (rows 0-3 of half 0 in Z0-Z3, of half 1 in Z4-Z7) keep
// eight FMA chains in flight, as the AVX2 kernel's eight ymm do.

// X8F16_512_STORE(Z, Y, X, OFF): row accumulator Z's high eight lanes
// added to its low eight (Y), reduced by GV2_HSUM8 and stored at
// OFF(DX); Y9 and X9 are clobbered.
#define X8F16_512_STORE(Z, Y, X, OFF) \
	VEXTRACTF64X4 $1, Z, Y9; \
	VADDPS        Y9, Y, Y; \
	GV2_HSUM8(Y, X, X9); \
	VMOVSS        X, OFF(DX)

#define X8F16_512_STORE8 \
	X8F16_512_STORE(Z0, Y0, X0, 0); \
	X8F16_512_STORE(Z1, Y1, X1, 4); \
	X8F16_512_STORE(Z2, Y2, X2, 8); \
	X8F16_512_STORE(Z3, Y3, X3, 12); \
	X8F16_512_STORE(Z4, Y4, X4, 16); \
	X8F16_512_STORE(Z5, Y5, X5, 20); \
	X8F16_512_STORE(Z6, Y6, X6, 24); \
	X8F16_512_STORE(Z7, Y7, X7, 28)

// func f16x8iAVX512(x *byte, half uintptr, y *byte, nb int, out *[8]float32, pfd int)
//
// The eight rows of an f16 x8 group: half 0 at x, half 1 at x+half,
// each nb runs of 128 bytes (run j of row r at 128j + 32r of its half).
// Each half's stream is prefetched pfd bytes ahead, as in f16x4iAVX2.
TEXT ·f16x8iAVX512(SB), NOSPLIT, $0-48
	MOVQ   x+0(FP), SI
	MOVQ   pfd+40(FP), R12
	MOVQ   half+8(FP), R8
	ADDQ   SI, R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ  CX, CX
	JEQ    x8f16done

x8f16loop:
	PREFETCHT0  (SI)(R12*1)
	PREFETCHT0  64(SI)(R12*1)
	PREFETCHT0  (R8)(R12*1)
	PREFETCHT0  64(R8)(R12*1)
	VCVTPH2PS   (DI), Z8
	VCVTPH2PS   (SI), Z10
	VCVTPH2PS   32(SI), Z11
	VFMADD231PS Z8, Z10, Z0
	VFMADD231PS Z8, Z11, Z1
	VCVTPH2PS   64(SI), Z12
	VCVTPH2PS   96(SI), Z13
	VFMADD231PS Z8, Z12, Z2
	VFMADD231PS Z8, Z13, Z3
	VCVTPH2PS   (R8), Z14
	VCVTPH2PS   32(R8), Z15
	VFMADD231PS Z8, Z14, Z4
	VFMADD231PS Z8, Z15, Z5
	VCVTPH2PS   64(R8), Z16
	VCVTPH2PS   96(R8), Z17
	VFMADD231PS Z8, Z16, Z6
	VFMADD231PS Z8, Z17, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $32, DI
	DECQ        CX
	JNE         x8f16loop

x8f16done:
	X8F16_512_STORE8
	VZEROUPPER
	RET

// X8BF16_512(M, Z): the run of 16 bfloat16 values at M widened into
// Z (zero-extended and shifted into the high half: exact) and
// multiplied into accumulator Z with the activation run in Z8.
#define X8BF16_512(M, T, Z) \
	VPMOVZXWD   M, T; \
	VPSLLD      $16, T, T; \
	VFMADD231PS Z8, T, Z

// func bf16x8iAVX512(x *byte, half uintptr, y *byte, nb int, out *[8]float32, pfd int)
//
// f16x8iAVX512 for bfloat16 rows and activations (twin: BF16Twin per
// row, as bf16x4iAVX2).
TEXT ·bf16x8iAVX512(SB), NOSPLIT, $0-48
	MOVQ   x+0(FP), SI
	MOVQ   pfd+40(FP), R12
	MOVQ   half+8(FP), R8
	ADDQ   SI, R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ  CX, CX
	JEQ    x8bf16done

x8bf16loop:
	PREFETCHT0 (SI)(R12*1)
	PREFETCHT0 64(SI)(R12*1)
	PREFETCHT0 (R8)(R12*1)
	PREFETCHT0 64(R8)(R12*1)
	VPMOVZXWD  (DI), Z8
	VPSLLD     $16, Z8, Z8
	X8BF16_512((SI), Z10, Z0)
	X8BF16_512(32(SI), Z11, Z1)
	X8BF16_512(64(SI), Z12, Z2)
	X8BF16_512(96(SI), Z13, Z3)
	X8BF16_512((R8), Z14, Z4)
	X8BF16_512(32(R8), Z15, Z5)
	X8BF16_512(64(R8), Z16, Z6)
	X8BF16_512(96(R8), Z17, Z7)
	ADDQ       $128, SI
	ADDQ       $128, R8
	ADDQ       $32, DI
	DECQ       CX
	JNE        x8bf16loop

x8bf16done:
	X8F16_512_STORE8
	VZEROUPPER
	RET
