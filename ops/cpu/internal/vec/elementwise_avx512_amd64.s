//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 (F) kernels of the elementwise ops: the AVX2 kernels of
// elementwise_amd64.s in zmm registers, 16 lanes per step, the same
// float32 operations in the same order lane by lane, and a masked step
// (K1) for the last n%16 elements, whose masked-off lanes are neither
// read nor written. So each equals its AVX2 kernel's twin bit for bit
// over the whole row. n >= 0.

#include "exp_avx512_amd64.h"

C1(g5A, 0x3d372713)   // float32(0.044715)
C1(g5K, 0xbfcc422a)   // float32(-2*sqrt(2/pi))

// BINARY512(op, loop64, loop16, tail, done) is the body of a binary
// kernel: out = x op y over n elements, 64 per iteration, then 16, then
// a masked step.
#define BINARY512(op, loop64, loop16, tail, done) \
	MOVQ    out+0(FP), DI; \
	MOVQ    x+8(FP), SI; \
	MOVQ    y+16(FP), R8; \
	MOVQ    n+24(FP), CX; \
loop64: \
	CMPQ    CX, $64; \
	JL      loop16; \
	VMOVUPS (SI), Z0; \
	VMOVUPS 64(SI), Z1; \
	VMOVUPS 128(SI), Z2; \
	VMOVUPS 192(SI), Z3; \
	op      (R8), Z0, Z0; \
	op      64(R8), Z1, Z1; \
	op      128(R8), Z2, Z2; \
	op      192(R8), Z3, Z3; \
	VMOVUPS Z0, (DI); \
	VMOVUPS Z1, 64(DI); \
	VMOVUPS Z2, 128(DI); \
	VMOVUPS Z3, 192(DI); \
	ADDQ    $256, SI; \
	ADDQ    $256, R8; \
	ADDQ    $256, DI; \
	SUBQ    $64, CX; \
	JMP     loop64; \
loop16: \
	CMPQ    CX, $16; \
	JL      tail; \
	VMOVUPS (SI), Z0; \
	op      (R8), Z0, Z0; \
	VMOVUPS Z0, (DI); \
	ADDQ    $64, SI; \
	ADDQ    $64, R8; \
	ADDQ    $64, DI; \
	SUBQ    $16, CX; \
	JMP     loop16; \
tail: \
	TESTQ   CX, CX; \
	JEQ     done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z0; \
	VMOVUPS.Z (R8), K1, Z1; \
	op      Z1, Z0, Z0; \
	VMOVUPS Z0, K1, (DI); \
done: \
	VZEROUPPER; \
	RET

// func addAVX512(out, x, y *float32, n int)
// out = x + y.
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	BINARY512(VADDPS, add5_loop64, add5_loop16, add5_tail, add5_done)

// func mulAVX512(out, x, y *float32, n int)
// out = x * y.
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	BINARY512(VMULPS, mul5_loop64, mul5_loop16, mul5_tail, mul5_done)

// The exp kernels run 32 elements per iteration in two independent
// chains (registers Z0-Z5 and Z10-Z15), then 16, then a masked step.

// SILU16(X, O, T1, T2, T3, T4): O = X / (1 + exp(0 - X)) (Z7 = 0).
#define SILU16(X, O, T1, T2, T3, T4) \
	VSUBPS X, Z7, O; \
	EXP16(O, T1, T2, T3, T4); \
	VADDPS Z25, O, O; \
	VDIVPS O, X, O

// func siluAVX512(out, x *float32, n int)
// out = x / (1 + exp(0 - x)) (twin: SiLUTwin).
TEXT ·siluAVX512(SB), NOSPLIT, $0-24
	MOVQ   out+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	EXP16_CONSTS
	VPXORD Z7, Z7, Z7

silu5_loop32:
	CMPQ    CX, $32
	JL      silu5_loop16
	VMOVUPS (SI), Z5
	VMOVUPS 64(SI), Z15
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4)
	SILU16(Z15, Z10, Z11, Z12, Z13, Z14)
	VMOVUPS Z0, (DI)
	VMOVUPS Z10, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     silu5_loop32

