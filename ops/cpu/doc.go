// Package cpu is kernbench's CPU backend: every op in Go, multi-threaded
// over rows by a long-lived worker pool, with the hot kernels in SIMD
// tiers chosen at run time.
//
// Kernels register themselves per op (see register); the backend's
// Supports and Compute dispatch through that table. Quantized matrix
// products follow ggml's scheme so their error profile matches ggml's: the
// activations are quantized to the weight type's VecDotType (Q8_0, Q8_1 or
// Q8_K) and dotted block by block with integer sums.
//
// # Tiers
//
// A Tier is a level of implementation: "generic" (pure Go, complete) and,
// on amd64, "avx2" (AVX2+FMA+F16C assembly). "avx512" and "vnni" are known
// names whose kernels are not in this build; Tiers reports them unsupported
// with the reason (the CPU features cpuid finds missing, and the missing
// kernels). The tier is detected once per process; a backend uses the
// fastest supported one unless Options.Tier or $KERNBENCH_CPU names
// another (a name that is unknown or unsupported is an error, never a
// quiet fallback). Each tier's kernels form a kernelSet (kernels.go): dot
// products per weight type, activation converters, and register-tiled
// matrix kernels, a faster tier overriding the generic entries it
// implements.
//
// The avx2 tier has:
//
//   - dot products of f32, f16 and bf16 rows (8-lane FMA accumulators) and
//     of q4_0, q4_1, q5_0, q5_1, q8_0 with q8_0/q8_1 activations and of
//     q2_K..q6_K with q8_K activations (VPMADDUBSW/VPMADDWD integer dots);
//   - activation quantizers to q8_0, q8_1 and q8_K and the f16 converter,
//     writing exactly quant.QuantizeRow's bytes for finite inputs;
//   - for MUL_MAT with several activation rows, register-tiled kernels
//     (gemm.go): 4x3 FMA tiles for f32/f16/bf16 weights, one weight row
//     against four activation rows for q4_0, q8_0, q4_K and q6_K; and for
//     one activation row, four-row kernels for q4_0 and q8_0.
//
// Every assembly function has a pure-Go twin (twin.go) or equals the
// generic function, bit for bit, which the tests check (also as fuzz
// targets: go test -fuzz FuzzSIMDTwins, -fuzz FuzzQuantizers).
//
// # Memory
//
// The hot kernels (MUL_MAT, MUL_MAT_ID, FLASH_ATTN_EXT, SOFT_MAX, RMS_NORM,
// ROPE, SSM_SCAN, SSM_CONV, the elementwise ops, GET_ROWS, CPY of f32
// rows) allocate nothing when a node is computed again: their working memory is the
// backend's scratch, grown when a call needs more and never shrunk, and
// their parallel jobs are structs the backend keeps. Compute calls on one
// backend run one at a time.
package cpu
