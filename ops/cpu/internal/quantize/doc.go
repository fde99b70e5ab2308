// Package quantize holds the activation quantizers of the AVX2 tier
// (quantize_amd64.s): float32 rows to q8_0, q8_1, q8_K and binary16, the
// activation types MUL_MAT converts to, each writing exactly
// quant.QuantizeRow's bytes for finite inputs (their twin), and their
// zmm forms for the avx512 tier (quantize_avx512_amd64.s), which write the
// AVX2 ones' bytes for any input. The backend's avx2 and avx512 tables
// (package cpu) install them; the generic tier converts with
// quant.QuantizeRow.
package quantize