silu5_loop16:
	CMPQ    CX, $16
	JL      silu5_tail
	VMOVUPS (SI), Z5
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX

silu5_tail:
	TESTQ     CX, CX
	JEQ       silu5_done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z5
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS   Z0, K1, (DI)

silu5_done:
	VZEROUPPER
	RET

// SWIGLU16(store, loop32, loop16, tail, done) is swigluAVX512's loop over
// DI, SI, R8, CX (out, gate, v, n), each full 16-lane result written by
// store (VMOVUPS, or VMOVNTPS with out
// 64-byte aligned; the masked tail always VMOVUPS); it falls through to
// done, the kernel's own label, when finished.
#define SWIGLU16(store, loop32, loop16, tail, done) \
	EXP16_CONSTS; \
	VPXORD Z7, Z7, Z7; \
loop32: \
	CMPQ    CX, $32; \
	JL      loop16; \
	VMOVUPS (SI), Z5; \
	VMOVUPS 64(SI), Z15; \
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4); \
	SILU16(Z15, Z10, Z11, Z12, Z13, Z14); \
	VMULPS  (R8), Z0, Z0; \
	VMULPS  64(R8), Z10, Z10; \
	store   Z0, (DI); \
	store   Z10, 64(DI); \
	ADDQ    $128, SI; \
	ADDQ    $128, R8; \
	ADDQ    $128, DI; \
	SUBQ    $32, CX; \
	JMP     loop32; \
loop16: \
	CMPQ    CX, $16; \
	JL      tail; \
	VMOVUPS (SI), Z5; \
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4); \
	VMULPS  (R8), Z0, Z0; \
	store   Z0, (DI); \
	ADDQ    $64, SI; \
	ADDQ    $64, R8; \
	ADDQ    $64, DI; \
	SUBQ    $16, CX; \
tail: \
	TESTQ     CX, CX; \
	JEQ       done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z5; \
	VMOVUPS.Z (R8), K1, Z6; \
	SILU16(Z5, Z0, Z1, Z2, Z3, Z4); \
	VMULPS    Z6, Z0, Z0; \
	VMOVUPS   Z0, K1, (DI)

// func swigluAVX512(out, gate, v *float32, n int)
// out = (gate / (1 + exp(0 - gate))) * v (twin: SwiGLUTwin).
TEXT ·swigluAVX512(SB), NOSPLIT, $0-32
	MOVQ    out+0(FP), DI
	MOVQ    gate+8(FP), SI
	MOVQ    v+16(FP), R8
	MOVQ    n+24(FP), CX
	SWIGLU16(VMOVUPS, swiglu5_loop32, swiglu5_loop16, swiglu5_tail, swiglu5_done)
swiglu5_done:
	VZEROUPPER
	RET

// func swigluStreamAVX512(out, gate, v *float32, n int)
// swigluAVX512 with non-temporal stores (out 64-byte aligned), then
// SFENCE.
TEXT ·swigluStreamAVX512(SB), NOSPLIT, $0-32
	MOVQ    out+0(FP), DI
	MOVQ    gate+8(FP), SI
	MOVQ    v+16(FP), R8
	MOVQ    n+24(FP), CX
	SWIGLU16(VMOVNTPS, swiglu5s_loop32, swiglu5s_loop16, swiglu5s_tail, swiglu5s_done)
swiglu5s_done:
	SFENCE
	VZEROUPPER
	RET

// GELU16(X, O, T1, T2, T3, T4): O = X / (1 + exp(X*(X*X*A + 1)*K))
// (Z8 = A, Z9 = K).
#define GELU16(X, O, T1, T2, T3, T4) \
	VMULPS      X, X, O; \
	VFMADD213PS Z25, Z8, O; \
	VMULPS      X, O, O; \
	VMULPS      Z9, O, O; \
	EXP16(O, T1, T2, T3, T4); \
	VADDPS      Z25, O, O; \
	VDIVPS      O, X, O

