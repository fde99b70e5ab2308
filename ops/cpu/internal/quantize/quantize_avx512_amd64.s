//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 (F, BW, VL) activation quantizers: the AVX2 ones of
// quantize_amd64.s in zmm registers, the same float operations on each
// value (absolute maximum, scale, rounding), so for finite inputs each
// writes exactly quant.QuantizeRow's bytes, as the AVX2 ones do. Codes
// are narrowed by VPMOVSDB (signed saturation, as VPACKSSDW/VPACKSSWB)
// and need no lane permutation.

DATA q5absmask<>+0(SB)/4, $0x7fffffff
GLOBL q5absmask<>(SB), RODATA|NOPTR, $4

DATA q5signmask<>+0(SB)/4, $0x80000000
GLOBL q5signmask<>(SB), RODATA|NOPTR, $4

// 0.49999997, the float32 just below 0.5 (see quantize_amd64.s).
DATA q5almosthalf<>+0(SB)/4, $0x3effffff
GLOBL q5almosthalf<>(SB), RODATA|NOPTR, $4

DATA q5f127<>+0(SB)/4, $0x42fe0000
GLOBL q5f127<>(SB), RODATA|NOPTR, $4

DATA q5fm127<>+0(SB)/4, $0xc2fe0000
GLOBL q5fm127<>(SB), RODATA|NOPTR, $4

DATA q5fone<>+0(SB)/4, $0x3f800000
GLOBL q5fone<>(SB), RODATA|NOPTR, $4

DATA q5finf<>+0(SB)/4, $0x7f800000
GLOBL q5finf<>(SB), RODATA|NOPTR, $4

DATA q5i127<>+0(SB)/4, $127
GLOBL q5i127<>(SB), RODATA|NOPTR, $4

DATA q5hnan<>+0(SB)/2, $0x7e00
GLOBL q5hnan<>(SB), RODATA|NOPTR, $2

DATA q5hsign<>+0(SB)/2, $0x8000
GLOBL q5hsign<>(SB), RODATA|NOPTR, $2

// ABSMAX32Z: X4 = max |v| of the 32 float32 in Z0-Z1 (Z15 = abs mask),
// reduced in ABSMAX32's order (runs of 8 a, b, c, d: max(max(a, b),
// max(c, d)), then halves), so that a NaN survives or not as there.
// Clobbers Z4-Z5.
#define ABSMAX32Z \
	VSHUFF64X2 $0x44, Z1, Z0, Z4; \
	VSHUFF64X2 $0xee, Z1, Z0, Z5; \
	VPANDD Z15, Z4, Z4; \
	VPANDD Z15, Z5, Z5; \
	VMAXPS Z5, Z4, Z4; \
	VEXTRACTF64X4 $1, Z4, Y5; \
	VMAXPS Y5, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VMAXPS X5, X4, X4; \
	VMOVHLPS X4, X4, X5; \
	VMAXPS X5, X4, X4; \
	VMOVSHDUP X4, X5; \
	VMAXSS X5, X4, X4

// ROUNDAWAYZ(Z): Z = int32 of Z rounded half away from zero (Z14 =
// almosthalf, Z13 = sign mask). Clobbers Z8.
#define ROUNDAWAYZ(Z) \
	VPANDD Z13, Z, Z8; \
	VPORD Z14, Z8, Z8; \
	VADDPS Z8, Z, Z; \
	VRNDSCALEPS $3, Z, Z; \
	VCVTTPS2DQ Z, Z

// Q8_SCALEZ: from amax in X4, X5 = d = amax/127 and Z6 = id = 1/d
// broadcast (0 when d is 0). Clobbers X7, X9.
#define Q8_SCALEZ \
	VMOVSS q5f127<>(SB), X7; \
	VDIVSS X7, X4, X5; \
	VMOVSS q5fone<>(SB), X7; \
	VDIVSS X5, X7, X6; \
	VXORPS X9, X9, X9; \
	VCMPSS $4, X9, X5, X9; \
	VANDPS X9, X6, X6; \
	VBROADCASTSS X6, Z6

