//go:build amd64 && !purego

#include "textflag.h"

// AVX2 row kernels of the elementwise ops (package cpu's op_binary.go,
// op_unary.go, op_swiglu.go). Each takes n, a multiple of 8; the Go
// wrappers in elementwise_amd64.go finish the tail with the generic kernels
// and twins in vec.go and twin.go, which perform the same float32
// operations in the same order. The streaming kernels (names ending in
// Stream) are their plain kernels with non-temporal stores.

#include "exp_amd64.h"

C8(geluA, 0x3d372713)   // float32(0.044715)
C8(geluK, 0xbfcc422a)   // float32(-2*sqrt(2/pi))

// BINARY32(op, store, loop32, loop8, done) is the body of a binary
// kernel: out = x op y over n elements (a multiple of 8), 32 per
// iteration, then 8 at a time, each result written by store (VMOVUPS, or
// VMOVNTPS for the streaming kernels, whose out is 32-byte aligned); it
// jumps to done, the kernel's own label, when finished.
#define BINARY32(op, store, loop32, loop8, done) \
	MOVQ    out+0(FP), DI; \
	MOVQ    x+8(FP), SI; \
	MOVQ    y+16(FP), R8; \
	MOVQ    n+24(FP), CX; \
loop32: \
	CMPQ    CX, $32; \
	JL      loop8; \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	VMOVUPS 64(SI), Y2; \
	VMOVUPS 96(SI), Y3; \
	op      (R8), Y0, Y0; \
	op      32(R8), Y1, Y1; \
	op      64(R8), Y2, Y2; \
	op      96(R8), Y3, Y3; \
	store   Y0, (DI); \
	store   Y1, 32(DI); \
	store   Y2, 64(DI); \
	store   Y3, 96(DI); \
	ADDQ    $128, SI; \
	ADDQ    $128, R8; \
	ADDQ    $128, DI; \
	SUBQ    $32, CX; \
	JMP     loop32; \
loop8: \
	CMPQ    CX, $8; \
	JL      done; \
	VMOVUPS (SI), Y0; \
	op      (R8), Y0, Y0; \
	store   Y0, (DI); \
	ADDQ    $32, SI; \
	ADDQ    $32, R8; \
	ADDQ    $32, DI; \
	SUBQ    $8, CX; \
	JMP     loop8

// func addAVX2(out, x, y *float32, n int)
// out = x + y.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	BINARY32(VADDPS, VMOVUPS, add_loop32, add_loop8, add_done)
add_done:
	VZEROUPPER
	RET

// func mulAVX2(out, x, y *float32, n int)
// out = x * y.
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	BINARY32(VMULPS, VMOVUPS, mul_loop32, mul_loop8, mul_done)
mul_done:
	VZEROUPPER
	RET

// func addStreamAVX2(out, x, y *float32, n int)
// addAVX2 with non-temporal stores (out 32-byte aligned), then SFENCE so
// that the results are visible before the caller reports the row done.
TEXT ·addStreamAVX2(SB), NOSPLIT, $0-32
	BINARY32(VADDPS, VMOVNTPS, adds_loop32, adds_loop8, adds_done)
adds_done:
	SFENCE
	VZEROUPPER
	RET

// func mulStreamAVX2(out, x, y *float32, n int)
// mulAVX2 with non-temporal stores, as addStreamAVX2.
TEXT ·mulStreamAVX2(SB), NOSPLIT, $0-32
	BINARY32(VMULPS, VMOVNTPS, muls_loop32, muls_loop8, muls_done)
muls_done:
	SFENCE
	VZEROUPPER
	RET

// func siluAVX2(out, x *float32, n int)
// out = x / (1 + exp(0 - x)), exp as EXP8 (twin: siluTwin).
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ    out+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS explo<>(SB), Y8
	VMOVUPS exphi<>(SB), Y9
	VMOVUPS expone<>(SB), Y6
	VXORPS  Y7, Y7, Y7

silu_loop:
	CMPQ    CX, $8
	JL      silu_done
	VMOVUPS (SI), Y5
	VSUBPS  Y5, Y7, Y0
	EXP8
	VADDPS  Y6, Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     silu_loop

silu_done:
	VZEROUPPER
	RET

// SWIGLU8(store, loop, done) is swigluAVX2's loop over DI, SI, R8, CX
// (out, gate, v, n), each result written by store (VMOVUPS, or VMOVNTPS
// with out 32-byte aligned); it jumps to done, the kernel's own label,
// when finished.
#define SWIGLU8(store, loop, done) \
	VMOVUPS explo<>(SB), Y8; \
	VMOVUPS exphi<>(SB), Y9; \
	VMOVUPS expone<>(SB), Y6; \
	VXORPS  Y7, Y7, Y7; \
