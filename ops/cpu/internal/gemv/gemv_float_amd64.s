//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// Four-row kernels of the float formats (f16, float32, bfloat16) for
// MUL_MAT with one to three activation rows (see gemv_amd64.go): four
// weight rows against one activation row, each output equal bit for bit
// to its twin (named at each function). f16 follows internal/dot's
// four-row kernels.

// func f16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// With next-step prefetch (twin: F16Twin): one line per row of the next four rows per
// run of 16 elements (32 bytes), so every line is asked for twice.
TEXT ·f16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2f16done

gv2f16loop:
	GV2_PFN
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   (SI), Y10
	VCVTPH2PS   16(SI), Y11
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y11, Y1
	VCVTPH2PS   (SI)(R8*1), Y12
	VCVTPH2PS   16(SI)(R8*1), Y13
	VFMADD231PS Y8, Y12, Y2
	VFMADD231PS Y9, Y13, Y3
	VCVTPH2PS   (SI)(R8*2), Y10
	VCVTPH2PS   16(SI)(R8*2), Y11
	VFMADD231PS Y8, Y10, Y4
	VFMADD231PS Y9, Y11, Y5
	VCVTPH2PS   (SI)(R9*1), Y12
	VCVTPH2PS   16(SI)(R9*1), Y13
	VFMADD231PS Y8, Y12, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNE         gv2f16loop

gv2f16done:
	VADDPS Y1, Y0, Y0
	GV2_HSUM8(Y0, X0, X1)
	VMOVSS X0, (DX)
	VADDPS Y3, Y2, Y2
	GV2_HSUM8(Y2, X2, X3)
	VMOVSS X2, 4(DX)
	VADDPS Y5, Y4, Y4
	GV2_HSUM8(Y4, X4, X5)
	VMOVSS X4, 8(DX)
	VADDPS Y7, Y6, Y6
	GV2_HSUM8(Y6, X6, X7)
	VMOVSS X6, 12(DX)
	VZEROUPPER
	RET

// GV2_BF16ROW(LO, HI, A0, A1): the run of 16 bfloat16 values at LO (0-7)
// and HI (8-15) widened (zero-extended and shifted into the high half:
// exact) and multiplied into A0 and A1 with the activation run in Y8, Y9.
#define GV2_BF16ROW(LO, HI, A0, A1) \
	VPMOVZXWD   LO, Y10; \
	VPSLLD      $16, Y10, Y10; \
	VPMOVZXWD   HI, Y11; \
	VPSLLD      $16, Y11, Y11; \
	VFMADD231PS Y8, Y10, A0; \
	VFMADD231PS Y9, Y11, A1

// func f32x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 for float32 rows (runs of 16 elements, 64 bytes; twin:
// F32Twin). MUL_MAT used the dot product before.
TEXT ·f32x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2f32done

gv2f32loop:
	GV2_PFN
	VMOVUPS     (DI), Y8
	VMOVUPS     32(DI), Y9
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS 32(SI), Y9, Y1
	VFMADD231PS (SI)(R8*1), Y8, Y2
	VFMADD231PS 32(SI)(R8*1), Y9, Y3
	VFMADD231PS (SI)(R8*2), Y8, Y4
	VFMADD231PS 32(SI)(R8*2), Y9, Y5
	VFMADD231PS (SI)(R9*1), Y8, Y6
	VFMADD231PS 32(SI)(R9*1), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         gv2f32loop

gv2f32done:
	GV2_FLOAT_STORE
	VZEROUPPER
	RET

// func bf16x4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 for bfloat16 rows (twin: BF16Twin). MUL_MAT used the
// dot product before.
TEXT ·bf16x4AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	MOVQ   y+16(FP), DI
	MOVQ   nb+24(FP), CX
	MOVQ   out+32(FP), DX
	LEAQ   (R8)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JEQ    gv2bf16done

gv2bf16loop:
	GV2_PFN
	VPMOVZXWD (DI), Y8
	VPSLLD    $16, Y8, Y8
	VPMOVZXWD 16(DI), Y9
	VPSLLD    $16, Y9, Y9
	GV2_BF16ROW((SI), 16(SI), Y0, Y1)
	GV2_BF16ROW((SI)(R8*1), 16(SI)(R8*1), Y2, Y3)
	GV2_BF16ROW((SI)(R8*2), 16(SI)(R8*2), Y4, Y5)
	GV2_BF16ROW((SI)(R9*1), 16(SI)(R9*1), Y6, Y7)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNE       gv2bf16loop

gv2bf16done:
	GV2_FLOAT_STORE
	VZEROUPPER
	RET