// Q8_CODESZ: Z0-Z1 = the int32 codes round(v*id) of the 32 floats in
// Z0-Z1 (Z6 = id).
#define Q8_CODESZ \
	VMULPS Z6, Z0, Z0; \
	VMULPS Z6, Z1, Z1; \
	ROUNDAWAYZ(Z0); \
	ROUNDAWAYZ(Z1)

// PACK32Z: Y0 = the int32 lanes of Z0-Z1 as 32 int8 in order. Clobbers
// X1.
#define PACK32Z \
	VPMOVSDB Z0, X0; \
	VPMOVSDB Z1, X1; \
	VINSERTI128 $1, X1, Y0, Y0

#define Q8_CONSTSZ \
	VPBROADCASTD q5absmask<>(SB), Z15; \
	VPBROADCASTD q5almosthalf<>(SB), Z14; \
	VPBROADCASTD q5signmask<>(SB), Z13

// func quantQ8_0AVX512(x *float32, y *byte, nb int)
TEXT ·quantQ8_0AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	Q8_CONSTSZ
	TESTQ CX, CX
	JEQ   q805done

q805loop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	ABSMAX32Z
	Q8_SCALEZ
	VCVTPS2PH $0, X5, X7
	VMOVD     X7, AX
	MOVW      AX, (DI)
	// id = +Inf: every code 0, as the reference (see quantQ8_0AVX2).
	VUCOMISS  q5finf<>(SB), X6
	JEQ       q805zero
	Q8_CODESZ
	PACK32Z
	VMOVDQU   Y0, 2(DI)

q805next:
	ADDQ $128, SI
	ADDQ $34, DI
	DECQ CX
	JNE  q805loop
	JMP  q805done

q805zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, 2(DI)
	JMP     q805next

q805done:
	VZEROUPPER
	RET

// func quantQ8_1AVX512(x *float32, y *byte, nb int)
TEXT ·quantQ8_1AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	Q8_CONSTSZ
	TESTQ CX, CX
	JEQ   q815done

q815loop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	ABSMAX32Z
	Q8_SCALEZ
	VCVTPS2PH $0, X5, X7
	VMOVD     X7, AX
	MOVW      AX, (DI)
	VUCOMISS  q5finf<>(SB), X6
	JEQ       q815zero
	Q8_CODESZ

	// s = float32(sum of the codes) * d.
	VPADDD        Z1, Z0, Z9
	VEXTRACTI64X4 $1, Z9, Y10
	VPADDD        Y10, Y9, Y9
	VEXTRACTI128  $1, Y9, X10
	VPADDD        X10, X9, X9
	VPSHUFD       $0x4e, X9, X10
	VPADDD        X10, X9, X9
	VPSHUFD       $0xb1, X9, X10
	VPADDD        X10, X9, X9
	VMOVD         X9, AX
	VCVTSI2SSL    AX, X10, X10
	VMULSS        X5, X10, X10
	VCVTPS2PH     $0, X10, X10
	VMOVD         X10, AX
	MOVW          AX, 2(DI)
	PACK32Z
	VMOVDQU       Y0, 4(DI)

q815next:
	ADDQ $128, SI
	ADDQ $36, DI
	DECQ CX
	JNE  q815loop
	JMP  q815done

q815zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, 4(DI)
	MOVW    $0, 2(DI)
	JMP     q815next

q815done:
	VZEROUPPER
	RET

// func quantQ8_KAVX512(x *float32, y *byte, nb int)
TEXT ·quantQ8_KAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         nb+16(FP), CX
	VPBROADCASTD q5absmask<>(SB), Z15
	VPBROADCASTD q5i127<>(SB), Z11
	TESTQ        CX, CX
	JEQ          q8k5done

