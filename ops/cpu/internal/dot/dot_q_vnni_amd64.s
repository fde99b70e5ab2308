//go:build amd64 && !purego

#include "textflag.h"
#include "dot_amd64.h"

// The vnni tier's q4_0 and q8_0 dot products: dot_q_amd64.s's with two
// blocks in one zmm register (block 2i in lanes 0-7, where the AVX2
// kernels' Y0 accumulates it, block 2i+1 in lanes 8-15, their Y1) and
// VPDPBUSD (the odd last block takes the AVX2 kernel's own
// instructions). Each block's eight int32 lanes are the AVX2 kernel's exactly
// (lane l: the four products of elements 4l..4l+3; VPMADDUBSW's pairs
// never saturate there: q8_0's reach -32768 at most), and every lane
// takes the same float32 steps in the same order (VCVTDQ2PS, one FMA by
// f16(d_x)*f16(d_y) per block, the odd last block into Y0, Y0+Y1 and
// HSUM8), so each equals the AVX2 dot product (and its twin) bit for
// bit; the flash-attention q8_0 score kernels, which sum as the AVX2
// q8_0 dot does, sum as this one does too. AVX-512 F/BW/VL and
// AVX512_VNNI (no DQ).

DATA dvnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL dvnib<>(SB), RODATA|NOPTR, $8

DATA dveight<>+0(SB)/8, $0x0808080808080808
GLOBL dveight<>(SB), RODATA|NOPTR, $8

// dvshift: dword shift counts 0, 4 per 128-bit lane.
DATA dvshift<>+0(SB)/8, $0
DATA dvshift<>+8(SB)/8, $0
DATA dvshift<>+16(SB)/8, $0x0000000400000004
DATA dvshift<>+24(SB)/8, $0x0000000400000004
DATA dvshift<>+32(SB)/8, $0
DATA dvshift<>+40(SB)/8, $0
DATA dvshift<>+48(SB)/8, $0x0000000400000004
DATA dvshift<>+56(SB)/8, $0x0000000400000004
GLOBL dvshift<>(SB), RODATA|NOPTR, $64

// DV_SCALE2(XS, YS): Z5 = f16(d_x)*f16(d_y) of the block pair at (SI),
// (DI) (the second XS, YS bytes on) in lanes 0-7 and 8-15, as
// SCALE_F16 forms each. K1 = words 8-15 of a ymm register.
#define DV_SCALE2(XS, YS) \
	VPBROADCASTW (SI), Y5; \
	VPBROADCASTW XS(SI), K1, Y5; \
	VPBROADCASTW (DI), Y6; \
	VPBROADCASTW YS(DI), K1, Y6; \
	VCVTPH2PS    Y5, Z5; \
	VCVTPH2PS    Y6, Z6; \
	VMULPS       Z6, Z5, Z5

// DV_Q8PAIR: Z0 += the q8_0 block pair's lanes (SIGNED_DOT's: |x| by
// VPABSB, y negated under the mask of negative x by VPSUBB from zero,
// -128 wrapping as VPSIGNB's does) times Z5. Z12 = 0. Clobbers Z2-Z4, Z7,
// K2.
#define DV_Q8PAIR \
	VMOVDQU      2(SI), Y2; \
	VINSERTI64X4 $1, 36(SI), Z2, Z2; \
	VMOVDQU      2(DI), Y4; \
	VINSERTI64X4 $1, 36(DI), Z4, Z4; \
	VPMOVB2M     Z2, K2; \
	VPABSB       Z2, Z3; \
	VPSUBB       Z4, Z12, K2, Z4; \
	VPXORD       Z7, Z7, Z7; \
	VPDPBUSD     Z4, Z3, Z7; \
	VCVTDQ2PS    Z7, Z7; \
	VFMADD231PS  Z5, Z7, Z0

