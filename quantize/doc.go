// Package quantize rewrites GGUF models into other tensor types, the way
// llama.cpp's llama-quantize does, and writes GGUF files tensor by tensor.
//
// A Scheme is the target: a weight type (f32, f16, bf16, q8_0, q4_0, q4_1,
// q5_0, q5_1, q6_K, iq4_nl, iq4_xs, tq1_0, tq2_0) or one of llama.cpp's
// mixes (q2_K, q2_K_S, q3_K_S, q3_K_M, q3_K_L, q4_K_S, q4_K_M, q5_K_S,
// q5_K_M, the IQ mixes iq3_m, iq3_s, iq3_xs, iq3_xxs, iq2_m, iq2_s, iq2_xs,
// iq2_xxs, iq1_m, iq1_s, and mxfp4_moe), each with the general.file_type
// number llama.cpp records for it. Those that llama-quantize makes only
// with an importance matrix (Scheme.NeedsImatrix: q2_K_S, iq3_xs, iq3_xxs
// and the IQ1/IQ2 mixes) are refused without one by name (CheckImatrix,
// RequiresImatrix). Choose applies the scheme to one tensor, in this
// order:
//
//  1. Tensors that are not weight matrices are copied as they are: 1-D
//     tensors (norms, biases, rope_freqs, attention sinks), names not
//     ending in "weight" (Mamba's ssm_a, ssm_d), norms, expert routers,
//     Mamba's conv kernels (ssm_conv1d), integer tensors.
//  2. The rules pick a type: output.weight (token_embd.weight in a model
//     without one) gets q6_K in every quantized scheme (q8_0 when its rows
//     do not fit the default type's block, or in the q8_0 scheme); the mixes
//     give attn_v, attn_output and ffn_down (the experts' ffn_down_exps
//     too) more bits in chosen layers (the IQ mixes also attn_q, attn_k,
//     ffn_up, ffn_gate, token_embd and output their own types), and
//     8-expert models' attention more (see WriteRules for the table);
//     everything else gets the default type.
//     -pure (Params.Pure) turns the rules off; Params.OutputType and
//     Params.TokenEmbdType override them for those two tensors.
//  3. When the type's block (256 elements for the K types, iq4_xs and the
//     ternary types, 32 for the others) does not divide the tensor's
//     rows, the tensor falls back to a type whose block does: llama.cpp's
//     table (q4_K to q5_0, q5_K to q5_1, q6_K to q8_0, q2_K, q3_K, tq1_0
//     and tq2_0 to q4_0, iq4_xs and the IQ1/IQ2/IQ3 types to iq4_nl),
//     then f16. The Decision records
//     the reason.
//
// Quantize runs the plan over a file: each converted tensor is dequantized
// to float32 a row at a time and encoded with quant.QuantizeRowWeighted,
// rows split over goroutines: ggml's quantizers as llama-quantize calls
// them, with the importance matrix's weights for the tensor (Params.Imatrix)
// where it has an entry, so the bytes are those llama-quantize writes with
// the same matrix or without one. Metadata is kept, with general.file_type
// and general.quantization_version set, and the quantize.imatrix.* keys
// llama-quantize adds when a matrix is used.
//
// WriteFile writes a GGUF file whose tensors are produced one at a time by a
// callback, so a model never has to be in memory whole; Quantize and
// cmd/mkmodel use it.
package quantize