q8k5loop:
	// amax over the 256 values: lanes 0-7 and 8-15 of Z4 are
	// quantQ8_KAVX2's two accumulators, taking the values in its order.
	VPXORD Z4, Z4, Z4
	MOVQ   $0, BX

q8k5max:
	VPANDD (SI)(BX*1), Z15, Z0
	VPANDD 64(SI)(BX*1), Z15, Z1
	VPANDD 128(SI)(BX*1), Z15, Z2
	VPANDD 192(SI)(BX*1), Z15, Z3
	VMAXPS Z0, Z4, Z4
	VMAXPS Z1, Z4, Z4
	VMAXPS Z2, Z4, Z4
	VMAXPS Z3, Z4, Z4
	ADDQ   $256, BX
	CMPQ   BX, $1024
	JLT    q8k5max
	VEXTRACTF64X4 $1, Z4, Y5
	VMAXPS        Y5, Y4, Y4
	VEXTRACTF128  $1, Y4, X5
	VMAXPS        X5, X4, X4
	VMOVHLPS      X4, X4, X5
	VMAXPS        X5, X4, X4
	VMOVSHDUP     X4, X5
	VMAXSS        X5, X4, X4
	VXORPS        X5, X5, X5
	VUCOMISS      X5, X4
	JNE           q8k5nonzero

	// An all-zero block is all zero bytes (so is a block whose maximum
	// is not found, which only NaNs cause).
q8k5notfound:
	MOVQ $0, BX
	JMP  q8k5clear

q8k5inf:
	MOVQ $4, BX

q8k5clear:
	VXORPS Y0, Y0, Y0

q8k5zero:
	VMOVDQU Y0, (DI)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, $288
	JLT     q8k5zero
	MOVL    $0, 288(DI)
	JMP     q8k5next

q8k5nonzero:
	// vmax = the first value whose magnitude is amax, sign kept.
	VBROADCASTSS X4, Z4
	MOVQ         $0, BX

q8k5find:
	CMPQ    BX, $256
	JGE     q8k5notfound
	VPANDD  (SI)(BX*4), Z15, Z0
	VCMPPS  $0, Z4, Z0, K2
	KMOVW   K2, AX
	TESTL   AX, AX
	JNE     q8k5found
	ADDQ    $16, BX
	JMP     q8k5find

q8k5found:
	BSFL   AX, AX
	ADDQ   AX, BX
	VMOVSS (SI)(BX*4), X1

	// iscale = -127/vmax; d = 1/iscale (see quantQ8_KAVX2).
	VMOVSS       q5fm127<>(SB), X2
	VDIVSS       X1, X2, X6
	VMOVSS       q5fone<>(SB), X2
	VDIVSS       X6, X2, X2
	VMOVSS       X2, (DI)
	VANDPS       X15, X6, X7
	VUCOMISS     q5finf<>(SB), X7
	JEQ          q8k5inf
	VBROADCASTSS X6, Z6
	MOVQ         $0, BX
	MOVQ         $0, DX

q8k5codes:
	// 32 values: codes min(127, round-to-even(iscale*v)), and the two
	// bsums of their 16-element groups (one zmm each).
	VMULPS        (SI)(BX*4), Z6, Z0
	VMULPS        64(SI)(BX*4), Z6, Z1
	VCVTPS2DQ     Z0, Z0
	VCVTPS2DQ     Z1, Z1
	VPMINSD       Z11, Z0, Z0
	VPMINSD       Z11, Z1, Z1
	VEXTRACTI64X4 $1, Z0, Y8
	VPADDD        Y8, Y0, Y8
	VEXTRACTI64X4 $1, Z1, Y9
	VPADDD        Y9, Y1, Y9
	VPHADDD       Y9, Y8, Y8
	VPHADDD       Y8, Y8, Y8
	VEXTRACTI128  $1, Y8, X9
	VPADDD        X9, X8, X8
	VPACKSSDW     X8, X8, X8
	VMOVD         X8, AX
	MOVL          AX, 260(DI)(DX*4)
	PACK32Z
	VMOVDQU       Y0, 4(DI)(BX*1)
	ADDQ          $32, BX
	INCQ          DX
	CMPQ          BX, $256
	JLT           q8k5codes

