// Package getrows holds fast row decoders for GET_ROWS and for MUL_MAT's
// decoded-weight gemm, each equal bit for bit to quant.DequantizeRow, its
// twin: the AVX2 decoders of q4_0 and q8_0 (getrows_amd64.s) and a
// table-driven TQ2_0 decoder in plain Go (tq.go), which every tier uses.
// (The f16 and bf16 wideners are package dot's.)
package getrows