// DV_Q4PAIR: Z0 += the q4_0 block pair's lanes times Z5: the codes
// q-8 put through SIGNED_DOT's sign trick as DV_Q8PAIR does (y = -128
// against a negative code wraps as VPSIGNB's does, so the lanes are the
// AVX2 kernel's, not the exact (q-8)*y). K3 = dwords 8-15, Z11 =
// dvshift, Z14 = 0x0f, Z13 = 0x08 bytes, Z12 = 0. Clobbers Z2-Z4, Z7,
// K2.
#define DV_Q4PAIR \
	VBROADCASTI32X4 2(SI), Z2; \
	VBROADCASTI32X4 20(SI), K3, Z2; \
	VPSRLVD         Z11, Z2, Z2; \
	VPANDD          Z14, Z2, Z2; \
	VPSUBB          Z13, Z2, Z2; \
	VMOVDQU         2(DI), Y4; \
	VINSERTI64X4    $1, 36(DI), Z4, Z4; \
	VPMOVB2M        Z2, K2; \
	VPABSB          Z2, Z3; \
	VPSUBB          Z4, Z12, K2, Z4; \
	VPXORD          Z7, Z7, Z7; \
	VPDPBUSD        Z4, Z3, Z7; \
	VCVTDQ2PS       Z7, Z7; \
	VFMADD231PS     Z5, Z7, Z0

// DV_SETUP: K1 = 0xff00 (words), K3 = 0xff00 (dwords), Z12 = 0, Z0 = 0.
#define DV_SETUP \
	MOVL   $0xff00, AX; \
	KMOVW  AX, K1; \
	KMOVW  AX, K3; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z0, Z0, Z0

// func dotQ8_0Q8_0VNNI(x, y *byte, nb int) float32
TEXT ·dotQ8_0Q8_0VNNI(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	DV_SETUP
	CMPQ CX, $2
	JLT  dvq80one

dvq80two:
	DV_SCALE2(34, 34)
	DV_Q8PAIR
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  dvq80two

dvq80one:
	VEXTRACTF64X4 $1, Z0, Y1
	TESTQ CX, CX
	JEQ   dvq80done
	// The odd last block into Y0, as the AVX2 kernel's Q8_0_BLOCK.
	VMOVDQU     2(SI), Y2
	VMOVDQU     2(DI), Y4
	VPSIGNB     Y2, Y2, Y3
	VPSIGNB     Y2, Y4, Y4
	VPMADDUBSW  Y4, Y3, Y4
	VPCMPEQW    Y15, Y15, Y15
	VPSRLW      $15, Y15, Y15
	VPMADDWD    Y15, Y4, Y4
	VCVTDQ2PS   Y4, Y4
	VPBROADCASTW (SI), X5
	VPBROADCASTW (DI), X6
	VCVTPH2PS   X5, Y5
	VCVTPH2PS   X6, Y6
	VMULPS      Y6, Y5, Y5
	VFMADD231PS Y5, Y4, Y0

dvq80done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_0Q8_0VNNI(x, y *byte, nb int) float32
TEXT ·dotQ4_0Q8_0VNNI(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	DV_SETUP
	VMOVDQU64    dvshift<>(SB), Z11
	VPBROADCASTQ dvnib<>(SB), Z14
	VPBROADCASTQ dveight<>(SB), Z13
	CMPQ CX, $2
	JLT  dvq40one

dvq40two:
	DV_SCALE2(18, 34)
	DV_Q4PAIR
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  dvq40two

dvq40one:
	VEXTRACTF64X4 $1, Z0, Y1
	TESTQ CX, CX
	JEQ   dvq40done
	// The odd last block into Y0, as the AVX2 kernel's Q4_0_BLOCK.
	VMOVDQU     2(SI), X2
	VPSRLW      $4, X2, X3
	VINSERTI128 $1, X3, Y2, Y2
	VPAND       Y14, Y2, Y2
	VPSUBB      Y13, Y2, Y2
	VMOVDQU     2(DI), Y4
	VPSIGNB     Y2, Y2, Y3
	VPSIGNB     Y2, Y4, Y4
	VPMADDUBSW  Y4, Y3, Y4
	VPCMPEQW    Y15, Y15, Y15
	VPSRLW      $15, Y15, Y15
	VPMADDWD    Y15, Y4, Y4
	VCVTDQ2PS   Y4, Y4
	VPBROADCASTW (SI), X5
	VPBROADCASTW (DI), X6
	VCVTPH2PS   X5, Y5
	VCVTPH2PS   X6, Y6
	VMULPS      Y6, Y5, Y5
	VFMADD231PS Y5, Y4, Y0

dvq40done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
