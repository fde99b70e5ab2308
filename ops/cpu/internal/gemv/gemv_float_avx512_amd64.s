//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The avx512 tier's four-row kernels of the float formats: the AVX2
// kernels (gemv_float_amd64.s) with each row's two 8-lane accumulators as
// the halves of one zmm, so each equals its AVX2 kernel, and twin, bit for
// bit. f16 and bf16 take two runs of 16 (one 64-byte line of each row) a
// step, and a last odd run on its own, prefetching ahead in the rows they
// stream (GVZ_PF4) rather than into the next four; f32 takes a line of
// each row a step and leaves the streaming to the hardware prefetchers,
// or in f32x4AVX512PF asks for the next four rows as the AVX2 kernels do.

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

// GVZ_F16PAIR and GVZ_F16ODD are GVZ_PAIRS' steps of f16 rows: two
// runs, and a last odd one; GVZ_BF16PAIR and GVZ_BF16ODD of bfloat16
// rows.
#define GVZ_F16PAIR GVZ_F16RUN(0); GVZ_F16RUN(32)
#define GVZ_F16ODD GVZ_F16RUN(0)
#define GVZ_BF16PAIR GVZ_BF16RUN(0); GVZ_BF16RUN(32)
#define GVZ_BF16ODD GVZ_BF16RUN(0)

// func f16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f16x4AVX2 in zmm (twin: F16Twin).
TEXT ·f16x4AVX512(SB), NOSPLIT, $0-40
	GVZ_PAIRS(GVZ_PF4, GVZ_F16PAIR, GVZ_F16ODD, gvzf16loop, gvzf16odd, gvzf16done)

// func bf16x4AVX512(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// bf16x4AVX2 in zmm (twin: BF16Twin).
TEXT ·bf16x4AVX512(SB), NOSPLIT, $0-40
	GVZ_PAIRS(GVZ_PF4, GVZ_BF16PAIR, GVZ_BF16ODD, gvzbf16loop, gvzbf16odd, gvzbf16done)

// GVZ_F32(PF, loop, done) is the body of the f32 kernels: a line of each
// row a step, PF (a prefetch macro, or GVZ_NOPF) first in each.
#define GVZ_F32(PF, loop, done) \
	GVZ_ARGS; \
	GVZ_ZERO4; \
	TESTQ CX, CX; \
	JEQ   done; \
loop: \
	PF; \
	VMOVUPS     (DI), Z8; \
	VFMADD231PS (SI), Z8, Z0; \
	VFMADD231PS (SI)(R8*1), Z8, Z1; \
	VFMADD231PS (SI)(R8*2), Z8, Z2; \
	VFMADD231PS (SI)(R9*1), Z8, Z3; \
	ADDQ        $64, SI; \
	ADDQ        $64, DI; \
	DECQ        CX; \
	JNE         loop; \
done: \
	GVZ_STORE; \
	VZEROUPPER; \
	RET

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
	GVZ_F32(GVZ_NOPF, gvzf32loop, gvzf32done)

// func f32x4AVX512PF(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// f32x4AVX512 asking, once a line, for the same line of each of the next
// four rows into L2 (GV2_PFN), as the AVX2 kernels do; equal to it bit
// for bit (twin: F32Twin). The avx512 and vnni tiers take it where
// cpu.mulmat.gemv_prefetch is 1: on a Zen 4 it was 1.22x f32x4AVX512's
// speed on a 64 MiB matrix and 1.30-1.37x on 16-32 MiB ones streamed
// from memory, 6-7% slower on a matrix held in L2 or L3 (1 and 8 MiB).
TEXT ·f32x4AVX512PF(SB), NOSPLIT, $0-40
	GVZ_F32(GV2_PFN, gvzf32pfloop, gvzf32pfdone)
