// Package reference is kernbench's oracle: a float64 implementation of
// every op in package ops, written as plain loops that anyone can check by
// eye and never optimised.
//
// Read returns a tensor's elements, dequantized, as float64 in logical
// row-major order. Compute returns the value of a computed node from its
// sources' data, in the same order. Both read storage only through the
// ops.Buffer interface, so they work for tensors in any backend's buffers.
//
// Each op's formula is the one documented on its constructor and
// parameters in package ops. Where those documents are silent, the
// reference follows ggml's CPU kernels (ggml/src/ggml-cpu/ops.cpp) and says
// so beside the code. Inputs are dequantized exactly as ggml's dequantizers
// do (package quant) and all arithmetic after that is float64, so the
// roundings a backend makes (float32 accumulation, f16 or q8 activations,
// the destination type of a copy) show up as differences that the
// harness's tolerances judge.
package reference
