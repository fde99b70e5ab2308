// Package getrows holds GET_ROWS's AVX2 row decoders of q4_0 and q8_0
// (getrows_amd64.s), equal bit for bit to quant.DequantizeRow, their
// twin. (The f16 and bf16 wideners are package dot's.)
package getrows
