//go:build amd64 && !purego

#include "textflag.h"

// The vnni tier's x8 kernels (see gemv_x8_amd64.s and x8.go): the AVX2
// ones with VPDPBUSD for VPMADDUBSW + VPMADDWD, and zmm registers that
// hold two code vectors each (64 contiguous bytes of a block: vectors v
// and v+1, rows 0-7 in int32 lanes 0-7 and 8-15). The activation codes
// of the two vectors (two different dwords) go into the two halves by a
// VPERMD of the block's 32 codes, and d_x*d_y is the eight rows' scales
// twice. Each code vector keeps the AVX2 kernel's lanes, accumulator
// (one half of a zmm), FMAs and final sums, so the outputs equal its
// twins bit for bit: the int32 sums are exact in both (VPMADDUBSW never
// saturates there, see below), and only the way they are formed differs.
//
// AVX-512 F/BW/VL and AVX512_VNNI only (no DQ: VEXTRACTF64X4, not
// VEXTRACTF32X8).

// The kernels prefetch pfd bytes ahead (R12), as gemv_x8_amd64.s's do.

DATA x8vnib<>+0(SB)/4, $0x0f0f0f0f
GLOBL x8vnib<>(SB), RODATA|NOPTR, $4

// x8vperm<>: the VPERMD index of pair 0, dword 0 in lanes 0-7 and dword
// 1 in lanes 8-15; pair p's index is it plus 2p.
DATA x8vperm<>+0(SB)/8, $0x0000000000000000
DATA x8vperm<>+8(SB)/8, $0x0000000000000000
DATA x8vperm<>+16(SB)/8, $0x0000000000000000
DATA x8vperm<>+24(SB)/8, $0x0000000000000000
DATA x8vperm<>+32(SB)/8, $0x0000000100000001
DATA x8vperm<>+40(SB)/8, $0x0000000100000001
DATA x8vperm<>+48(SB)/8, $0x0000000100000001
DATA x8vperm<>+56(SB)/8, $0x0000000100000001
GLOBL x8vperm<>(SB), RODATA|NOPTR, $64

// X8V_PERMS loads the four pair indices into Z26 (dwords 0,1), Z27 (2,3),
// Z28 (4,5) and Z29 (6,7). Clobbers AX, Z25.
#define X8V_PERMS \
	VMOVDQU64    x8vperm<>(SB), Z26; \
	MOVL         $2, AX; \
	VPBROADCASTD AX, Z25; \
	VPADDD       Z25, Z26, Z27; \
	VPADDD       Z25, Z27, Z28; \
	VPADDD       Z25, Z28, Z29

// X8V_Q4PAIR(OFF, PLO, PHI, PS, ACC): lanes U and U+1 (OFF = 16+64*U/2)
// of the q4_0 kernel for the eight rows of the x8 block at SI: the low
// nibbles of code vectors U, U+1 times their activation dwords (Z5
// permuted by PLO), the high nibbles times dwords 4+U, 5+U (PHI), summed
// by VPDPBUSD (unsigned nibbles, signed codes: exact, as the AVX2
// kernel's word sums, which stay within 2*2*15*128) onto the lanes'
// -8*sum(y) (Z6, negated side lanes, permuted by PS), converted and
// FMA'd with d (Z4) into ACC. Z31 = 0x0f bytes. Clobbers Z7-Z11.
#define X8V_Q4PAIR(OFF, PLO, PHI, PS, ACC) \
	VMOVDQU64 OFF(SI), Z7; \
	VPSRLW    $4, Z7, Z8; \
	VPANDD    Z31, Z7, Z7; \
	VPANDD    Z31, Z8, Z8; \
	VPERMD    Z5, PLO, Z9; \
	VPERMD    Z5, PHI, Z10; \
	VPERMD    Z6, PS, Z11; \
	VPDPBUSD  Z9, Z7, Z11; \
	VPDPBUSD  Z10, Z8, Z11; \
	VCVTDQ2PS Z11, Z11; \
	VFMADD231PS Z4, Z11, ACC

