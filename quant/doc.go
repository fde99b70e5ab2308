// Package quant defines tensor element types and the GGML block formats
// that store them.
//
// Type numbers, names, block sizes and byte layouts are those of ggml and
// the GGUF file format, so a block written here is byte-for-byte a block
// ggml reads, and the other way round. The byte layout of every block is
// documented on its Type constant (see layout.go); CPU kernels that read
// blocks in place rely on those descriptions. All multi-byte fields are
// little-endian, as in GGUF.
//
// QuantizeRow follows ggml's reference quantizers (the quantize_row_*_ref
// functions, which is also what ggml uses to write model files when no
// importance matrix is given) operation for operation in float32, so that
// for the same input it produces the same bytes. DequantizeRow follows
// ggml's dequantize_row_* functions.
//
// Half-precision conversions (FP32ToFP16, FP16ToFP32, FP32ToBF16,
// BF16ToFP32) round to nearest, ties to even, as ggml's do.
package quant
