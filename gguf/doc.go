// Package gguf reads and writes GGUF model files, the format of ggml and
// llama.cpp.
//
// A GGUF file is a header (magic "GGUF", a uint32 version, a uint64 tensor
// count and a uint64 key-value count), the key-value metadata, one
// description per tensor (name, dimensions, element type and the offset of
// its data), padding to the file's alignment, and the tensor data. All
// numbers are little-endian; strings are a uint64 length and that many
// bytes. The alignment is 32 unless the uint32 key "general.alignment" says
// otherwise.
//
// Open maps a file into memory read-only and Parse reads one already in
// memory; both read versions 2 and 3 (which share one layout) and refuse
// version 1 (32-bit counts) and big-endian files. The tensor data is never
// copied: File.Tensor returns an ops.Tensor whose buffer is the mapped
// file, and File.TensorData the mapped bytes. The metadata is copied out of
// the file, so it stays readable after Close.
//
// Every count, length, offset and extent in the file is checked against
// the bytes that remain before anything is allocated for it, so a corrupt
// or hostile file gets an error (a *FormatError naming the byte offset and
// the field) and never a panic, a hang or an allocation much larger than
// the file itself.
//
// Writer builds GGUF version 3 files: key-value metadata from Go values and
// tensors from their packed bytes.
package gguf
