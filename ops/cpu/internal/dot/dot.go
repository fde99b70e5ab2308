// Package dot holds the dot products of a weight row with an activation
// row, per weight type: the generic ones in Go (float.go, legacy.go, k.go:
// the generic tier, with ggml's block arithmetic), their AVX2 assembly
// (dot_float_amd64.s, dot_q_amd64.s, dotk_amd64.s, gemmk_amd64.s) with
// pure-Go twins (twin.go; the K formats'
// assembly equals the generic functions bit for bit), and the kernels
// that share their macros: the quad kernels (one weight row against four
// activation rows, MUL_MAT's gemm path), the 4x3 float32 tile and the
// f16/bf16 widening. The backend's tier tables (package cpu) install them.
package dot

// A Func returns the dot product of n elements of a weight row x (packed
// blocks of the weight type) and an activation row y (packed blocks of the
// weight type's quant.VecDotType). n is a multiple of the weight type's
// block size and x and y hold at least that many elements.
type Func func(n int, x, y []byte) float32

// A QuadFunc sets out[c] to the dot product of nb blocks of the weight
// row x with activation row c of y: a packed group of four q8_0 or q8_1
// rows (PackQ8Block, PackQ81Block bytes per block), or four q8_K rows
// ldy bytes apart.
type QuadFunc func(nb int, x, y []byte, ldy int, out *[4]float32)

// PackQ8Block is the size of one block of a packed q8 group: four float32
// scales and four rows of 32 codes.
const PackQ8Block = 16 + 4*32

// PackQ81Block is the size of one block of a packed q8_1 group: four
// float32 scales d, four float32 sums s, and four rows of 32 codes.
const PackQ81Block = 32 + 4*32
