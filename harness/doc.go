// Package harness validates backends against the float64 reference.
//
// Each op is declared once, in an OpDef (a file per op, op_<name>.go):
// its named sizes with defaults and docs, the types it runs with, its
// variant type (the sizes, types and options such as layouts, masks and
// modes that its nodes are built from, with the one function that draws
// the leaves and builds the node), its validation cases (variants at edge
// shapes, plus custom builds for operands no variant has), and its
// tolerances with their reasons. Validation (Cases), benchmark points
// (Point, which `go test -bench` and package bench's sweeps measure) and
// the tolerance table all take the op from there. Its cost is the op's own
// cost model, ops.CostOf.
//
// A Case is one op on one set of shapes, types and parameters: the op,
// the types it exercises, and a Build function that creates the leaf
// tensors through a Builder (which draws their values from a described
// distribution with a fixed seed, so every backend sees bit-identical
// inputs) and returns the node to compute. Run computes a case on one
// ops.Backend and compares the result with reference.Compute: normalized
// mean squared error (as ggml's test-backend-ops computes it), the largest
// absolute error, and NaN/Inf mismatches, against the limits of the
// tolerance table (the definitions' entries, see LookupTolerance). Every
// tensor is allocated with guard bytes past its end, filled with a
// sentinel pattern and checked after Compute, so writes out of bounds
// fail the case; inputs are checked to be unchanged, and outputs start out
// poisoned with NaN bytes so an element the kernel forgets to write fails
// too. Every op also has non-finite cases (Case.Plants: a NaN or an
// infinity planted in a weight, an activation, a mask, a sink, a K/V
// row), whose output must be non-finite exactly where the reference's is,
// of the same kind.
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
//
// # Adding an op
//
// After the op itself (ops: its constant, constructor and cost formula;
// reference; the backends' kernels), write op_<name>.go here: a variant
// struct with a method returning its Case, the case list, and an OpDef
// registered from init with the op's sizes, types, point function (the
// variant at a benchmark point's sizes), cases and tolerances. Validation,
// `go test -bench` and opbench sweep then have it; TestOpDefs checks the
// definition is complete, TestTolerances that every entry is used.
//
// # Benchmarks
//
// A Point (op, type, sizes) becomes an ordinary Case through its op's
// definition, so every benchmarked point is also validatable; Plan builds
// its node through a Builder that allocates and draws nothing, to refuse
// bad sizes and estimate cost and memory first. Prepare builds a case on
// a backend, computes it once and validates it (or, when the reference
// would take too long, validates a sample of the outputs where the op's
// definition says how, MUL_MAT, MUL_MAT_ID and FLASH_ATTN_EXT, and says
// "sampled", else checks memory safety only and says "unvalidated"), and
// returns the node ready to time; a PointCache shares the drawn inputs and
// reference output between backends.
//
// Package bench times prepared points (Measure, under a Protocol) and
// keeps the records.
//
// bench_test.go holds `go test -bench` benchmarks of every op x type x
// CPU tier, from the definitions' Shapes, named Op/op/type/sizes/cpu-tier
// (BenchmarkOp/MUL_MAT/q4_0/m4096_n1_k4096/cpu-avx2), reporting MB/s and
// GFLOP/s. Package bench builds sweeps, records, comparisons and
// rooflines on these.
package harness
