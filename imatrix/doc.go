// Package imatrix reads, writes and computes importance matrices in
// llama.cpp's formats: per weight matrix, the sum over a text of the
// squares of the activations that meet each of its input columns (one
// sum per column, per expert for a stack of experts), and how many
// activation rows went into the sums.
//
// Two file formats exist. The GGUF one (llama-imatrix's default output)
// holds, per matrix NAME, an F32 tensor NAME.in_sum2 of shape
// [columns, matrices] with the raw sums and an F32 tensor NAME.counts of
// shape [1, matrices] with the row counts, and the metadata
// general.type = "imatrix", imatrix.datasets (the texts), imatrix.chunk_count
// and imatrix.chunk_size. The legacy .dat format holds an int32 entry
// count, then per entry an int32 name length, the name, an int32 call
// count ncall, an int32 value count and the values (sums divided by rows,
// times ncall), and optionally the int32 chunk count and the length and
// bytes of the dataset's name.
//
// Read takes either; Matrix.Weights gives a matrix's importance weights
// as llama-quantize derives them (mean squares per column); WriteGGUF and
// WriteLegacy write what llama-imatrix writes. A Collector accumulates the
// sums from a model's matrix products, as llama-imatrix's callback does.
package imatrix
