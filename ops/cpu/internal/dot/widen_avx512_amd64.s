//go:build amd64 && !purego

#include "textflag.h"

// func cvtF16F32AVX512(x *uint16, y *float32, n int)
//
// y[i] = x[i] widened from binary16 by VCVTPH2PS, 64 values per step in
// four zmm registers, then 16, then a masked step for the last n%16
// (the masked-off lanes neither read nor written). n > 0.
TEXT ·cvtF16F32AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX

w16by64:
	CMPQ      CX, $64
	JLT       w16by16
	VCVTPH2PS (SI), Z0
	VCVTPH2PS 32(SI), Z1
	VCVTPH2PS 64(SI), Z2
	VCVTPH2PS 96(SI), Z3
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $128, SI
	ADDQ      $256, DI
	SUBQ      $64, CX
	JMP       w16by64

w16by16:
	CMPQ      CX, $16
	JLT       w16tail
	VCVTPH2PS (SI), Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       w16by16

w16tail:
	TESTQ     CX, CX
	JEQ       w16done
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VCVTPH2PS (SI), K1, Z0
	VMOVUPS   Z0, K1, (DI)

w16done:
	VZEROUPPER
	RET

// func cvtBF16F32AVX512(x *uint16, y *float32, n int)
//
// y[i] = x[i] << 16 (bfloat16 to float32: the high half of the bits), as
// cvtF16F32AVX512 steps: VPMOVZXWD and VPSLLD in zmm (AVX-512 BW), a
// masked step for the last n%16. n > 0.
TEXT ·cvtBF16F32AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX

wb16by64:
	CMPQ      CX, $64
	JLT       wb16by16
	VPMOVZXWD (SI), Z0
	VPMOVZXWD 32(SI), Z1
	VPMOVZXWD 64(SI), Z2
	VPMOVZXWD 96(SI), Z3
	VPSLLD    $16, Z0, Z0
	VPSLLD    $16, Z1, Z1
	VPSLLD    $16, Z2, Z2
	VPSLLD    $16, Z3, Z3
	VMOVDQU32 Z0, (DI)
	VMOVDQU32 Z1, 64(DI)
	VMOVDQU32 Z2, 128(DI)
	VMOVDQU32 Z3, 192(DI)
	ADDQ      $128, SI
	ADDQ      $256, DI
	SUBQ      $64, CX
	JMP       wb16by64

wb16by16:
	CMPQ      CX, $16
	JLT       wb16tail
	VPMOVZXWD (SI), Z0
	VPSLLD    $16, Z0, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       wb16by16

wb16tail:
	TESTQ     CX, CX
	JEQ       wb16done
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VPMOVZXWD (SI), K1, Z0
	VPSLLD    $16, Z0, Z0
	VMOVDQU32 Z0, K1, (DI)

wb16done:
	VZEROUPPER
	RET
