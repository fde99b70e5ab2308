//go:build amd64 && !purego

#include "textflag.h"
#include "dot_amd64.h"

// AVX2+FMA dot products of float rows, their conversions and the float
// register tile.
// Each function has a pure-Go twin in twin.go that performs the same
// float32 operations in the same order (lane by lane), so that tests can
// compare the two bit for bit. Register conventions: SI walks x, DI walks
// y, CX counts what is left.

// func dotF32AVX2(x, y *float32, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ CX, $32
	JLT  f32by8

f32by32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         f32by32

f32by8:
	CMPQ        CX, $8
	JLT         f32reduce
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         f32by8

f32reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM8(Y0, X0, X1)
	VXORPS X2, X2, X2

f32by1:
	TESTQ       CX, CX
	JEQ         f32done
	VMOVSS      (SI), X3
	VFMADD231SS (DI), X3, X2
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         f32by1

f32done:
	VADDSS     X2, X0, X0
	VZEROUPPER
	MOVSS      X0, ret+24(FP)
	RET

// func dotF16AVX2(x, y *uint16, n int) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ CX, $32
	JLT  f16by8

f16by32:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         f16by32

f16by8:
	CMPQ        CX, $8
	JLT         f16reduce
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (DI), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX
	JMP         f16by8

f16reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM8(Y0, X0, X1)
	VXORPS X2, X2, X2

f16by1:
	TESTQ       CX, CX
	JEQ         f16done
	MOVWLZX     (SI), AX
	MOVWLZX     (DI), BX
	VMOVD       AX, X3
	VMOVD       BX, X4
	VCVTPH2PS   X3, X3
	VCVTPH2PS   X4, X4
	VFMADD231SS X4, X3, X2
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JMP         f16by1

f16done:
	VADDSS     X2, X0, X0
	VZEROUPPER
	MOVSS      X0, ret+24(FP)
	RET

// func dotBF16AVX2(x, y *uint16, n int) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ CX, $32
	JLT  bf16by8

bf16by32:
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   16(SI), Y5
	VPMOVZXWD   32(SI), Y6
	VPMOVZXWD   48(SI), Y7
	VPMOVZXWD   (DI), Y8
	VPMOVZXWD   16(DI), Y9
	VPMOVZXWD   32(DI), Y10
	VPMOVZXWD   48(DI), Y11
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y6, Y6
	VPSLLD      $16, Y7, Y7
	VPSLLD      $16, Y8, Y8
	VPSLLD      $16, Y9, Y9
	VPSLLD      $16, Y10, Y10
	VPSLLD      $16, Y11, Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JGE         bf16by32

bf16by8:
	CMPQ        CX, $8
	JLT         bf16reduce
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   (DI), Y8
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y8, Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX
	JMP         bf16by8

bf16reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM8(Y0, X0, X1)
	VXORPS X2, X2, X2

bf16by1:
	TESTQ       CX, CX
	JEQ         bf16done
	MOVWLZX     (SI), AX
	MOVWLZX     (DI), BX
	SHLL        $16, AX
	SHLL        $16, BX
	VMOVD       AX, X3
	VMOVD       BX, X4
	VFMADD231SS X4, X3, X2
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JMP         bf16by1

bf16done:
	VADDSS     X2, X0, X0
	VZEROUPPER
	MOVSS      X0, ret+24(FP)
	RET

// func fma32AVX2(x, y, z float32) float32
TEXT ·fma32AVX2(SB), NOSPLIT, $0-20
	VMOVSS      x+0(FP), X0
	VMOVSS      y+4(FP), X1
	VMOVSS      z+8(FP), X2
	VFMADD231SS X1, X0, X2
	VMOVSS      X2, ret+16(FP)
	RET

// Register-tiled kernels for MUL_MAT with several activation rows.

// func gemmF32x4x3AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
//
// c[r + col*ldc] += sum over k of a[r*lda + i] * b[col*ldb + i] for the
// 4x3 tile r < 4, col < 3; k is a multiple of 8. Twelve 8-lane FMA
// accumulators, each loaded a row and a column once per 8 elements.
TEXT ·gemmF32x4x3AVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R10
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R11
	SHLQ $2, R8
	SHLQ $2, R10
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
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
	SHRQ $3, CX
	JEQ  g43store

g43loop:
	VMOVUPS     (DI), Y12
	VMOVUPS     (DI)(R10*1), Y13
	VMOVUPS     (DI)(R10*2), Y14
	VMOVUPS     (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VMOVUPS     (SI)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VMOVUPS     (SI)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VMOVUPS     (SI)(R9*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNE         g43loop

g43store:
	// Column 0: rows in Y0, Y3, Y6, Y9.
	VHADDPS      Y3, Y0, Y0
	VHADDPS      Y9, Y6, Y6
	VHADDPS      Y6, Y0, Y0
	VEXTRACTF128 $1, Y0, X12
	VADDPS       X12, X0, X0
	VADDPS       (DX), X0, X0
	VMOVUPS      X0, (DX)
	// Column 1: Y1, Y4, Y7, Y10.
	VHADDPS      Y4, Y1, Y1
	VHADDPS      Y10, Y7, Y7
	VHADDPS      Y7, Y1, Y1
	VEXTRACTF128 $1, Y1, X12
	VADDPS       X12, X1, X1
	VADDPS       (DX)(R11*1), X1, X1
	VMOVUPS      X1, (DX)(R11*1)
	// Column 2: Y2, Y5, Y8, Y11.
	VHADDPS      Y5, Y2, Y2
	VHADDPS      Y11, Y8, Y8
	VHADDPS      Y8, Y2, Y2
	VEXTRACTF128 $1, Y2, X12
	VADDPS       X12, X2, X2
	VADDPS       (DX)(R11*2), X2, X2
	VMOVUPS      X2, (DX)(R11*2)
	VZEROUPPER
	RET

// func cvtF16F32AVX2(x *uint16, y *float32, n int)
TEXT ·cvtF16F32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX

h2fby8:
	CMPQ      CX, $8
	JLT       h2fby1
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       h2fby8

h2fby1:
	TESTQ     CX, CX
	JEQ       h2fdone
	MOVWLZX   (SI), AX
	VMOVD     AX, X0
	VCVTPH2PS X0, X0
	VMOVSS    X0, (DI)
	ADDQ      $2, SI
	ADDQ      $4, DI
	DECQ      CX
	JMP       h2fby1

h2fdone:
	VZEROUPPER
	RET

// func cvtBF16F32AVX2(x *uint16, y *float32, n int)
TEXT ·cvtBF16F32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX

b2fby8:
	CMPQ      CX, $8
	JLT       b2fby1
	VPMOVZXWD (SI), Y0
	VPSLLD    $16, Y0, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       b2fby8

b2fby1:
	TESTQ     CX, CX
	JEQ       b2fdone
	MOVWLZX   (SI), AX
	SHLL      $16, AX
	MOVL      AX, (DI)
	ADDQ      $2, SI
	ADDQ      $4, DI
	DECQ      CX
	JMP       b2fby1

b2fdone:
	VZEROUPPER
	RET