q8k5next:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNE  q8k5loop

q8k5done:
	VZEROUPPER
	RET

// F16_16(Z, Y): Y = Z's 16 floats as binary16, every NaN written as
// 0x7e00 with its sign (Y14 = 0x7e00s, Y13 = 0x8000s). Clobbers Y3, K2.
#define F16_16(Z, Y) \
	VCVTPS2PH  $0, Z, Y; \
	VCMPPS     $3, Z, Z, K2; \
	VPAND      Y13, Y, Y3; \
	VPOR       Y14, Y3, Y3; \
	VMOVDQU16  Y3, K2, Y

// func cvtF32F16AVX512(x *float32, y *uint16, n int)
TEXT ·cvtF32F16AVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTW q5hnan<>(SB), Y14
	VPBROADCASTW q5hsign<>(SB), Y13

f165by32:
	CMPQ    CX, $32
	JLT     f165by16
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z4
	F16_16(Z0, Y1)
	F16_16(Z4, Y5)
	VMOVDQU Y1, (DI)
	VMOVDQU Y5, 32(DI)
	ADDQ    $128, SI
	ADDQ    $64, DI
	SUBQ    $32, CX
	JMP     f165by32

f165by16:
	CMPQ    CX, $16
	JLT     f165tail
	VMOVUPS (SI), Z0
	F16_16(Z0, Y1)
	VMOVDQU Y1, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	SUBQ    $16, CX

f165tail:
	TESTQ     CX, CX
	JEQ       f165done
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	F16_16(Z0, Y1)
	VMOVDQU16 Y1, K1, (DI)

f165done:
	VZEROUPPER
	RET

// BF16_16(z, y) sets y to the sixteen bfloat16 of the float32 in z as
// quant.FP32ToBF16 rounds them: (bits + 0x7fff + bit 16) >> 16, to
// nearest with ties to even, a NaN (magnitude bits above 0x7f800000)
// its top half with the quiet bit 0x40 set. Z11-Z15 hold the constants
// (cvtF32BF16AVX512); clobbers Z2-Z4 and K2.
#define BF16_16(z, y) \
	VPSRLD  $16, z, Z2; \
	VPANDD  Z15, Z2, Z3; \
	VPADDD  z, Z3, Z3; \
	VPADDD  Z14, Z3, Z3; \
	VPSRLD  $16, Z3, Z3; \
	VPANDD  Z13, z, Z4; \
	VPCMPUD $6, Z12, Z4, K2; \
	VPORD   Z11, Z2, K2, Z3; \
	VPMOVDW Z3, y

// func cvtF32BF16AVX512(x *float32, y *uint16, n int)
TEXT ·cvtF32BF16AVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVL         $0x40, AX
	VPBROADCASTD AX, Z11
	MOVL         $0x7f800000, AX
	VPBROADCASTD AX, Z12
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z13
	MOVL         $0x7fff, AX
	VPBROADCASTD AX, Z14
	MOVL         $1, AX
	VPBROADCASTD AX, Z15

bf16by16:
	CMPQ    CX, $16
	JLT     bf16tail
	VMOVUPS (SI), Z0
	BF16_16(Z0, Y1)
	VMOVDQU Y1, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	SUBQ    $16, CX
	JMP     bf16by16

bf16tail:
	TESTQ     CX, CX
	JEQ       bf16done
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	BF16_16(Z0, Y1)
	VMOVDQU16 Y1, K1, (DI)

bf16done:
	VZEROUPPER
	RET
