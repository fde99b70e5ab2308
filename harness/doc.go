// Package harness validates backends against the float64 reference.
//
// A Case is declared once: the op, the types it exercises, and a Build
// function that creates the leaf tensors through a Builder (which draws
// their values from a described distribution with a fixed seed, so every
// backend sees bit-identical inputs) and returns the node to compute. Run
// computes a case on one ops.Backend and compares the result with
// reference.Compute: normalized mean squared error (as ggml's
// test-backend-ops computes it), the largest absolute error, and NaN/Inf
// mismatches, against the limits of the single tolerance table in
// tolerance.go. Every tensor is allocated with guard bytes past its end,
// filled with a sentinel pattern and checked after Compute, so writes out
// of bounds fail the case; inputs are checked to be unchanged, and outputs
// start out poisoned with NaN bytes so an element the kernel forgets to
// write fails too.
//
// Some cases expect an error instead of a result: a Refuse case passes when
// building it fails with an error wrapping ops.ErrShape or
// quant.ErrRowLength (a shape the op must not take), a Reject case passes
// when the backend's Compute returns an error (input data the op must not
// take, such as a row id out of range).
//
// Cases returns the default case set: every compute op, every type where
// the op takes any type, and the edge shapes of each family (one row, one
// column, non-contiguous views, broadcasting, fully masked rows, GQA,
// unused experts, large rope positions, odd sizes). It is sized to run in
// seconds on a CPU; LargeCases adds model-sized shapes.
package harness