loop: \
	CMPQ    CX, $8; \
	JL      done; \
	VMOVUPS (SI), Y5; \
	VSUBPS  Y5, Y7, Y0; \
	EXP8; \
	VADDPS  Y6, Y0, Y0; \
	VDIVPS  Y0, Y5, Y0; \
	VMULPS  (R8), Y0, Y0; \
	store   Y0, (DI); \
	ADDQ    $32, SI; \
	ADDQ    $32, R8; \
	ADDQ    $32, DI; \
	SUBQ    $8, CX; \
	JMP     loop

// func swigluAVX2(out, gate, v *float32, n int)
// out = (gate / (1 + exp(0 - gate))) * v (twin: swigluTwin).
TEXT ·swigluAVX2(SB), NOSPLIT, $0-32
	MOVQ    out+0(FP), DI
	MOVQ    gate+8(FP), SI
	MOVQ    v+16(FP), R8
	MOVQ    n+24(FP), CX
	SWIGLU8(VMOVUPS, swiglu_loop, swiglu_done)
swiglu_done:
	VZEROUPPER
	RET

// func swigluStreamAVX2(out, gate, v *float32, n int)
// swigluAVX2 with non-temporal stores (out 32-byte aligned), then SFENCE.
TEXT ·swigluStreamAVX2(SB), NOSPLIT, $0-32
	MOVQ    out+0(FP), DI
	MOVQ    gate+8(FP), SI
	MOVQ    v+16(FP), R8
	MOVQ    n+24(FP), CX
	SWIGLU8(VMOVNTPS, swiglus_loop, swiglus_done)
swiglus_done:
	SFENCE
	VZEROUPPER
	RET

// func geluAVX2(out, x *float32, n int)
// out = x / (1 + exp(x*(x*x*A + 1)*K)), A = 0.044715, K =
// -2*sqrt(2/pi): GELU's tanh form, 0.5*x*(1 + tanh(u)) = x*sigmoid(2u)
// (twin: geluTwin).
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ    out+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPS explo<>(SB), Y8
	VMOVUPS exphi<>(SB), Y9
	VMOVUPS expone<>(SB), Y6
	VMOVUPS geluA<>(SB), Y10
	VMOVUPS geluK<>(SB), Y11

gelu_loop:
	CMPQ        CX, $8
	JL          gelu_done
	VMOVUPS     (SI), Y5
	VMULPS      Y5, Y5, Y0
	VFMADD213PS Y6, Y10, Y0
	VMULPS      Y5, Y0, Y0
	VMULPS      Y11, Y0, Y0
	EXP8
	VADDPS      Y6, Y0, Y0
	VDIVPS      Y0, Y5, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         gelu_loop

gelu_done:
	VZEROUPPER
	RET

// func swigluOAIAVX2(out, g, u *float32, n int, alpha, limit float32)
// gpt-oss's clamped SwiGLU: x = min(g, limit), y = max(min(v, limit),
// -limit), out = x / (1 + exp(-alpha * x)) * (y + 1), exp as EXP8; g and
// v are the second sources of VMINPS/VMAXPS, so a NaN passes through
// (twin: SwiGLUOAITwin).
TEXT ·swigluOAIAVX2(SB), NOSPLIT, $0-40
	MOVQ         out+0(FP), DI
	MOVQ         gate+8(FP), SI
	MOVQ         v+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS alpha+32(FP), Y10
	VBROADCASTSS limit+36(FP), Y11
	VMOVUPS      explo<>(SB), Y8
	VMOVUPS      exphi<>(SB), Y9
	VMOVUPS      expone<>(SB), Y6
	VXORPS       Y7, Y7, Y7
	VSUBPS       Y10, Y7, Y10 // -alpha
	VSUBPS       Y11, Y7, Y12 // -limit

oai_loop:
	CMPQ    CX, $8
	JL      oai_done
	VMOVUPS (SI), Y5
	VMINPS  Y5, Y11, Y5  // x = min(g, limit)
	VMOVUPS (R8), Y13
	VMINPS  Y13, Y11, Y13
	VMAXPS  Y13, Y12, Y13 // y = max(min(v, limit), -limit)
	VMULPS  Y5, Y10, Y0   // -alpha * x
	EXP8
	VADDPS  Y6, Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VADDPS  Y6, Y13, Y13  // y + 1
	VMULPS  Y13, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     oai_loop

oai_done:
	VZEROUPPER
	RET