// func q4_0x8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q4_0Twin (SideQ4_0Twin per row), as q4_0x8AVX2. side is
// Q4_0Prep's data (36 bytes a block: the lane sums 8*sum(y) at 0-15,
// again at 16-31, d_y at 32). nb, ng > 0.
TEXT ·q4_0x8VNNI(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ         y+8(FP), DI
	MOVQ         side+16(FP), BX
	MOVQ         nb+24(FP), CX
	MOVQ         ng+32(FP), R10
	MOVQ         out+40(FP), DX
	X8V_PERMS
	VPBROADCASTD x8vnib<>(SB), Z31
	VPXORD       Z30, Z30, Z30

x8vq4group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

x8vq4block:
	PREFETCHT0      (SI)(R12*1)
	PREFETCHT0      64(SI)(R12*1)
	PREFETCHT0      128(SI)(R12*1)
	VBROADCASTI32X4 (SI), Y4
	VCVTPH2PS       Y4, Z4
	VMULPS.BCST     32(R9), Z4, Z4
	VMOVDQU         2(R8), Y5
	VMOVDQU         (R9), Y6
	VPSUBD          Y6, Y30, Y6
	X8V_Q4PAIR(16, Z26, Z28, Z26, Z0)
	X8V_Q4PAIR(80, Z27, Z29, Z27, Z1)
	ADDQ            $144, SI
	ADDQ            $34, R8
	ADDQ            $36, R9
	DECQ            R11
	JNE             x8vq4block

	// (v0+v1) + (v2+v3), as q4_0x8AVX2.
	VEXTRACTF64X4 $1, Z0, Y2
	VEXTRACTF64X4 $1, Z1, Y3
	VADDPS        Y2, Y0, Y0
	VADDPS        Y3, Y1, Y1
	VADDPS        Y1, Y0, Y0
	VMOVUPS       Y0, (DX)
	ADDQ          $32, DX
	DECQ          R10
	JNE           x8vq4group
	VZEROUPPER
	RET

// X8V_Q8PAIR(OFF, P, K, X, T, S, ACC): lanes V and V+1 (OFF = 16+32*V)
// of the q8_0 kernel for the eight rows of the x8 block at SI, by
// q8_0x8AVX2's sign trick: |x| (unsigned) times y with x's sign (y
// negated where x < 0, wrapping at -128 as VPSIGNB; a zero x multiplies
// to 0 either way), y the activation dwords V, V+1 (Z9 permuted by P),
// summed by VPDPBUSD from zero, converted and FMA'd with d (Z8) into ACC.
// The AVX2 kernel's word pairs lie within [-32768, 32512] (|x| <= 128),
// so they never saturate and the sums agree. Z30 = 0.
#define X8V_Q8PAIR(OFF, P, K, X, T, S, ACC) \
	VMOVDQU64   OFF(SI), X; \
	VPMOVB2M    X, K; \
	VPABSB      X, X; \
	VPERMD      Z9, P, T; \
	VPSUBB      T, Z30, K, T; \
	VPXORD      S, S, S; \
	VPDPBUSD    T, X, S; \
	VCVTDQ2PS   S, S; \
	VFMADD231PS Z8, S, ACC

// func q8_0x8VNNI(x *byte, y *byte, side *float32, nb int, ng int, out *float32, pfd int)
//
// Twin: X8Q8_0Twin (Q8_0Twin per row), as q8_0x8AVX2. side holds d_y
// per block. nb, ng > 0.
TEXT ·q8_0x8VNNI(SB), NOSPLIT, $0-56
	MOVQ   x+0(FP), SI
	MOVQ         pfd+48(FP), R12
	MOVQ   y+8(FP), DI
	MOVQ   side+16(FP), BX
	MOVQ   nb+24(FP), CX
	MOVQ   ng+32(FP), R10
	MOVQ   out+40(FP), DX
	X8V_PERMS
	VPXORD Z30, Z30, Z30

x8vq8group:
	MOVQ   DI, R8
	MOVQ   BX, R9
	MOVQ   CX, R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

x8vq8block:
	PREFETCHT0      (SI)(R12*1)
	PREFETCHT0      64(SI)(R12*1)
	PREFETCHT0      128(SI)(R12*1)
	PREFETCHT0      192(SI)(R12*1)
	PREFETCHT0      256(SI)(R12*1)
	VBROADCASTI32X4 (SI), Y8
	VCVTPH2PS       Y8, Z8
	VMULPS.BCST     (R9), Z8, Z8
	VMOVDQU         2(R8), Y9
	X8V_Q8PAIR(16, Z26, K1, Z10, Z11, Z12, Z0)
	X8V_Q8PAIR(80, Z27, K2, Z13, Z14, Z15, Z1)
	X8V_Q8PAIR(144, Z28, K3, Z16, Z17, Z18, Z2)
	X8V_Q8PAIR(208, Z29, K4, Z19, Z20, Z21, Z3)
	ADDQ            $272, SI
	ADDQ            $34, R8
	ADDQ            $4, R9
	DECQ            R11
	JNE             x8vq8block

	// HSUM8's order, as q8_0x8AVX2: Z0 = v0|v1, Z1 = v2|v3, Z2 = v4|v5,
	// Z3 = v6|v7; (v0+v4 | v1+v5) + (v2+v6 | v3+v7), then the halves.
	VADDPS        Z2, Z0, Z0
	VADDPS        Z3, Z1, Z1
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VMOVUPS       Y0, (DX)
	ADDQ          $32, DX
	DECQ          R10
	JNE           x8vq8group
	VZEROUPPER
	RET
