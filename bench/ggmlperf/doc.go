// Package ggmlperf measures ggml's CPU kernels on kernbench's benchmark
// points, so that the two can be compared side by side on one machine.
//
// It drives ggml's own benchmark program, test-backend-ops, which a user
// builds from ggml's public repository (see README.md). A point's node,
// as kernbench builds it (harness.Point.Node), is written as a line of
// test-backend-ops' test file format (-test-file): ggml's op and type
// numbers, the output's shape, the op parameters as ggml packs them, and
// every source's type, shape and strides. test-backend-ops then builds
// the same node ("test_generic_op") and times it in its perf mode, and
// the results are read back from its SQL output (-output sql), which
// carries every field; its console output can be read too
// (ParseConsole), for logs a user saved.
//
// The op numbers are not stable across ggml versions, so they are read
// from the ggml.h of the tree the binary was built from (ReadEnums), and
// every result is checked against the op asked for: a binary and header
// that disagree make an error, never a mislabelled time.
//
// ops.go holds the one table that maps kernbench's ops to ggml's: the
// op's name, how its parameters are packed, and which of its sources
// ggml can be given.
package ggmlperf
