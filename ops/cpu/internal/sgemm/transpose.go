package sgemm

import "unsafe"

// TransposeTwin turns sixteen rows of 32-bit values into lines of
// sixteen, ld elements apart (ld >= 16): dst[i*ld + c] = rows[c][i] for
// i < n and c < 16, as the packed paths lay out an activation panel
// (float32, or pairs of bfloat16; ld 16) and write a block's sums to
// the outputs (ld the output rows). It is the Go twin of
// Transpose16AVX512.
func TransposeTwin(dst []uint32, ld int, rows *[16][]uint32, n int) {
	for i := range n {
		line := (*[16]uint32)(dst[i*ld:])
		for c := range line {
			line[c] = rows[c][i]
		}
	}
}

// F32AsU32 views f's bits as uint32 values (nil for an empty f).
func F32AsU32(f []float32) []uint32 {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&f[0])), len(f))
}
