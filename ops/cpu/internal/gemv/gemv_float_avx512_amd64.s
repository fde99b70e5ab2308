//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The avx512 tier's four-row kernels of the float formats: the AVX2
// kernels (gemv_float_amd64.s) with each row's two 8-lane accumulators as
// the halves of one zmm, so each equals its AVX2 kernel, and twin, bit for
// bit. f16 and bf16 take two runs of 16 (one 64-byte line of each row) a
// step, and a last odd run on its own, prefetching ahead in the rows they
// stream (GVZ_PF4) rather than into the next four; f32 takes a line of
// each row a step and leaves the streaming to the hardware prefetchers.

// GVZ_F16RUN(off) adds the run of 16 f16 elements at off in each row
// times the activation's into Z0-Z3.
#define GVZ_F16RUN(off) \
	VCVTPH2PS   off(DI), Z8; \
	VCVTPH2PS   off(SI), Z4; \
	VCVTPH2PS   off(SI)(R8*1), Z5; \
	VCVTPH2PS   off(SI)(R8*2), Z6; \
	VCVTPH2PS   off(SI)(R9*1), Z7; \
	VFMADD231PS Z8, Z4, Z0; \
	VFMADD231PS Z8, Z5, Z1; \
	VFMADD231PS Z8, Z6, Z2; \
	VFMADD231PS Z8, Z7, Z3

// GVZ_BF16W(m, z) widens the 16 bfloat16 values at m into z (exact).
#define GVZ_BF16W(m, z) \
	VPMOVZXWD m, z; \
	VPSLLD    $16, z, z

// GVZ_BF16RUN(off) is GVZ_F16RUN for bfloat16 elements.
#define GVZ_BF16RUN(off) \
	GVZ_BF16W(off(DI), Z8); \
	GVZ_BF16W(off(SI), Z4); \
	GVZ_BF16W(off(SI)(R8*1), Z5); \
	GVZ_BF16W(off(SI)(R8*2), Z6); \
	GVZ_BF16W(off(SI)(R9*1), Z7); \
	VFMADD231PS Z8, Z4, Z0; \
	VFMADD231PS Z8, Z5, Z1; \
	VFMADD231PS Z8, Z6, Z2; \
	VFMADD231PS Z8, Z7, Z3

// GVZ_HALVES(RUN, loop, odd, done) runs RUN over CX runs of 32 bytes:
// two a step with one prefetch a row, then the last odd one.
#define GVZ_HALVES(RUN, loop, odd, done) \
	GVZ_ARGS; \
	GVZ_ZERO4; \
	MOVQ  CX, BX; \
	SHRQ  $1, CX; \
	JEQ   odd; \
loop: \
	GVZ_PF4; \
	RUN(0); \
	RUN(32); \
	ADDQ  $64, SI; \
	ADDQ  $64, DI; \
	DECQ  CX; \
	JNE   loop; \
odd: \
	TESTQ $1, BX; \
	JEQ   done; \
	RUN(0); \
done: \
	GVZ_STORE; \
	VZEROUPPER; \
	RET

// func f16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 in zmm (twin: F16Twin).
TEXT ·f16x4AVX512(SB), NOSPLIT, $0-40
	GVZ_HALVES(GVZ_F16RUN, gvzf16loop, gvzf16odd, gvzf16done)

// func bf16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// bf16x4AVX2 in zmm (twin: BF16Twin).
TEXT ·bf16x4AVX512(SB), NOSPLIT, $0-40
	GVZ_HALVES(GVZ_BF16RUN, gvzbf16loop, gvzbf16odd, gvzbf16done)

// func f32x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f32x4AVX2 in zmm (twin: F32Twin): a run of 16 is one line of each row.
// No software prefetch: with GVZ_PF4 it was slower wherever the weights
// come partly or wholly from DRAM. On a Zen 5, MUL_MAT m=4096 n=1
// alternated call by call in one process, two threads, medians of 150
// calls, with against without: 32 MiB 336-343 against 297-302 us, 64 MiB
// 1025-1046 against 967-1000, 235 MB 4409-4449 against 4338-4384 (one
// thread: 64 MiB 1502 against 1340); within 2% either way in L2 and L3
// (8 and 16 MiB).
TEXT ·f32x4AVX512(SB), NOSPLIT, $0-40
	GVZ_ARGS
	GVZ_ZERO4
	TESTQ CX, CX
	JEQ   gvzf32done

gvzf32loop:
	VMOVUPS     (DI), Z8
	VFMADD231PS (SI), Z8, Z0
	VFMADD231PS (SI)(R8*1), Z8, Z1
	VFMADD231PS (SI)(R8*2), Z8, Z2
	VFMADD231PS (SI)(R9*1), Z8, Z3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         gvzf32loop

gvzf32done:
	GVZ_STORE
	VZEROUPPER
	RET
