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
