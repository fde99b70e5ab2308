// Package cpu is kernbench's CPU backend: every op in Go, multi-threaded
// over rows by a long-lived worker pool, with the hot kernels in SIMD
// tiers chosen at run time.
//
// Each op's file adds its kernel to a table (see addKernel); the backend's
// Supports and Compute dispatch through that table. Quantized matrix
// products follow ggml's scheme so their error profile matches ggml's: the
// activations are quantized to the weight type's VecDotType (Q8_0, Q8_1 or
// Q8_K) and dotted block by block with integer sums.
//
// # Layout
//
// This package holds the op logic, one file per op named by ggml's op
// name (op_mul_mat.go, op_get_rows.go, ...; ADD and MUL in op_binary.go,
// SCALE, SILU and GELU in op_unary.go): shapes and types (supports*) and
// each op's path. Beside them: the parallel split (pool.go), scratch
// memory (scratch.go), MUL_MAT's paths (mul_mat_*.go: the activations'
// conversion, the gemm driver and its quantized, K-format and float
// panel paths; dot_kernels.go, the dot kernel per weight type), the row
// load and store helpers (rows.go, data.go), the memo of passed checks
// (check_memo.go), the backend's registry entry (register.go), and the
// two tier tables. The kernels themselves live in
// leaf packages under internal/, each holding one family's Go stubs, its
// pure-Go twins, its assembly and the tests that compare the two:
//
//   - internal/dot: dot products per weight type (generic and AVX2) and
//     the quad kernels that share their macros (one weight row against
//     four activation rows), the f32 4x3 tile, f16/bf16 widening;
//   - internal/gemv: four weight rows against one activation row
//     (MUL_MAT with one to three activation rows), and the x8 kernels:
//     eight rows interleaved per block for q4_0, q8_0, q6_K and q4_K
//     weights repacked once (mul_mat_x8.go);
//   - internal/qgemm: the panel kernels of q4_0, q5_0, q8_0, q4_1, q5_1,
//     q4_K, q5_K and q6_K gemm (eight repacked weight rows by four
//     activation rows);
//   - internal/sgemm: the 6x16 float32 micro-kernel of the packed gemm
//     (AVX2) and the avx512 tier's 6x32 one over two panels;
//   - internal/quantize: activation quantizers (q8_0, q8_1, q8_K, f16;
//     AVX2 and the avx512 tier's zmm ones);
//   - internal/getrows: GET_ROWS's q4_0 and q8_0 row decoders;
//   - internal/vec: SOFT_MAX, RMS_NORM, flash attention accumulation and
//     the elementwise ops' row kernels, with the float32 exp (AVX2, and
//     zmm forms for the avx512 tier);
//   - internal/rope, internal/ssm, internal/flashattn: ROPE's, SSM_SCAN's
//     and SSM_CONV's, FLASH_ATTN_EXT's block kernels;
//   - internal/simd: what they share (block sizes, the binary16 table, the
//     lane arithmetic twins are built from); internal/simd/simdtest: the
//     differential tests' helpers.
//
// # Tiers
//
// A Tier is a level of implementation: "generic" (pure Go, complete) and,
// on amd64, "avx2" (AVX2+FMA+F16C assembly), "avx512" (AVX-512 F/BW/VL:
// zmm kernels) and "vnni" (avx512 with AVX512_VNNI: VPDPBUSD for the
// int8 dot products). Tiers reports each with whether this CPU runs it
// and, where not, why (the CPU features cpuid finds missing, or no
// kernels in this build). The tier is detected once per process; a
// backend uses the fastest supported one unless Options.Tier or
// $KERNBENCH_CPU names another (a name that is unknown or unsupported is
// an error, never a quiet fallback).
//
// Each tier's kernels form a kernelSet. genericKernels (kernels.go) and
// avx2Kernels (kernels_amd64.go) are spelled out as table literals;
// avx512Kernels and vnniKernels are derived (deriveKernels): a copy of the
// tier below with its maps cloned and the wider kernels assigned over
// it, so every kernel avx2 gains reaches them too. All three are nil where
// the assembly is not built (kernels_other.go). The avx2 table lists dot
// products for every weight type it speeds up (the legacy and K types,
// f32/f16/bf16, the table-coded, ternary and codebook formats), activation
// converters to q8_0, q8_1, q8_K and f16; gemm kernels (float 4x3 tiles
// and the 6x16 packed micro-kernel for f32/f16/bf16 and the decoded
// formats, quad kernels for the legacy and K types, with panel kernels for
// q4_0, q5_0, q8_0, q4_1, q5_1, q4_K, q5_K, q6_K); four-row gemv kernels,
// the q4_0 side kernel, and x8 kernels for q4_0, q8_0, q4_K, q6_K, f16 and
// bf16; the row kernels of SOFT_MAX, RMS_NORM, flash attention and the
// elementwise ops; GET_ROWS decoders; and the ROPE, SSM and
// FLASH_ATTN_EXT block kernels. The avx512 tier replaces, by zmm kernels
// bit for bit the AVX2 ones: the packed float path's micro-kernel (a 6x32
// over two panels, micro2), the f16/bf16 wideners, the elementwise and
// softmax/norm/attention row kernels, the activation quantizers, the
// FLASH_ATTN_EXT block and small-head kernels, and the SSM_SCAN/SSM_CONV
// kernels (its f16/bf16 x8 kernels stay AVX2's: the zmm ones were slower
// inside a model). The vnni tier replaces, by VPDPBUSD kernels on zmm, the
// panel kernels of the legacy and K types, the x8 kernels of q4_0, q8_0,
// q4_K and q6_K and their tails, the four-row gemv kernels of the legacy
// and K types, the q4_0 side kernel, the q4_0, q8_0, q4_K, q5_K and q6_K
// dot products and the q2_K/q3_K quad kernels. Tests check entries by
// function identity and by result (kernels_amd64_test.go,
// kernels_vnni_amd64_test.go, kernels_vnni_gemv_amd64_test.go,
// x8_vnni_amd64_test.go).
//
// Every assembly function has a pure-Go twin or equals a generic
// function, bit for bit, which its package's tests check (also as fuzz
// targets, e.g. go test ./ops/cpu/internal/dot -fuzz FuzzTwins, and
// ./ops/cpu/internal/quantize -fuzz FuzzQuantizers); this package's tests
// run every tier the host supports against the float64 reference
// (forEachTier).
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
