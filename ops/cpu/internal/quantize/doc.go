// Package quantize holds the activation quantizers of the AVX2 tier
// (quantize_amd64.s): float32 rows to q8_0, q8_1, q8_K and binary16, the
// activation types MUL_MAT converts to, each writing exactly
// quant.QuantizeRow's bytes for finite inputs (their twin). The backend's
// avx2 table (package cpu) installs them; the generic tier converts with
// quant.QuantizeRow.
package quantize
