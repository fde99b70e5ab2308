// Package cpu is kernbench's CPU backend: every op in generic Go,
// multi-threaded over rows by a long-lived worker pool.
//
// Kernels register themselves per op (see register); the backend's
// Supports and Compute dispatch through that table. Quantized matrix
// products follow ggml's scheme so their error profile matches ggml's: the
// activations are quantized to the weight type's VecDotType (Q8_0, Q8_1 or
// Q8_K) and dotted block by block with integer sums.
package cpu
