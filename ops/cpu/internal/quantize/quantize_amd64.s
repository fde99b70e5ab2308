//go:build amd64 && !purego

#include "textflag.h"

// AVX2 activation quantizers. For finite inputs each writes exactly the
// bytes of quant.QuantizeRow (ggml's reference quantizer), which is what
// the tests check; see quantize_amd64.go for how non-finite inputs differ.

DATA absmask<>+0(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $4

DATA signmask<>+0(SB)/4, $0x80000000
GLOBL signmask<>(SB), RODATA|NOPTR, $4

// almosthalf is 0.49999997, the float32 just below 0.5: trunc(p +
// copysign(almosthalf, p)) rounds p half away from zero for |p| < 2^23.
DATA almosthalf<>+0(SB)/4, $0x3effffff
GLOBL almosthalf<>(SB), RODATA|NOPTR, $4

DATA f127<>+0(SB)/4, $0x42fe0000
GLOBL f127<>(SB), RODATA|NOPTR, $4

DATA fm127<>+0(SB)/4, $0xc2fe0000
GLOBL fm127<>(SB), RODATA|NOPTR, $4

DATA fone<>+0(SB)/4, $0x3f800000
GLOBL fone<>(SB), RODATA|NOPTR, $4

DATA finf<>+0(SB)/4, $0x7f800000
GLOBL finf<>(SB), RODATA|NOPTR, $4

DATA i127<>+0(SB)/4, $127
GLOBL i127<>(SB), RODATA|NOPTR, $4

// Half-precision NaN fix-up: quant.FP32ToFP16 writes every NaN as 0x7e00
// with the input's sign.
DATA hnan<>+0(SB)/2, $0x7e00
GLOBL hnan<>(SB), RODATA|NOPTR, $2

DATA hsign<>+0(SB)/2, $0x8000
GLOBL hsign<>(SB), RODATA|NOPTR, $2

// packperm restores element order after VPACKSSDW/VPACKSSWB, which
// interleave the 128-bit lanes: dword i of the result goes to position
// packperm[i].
DATA packperm<>+0(SB)/4, $0
DATA packperm<>+4(SB)/4, $4
DATA packperm<>+8(SB)/4, $1
DATA packperm<>+12(SB)/4, $5
DATA packperm<>+16(SB)/4, $2
DATA packperm<>+20(SB)/4, $6
DATA packperm<>+24(SB)/4, $3
DATA packperm<>+28(SB)/4, $7
GLOBL packperm<>(SB), RODATA|NOPTR, $32

// ABSMAX32: X4 = max |v| of the 32 float32 in Y0-Y3 (Y15 = abs mask).
// Clobbers Y4-Y7.
#define ABSMAX32 \
	VANDPS Y15, Y0, Y4; \
	VANDPS Y15, Y1, Y5; \
	VANDPS Y15, Y2, Y6; \
	VANDPS Y15, Y3, Y7; \
	VMAXPS Y5, Y4, Y4; \
	VMAXPS Y7, Y6, Y6; \
	VMAXPS Y6, Y4, Y4; \
	VEXTRACTF128 $1, Y4, X5; \
	VMAXPS X5, X4, X4; \
	VMOVHLPS X4, X4, X5; \
	VMAXPS X5, X4, X4; \
	VMOVSHDUP X4, X5; \
	VMAXSS X5, X4, X4

// ROUNDAWAY(Y): Y = int32 of Y rounded half away from zero (Y14 =
// almosthalf, Y13 = sign mask). Clobbers Y8.
#define ROUNDAWAY(Y) \
	VANDPS Y13, Y, Y8; \
	VORPS Y14, Y8, Y8; \
	VADDPS Y8, Y, Y; \
	VROUNDPS $3, Y, Y; \
	VCVTTPS2DQ Y, Y

// PACK32: Y0 = the int32 lanes of Y0-Y3 (elements 0-31, in range) as 32
// int8 in order (Y12 = packperm). Clobbers Y2.
#define PACK32 \
	VPACKSSDW Y1, Y0, Y0; \
	VPACKSSDW Y3, Y2, Y2; \
	VPACKSSWB Y2, Y0, Y0; \
	VPERMD Y0, Y12, Y0

// Q8_SCALE: from amax in X4, X5 = d = amax/127 and Y6 = id = 1/d
// broadcast (0 when d is 0). Clobbers X7, X9.
#define Q8_SCALE \
	VMOVSS f127<>(SB), X7; \
	VDIVSS X7, X4, X5; \
	VMOVSS fone<>(SB), X7; \
	VDIVSS X5, X7, X6; \
	VXORPS X9, X9, X9; \
	VCMPSS $4, X9, X5, X9; \
	VANDPS X9, X6, X6; \
	VBROADCASTSS X6, Y6

// Q8_CODES: Y0-Y3 = the int32 codes round(v*id) of the 32 floats in
// Y0-Y3 (Y6 = id).
#define Q8_CODES \
	VMULPS Y6, Y0, Y0; \
	VMULPS Y6, Y1, Y1; \
	VMULPS Y6, Y2, Y2; \
	VMULPS Y6, Y3, Y3; \
	ROUNDAWAY(Y0); \
	ROUNDAWAY(Y1); \
	ROUNDAWAY(Y2); \
	ROUNDAWAY(Y3)

#define LOAD32 \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	VMOVUPS 64(SI), Y2; \
	VMOVUPS 96(SI), Y3

#define Q8_CONSTS \
	VBROADCASTSS absmask<>(SB), Y15; \
	VBROADCASTSS almosthalf<>(SB), Y14; \
	VBROADCASTSS signmask<>(SB), Y13; \
	VMOVDQU packperm<>(SB), Y12

// HSUMD leaves the sum of Y's eight int32 lanes in the low lane of X.
#define HSUMD(Y, X, T) \
	VEXTRACTI128 $1, Y, T; \
	VPADDD T, X, X; \
	VPSHUFD $0x4e, X, T; \
	VPADDD T, X, X; \
	VPSHUFD $0xb1, X, T; \
	VPADDD T, X, X

// func quantQ8_0AVX2(x *float32, y *byte, nb int)
TEXT ·quantQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	Q8_CONSTS
	TESTQ CX, CX
	JEQ   q80done

q80loop:
	LOAD32
	ABSMAX32
	Q8_SCALE
	VCVTPS2PH $0, X5, X7
	VMOVD     X7, AX
	MOVW      AX, (DI)
	// With d below 1/MaxFloat32, id is +Inf and every product Inf or NaN,
	// which the reference's float-to-int conversion turns into code 0.
	VUCOMISS  finf<>(SB), X6
	JEQ       q80zero
	Q8_CODES
	PACK32
	VMOVDQU   Y0, 2(DI)

q80next:
	ADDQ      $128, SI
	ADDQ      $34, DI
	DECQ      CX
	JNE       q80loop
	JMP       q80done

q80zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, 2(DI)
	JMP     q80next

q80done:
	VZEROUPPER
	RET

// func quantQ8_1AVX2(x *float32, y *byte, nb int)
TEXT ·quantQ8_1AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	Q8_CONSTS
	TESTQ CX, CX
	JEQ   q81done

q81loop:
	LOAD32
	ABSMAX32
	Q8_SCALE
	VCVTPS2PH   $0, X5, X7
	VMOVD       X7, AX
	MOVW        AX, (DI)
	VUCOMISS    finf<>(SB), X6
	JEQ         q81zero
	Q8_CODES

	// s = float32(sum of the codes) * d.
	VPADDD      Y1, Y0, Y9
	VPADDD      Y3, Y2, Y10
	VPADDD      Y10, Y9, Y9
	HSUMD(Y9, X9, X10)
	VMOVD       X9, AX
	VCVTSI2SSL  AX, X10, X10
	VMULSS      X5, X10, X10
	VCVTPS2PH   $0, X10, X10
	VMOVD       X10, AX
	MOVW        AX, 2(DI)
	PACK32
	VMOVDQU     Y0, 4(DI)

q81next:
	ADDQ        $128, SI
	ADDQ        $36, DI
	DECQ        CX
	JNE         q81loop
	JMP         q81done

q81zero:
	// Codes 0 (see q80zero), so s = 0*d = +0.
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, 4(DI)
	MOVW    $0, 2(DI)
	JMP     q81next

q81done:
	VZEROUPPER
	RET

// func quantQ8_KAVX2(x *float32, y *byte, nb int)
TEXT ·quantQ8_KAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VBROADCASTSS absmask<>(SB), Y15
	VMOVDQU      packperm<>(SB), Y12
	VPBROADCASTD i127<>(SB), Y11
	TESTQ        CX, CX
	JEQ          q8kdone

q8kloop:
	// amax over the 256 values.
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	MOVQ   $0, BX

q8kmax:
	VANDPS (SI)(BX*1), Y15, Y0
	VANDPS 32(SI)(BX*1), Y15, Y1
	VMAXPS Y0, Y4, Y4
	VMAXPS Y1, Y5, Y5
	ADDQ   $64, BX
	CMPQ   BX, $1024
	JLT    q8kmax
	VMAXPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS X5, X4, X4
	VXORPS X5, X5, X5
	VUCOMISS X5, X4
	JNE    q8knonzero

	// An all-zero block is all zero bytes (so is a block whose maximum
	// is not found, which only NaNs cause).
q8knotfound:
	MOVQ    $0, BX
	JMP     q8kclear

q8kinf:
	MOVQ    $4, BX

q8kclear:
	VXORPS  Y0, Y0, Y0

q8kzero:
	VMOVDQU Y0, (DI)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, $288
	JLT     q8kzero
	MOVL    $0, 288(DI)
	JMP     q8knext

q8knonzero:
	// vmax = the first value whose magnitude is amax, sign kept.
	VBROADCASTSS X4, Y4
	MOVQ   $0, BX

q8kfind:
	CMPQ     BX, $256
	JGE      q8knotfound
	VANDPS   (SI)(BX*4), Y15, Y0
	VCMPPS   $0, Y4, Y0, Y0
	VMOVMSKPS Y0, AX
	TESTL    AX, AX
	JNE      q8kfound
	ADDQ     $8, BX
	JMP      q8kfind

q8kfound:
	BSFL   AX, AX
	ADDQ   AX, BX
	VMOVSS (SI)(BX*4), X1

	// iscale = -127/vmax; d = 1/iscale.
	VMOVSS       fm127<>(SB), X2
	VDIVSS       X1, X2, X6
	VMOVSS       fone<>(SB), X2
	VDIVSS       X6, X2, X2
	VMOVSS       X2, (DI)
	// When |vmax| < 127/MaxFloat32, iscale is infinite and every product
	// Inf or NaN, which the reference's rounding turns into code 0: the
	// codes and bsums are zeros, d is 1/iscale = -0 or +0.
	VANDPS       X15, X6, X7
	VUCOMISS     finf<>(SB), X7
	JEQ          q8kinf
	VBROADCASTSS X6, Y6
	MOVQ         $0, BX
	MOVQ         $0, DX

q8kcodes:
	// 32 values: codes min(127, round-to-even(iscale*v)), and the two
	// bsums of their 16-element groups.
	VMULPS     (SI)(BX*4), Y6, Y0
	VMULPS     32(SI)(BX*4), Y6, Y1
	VMULPS     64(SI)(BX*4), Y6, Y2
	VMULPS     96(SI)(BX*4), Y6, Y3
	VCVTPS2DQ  Y0, Y0
	VCVTPS2DQ  Y1, Y1
	VCVTPS2DQ  Y2, Y2
	VCVTPS2DQ  Y3, Y3
	VPMINSD    Y11, Y0, Y0
	VPMINSD    Y11, Y1, Y1
	VPMINSD    Y11, Y2, Y2
	VPMINSD    Y11, Y3, Y3
	VPADDD     Y1, Y0, Y8
	VPADDD     Y3, Y2, Y9
	VPHADDD    Y9, Y8, Y8
	VPHADDD    Y8, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD     X9, X8, X8
	VPACKSSDW  X8, X8, X8
	VMOVD      X8, AX
	MOVL       AX, 260(DI)(DX*4)
	PACK32
	VMOVDQU    Y0, 4(DI)(BX*1)
	ADDQ       $32, BX
	INCQ       DX
	CMPQ       BX, $256
	JLT        q8kcodes

q8knext:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNE  q8kloop

q8kdone:
	VZEROUPPER
	RET

// func cvtF32F16AVX2(x *float32, y *uint16, n int)
TEXT ·cvtF32F16AVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         n+16(FP), CX
	VPBROADCASTW hnan<>(SB), X14
	VPBROADCASTW hsign<>(SB), X13

f16by8:
	CMPQ       CX, $8
	JLT        f16by1
	VMOVUPS    (SI), Y0
	VCVTPS2PH  $0, Y0, X1
	// NaN lanes become 0x7e00 with their sign.
	VCMPPS     $3, Y0, Y0, Y2
	VEXTRACTF128 $1, Y2, X3
	VPACKSSDW  X3, X2, X2
	VPAND      X13, X1, X3
	VPOR       X14, X3, X3
	VPBLENDVB  X2, X3, X1, X1
	VMOVDQU    X1, (DI)
	ADDQ       $32, SI
	ADDQ       $16, DI
	SUBQ       $8, CX
	JMP        f16by8

f16by1:
	TESTQ      CX, CX
	JEQ        f16done
	VMOVSS     (SI), X0
	VCVTPS2PH  $0, X0, X1
	VUCOMISS   X0, X0
	JPC        f16store
	VPAND      X13, X1, X1
	VPOR       X14, X1, X1

f16store:
	VMOVD      X1, AX
	MOVW       AX, (DI)
	ADDQ       $4, SI
	ADDQ       $2, DI
	DECQ       CX
	JMP        f16by1

f16done:
	VZEROUPPER
	RET