// func geluAVX512(out, x *float32, n int)
// GELU's tanh form as geluAVX2 (twin: GELUTwin).
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	EXP16_CONSTS
	VBROADCASTSS g5A<>(SB), Z8
	VBROADCASTSS g5K<>(SB), Z9

gelu5_loop32:
	CMPQ    CX, $32
	JL      gelu5_loop16
	VMOVUPS (SI), Z5
	VMOVUPS 64(SI), Z15
	GELU16(Z5, Z0, Z1, Z2, Z3, Z4)
	GELU16(Z15, Z10, Z11, Z12, Z13, Z14)
	VMOVUPS Z0, (DI)
	VMOVUPS Z10, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     gelu5_loop32

gelu5_loop16:
	CMPQ    CX, $16
	JL      gelu5_tail
	VMOVUPS (SI), Z5
	GELU16(Z5, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX

gelu5_tail:
	TESTQ     CX, CX
	JEQ       gelu5_done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z5
	GELU16(Z5, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS   Z0, K1, (DI)

gelu5_done:
	VZEROUPPER
	RET

// OAI16(X, Y, O, T1, T2, T3, T4): O = x / (1 + exp(-alpha*x)) * (y + 1)
// with x = min(X, limit) and y = max(min(Y, limit), -limit) (Z8 =
// -alpha, Z9 = limit, Z6 = -limit); g and v are the second sources of
// VMINPS/VMAXPS, so a NaN passes through. X and Y are clobbered.
#define OAI16(X, Y, O, T1, T2, T3, T4) \
	VMINPS X, Z9, X; \
	VMINPS Y, Z9, Y; \
	VMAXPS Y, Z6, Y; \
	VMULPS X, Z8, O; \
	EXP16(O, T1, T2, T3, T4); \
	VADDPS Z25, O, O; \
	VDIVPS O, X, O; \
	VADDPS Z25, Y, Y; \
	VMULPS Y, O, O

// func swigluOAIAVX512(out, gate, v *float32, n int, alpha, limit float32)
// gpt-oss's clamped SwiGLU as swigluOAIAVX2 (twin: SwiGLUOAITwin).
TEXT ·swigluOAIAVX512(SB), NOSPLIT, $0-40
	MOVQ         out+0(FP), DI
	MOVQ         gate+8(FP), SI
	MOVQ         v+16(FP), R8
	MOVQ         n+24(FP), CX
	EXP16_CONSTS
	VBROADCASTSS alpha+32(FP), Z8
	VBROADCASTSS limit+36(FP), Z9
	VPXORD       Z7, Z7, Z7
	VSUBPS       Z8, Z7, Z8 // -alpha
	VSUBPS       Z9, Z7, Z6 // -limit

oai5_loop32:
	CMPQ    CX, $32
	JL      oai5_loop16
	VMOVUPS (SI), Z5
	VMOVUPS (R8), Z29
	VMOVUPS 64(SI), Z15
	VMOVUPS 64(R8), Z30
	OAI16(Z5, Z29, Z0, Z1, Z2, Z3, Z4)
	OAI16(Z15, Z30, Z10, Z11, Z12, Z13, Z14)
	VMOVUPS Z0, (DI)
	VMOVUPS Z10, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, R8
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     oai5_loop32

oai5_loop16:
	CMPQ    CX, $16
	JL      oai5_tail
	VMOVUPS (SI), Z5
	VMOVUPS (R8), Z29
	OAI16(Z5, Z29, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, R8
	ADDQ    $64, DI
	SUBQ    $16, CX

oai5_tail:
	TESTQ     CX, CX
	JEQ       oai5_done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z5
	VMOVUPS.Z (R8), K1, Z29
	OAI16(Z5, Z29, Z0, Z1, Z2, Z3, Z4)
	VMOVUPS   Z0, K1, (DI)

oai5_done:
	VZEROUPPER
	RET
