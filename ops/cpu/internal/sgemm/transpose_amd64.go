//go:build amd64 && !purego

package sgemm

// transpose16AVX512 is Transpose16AVX512's kernel on blocks whole 16x16
// tiles: tile b takes elements [16b, 16b+16) of each row to lines
// 16b..16b+15, ld elements apart, from dst.
//
//go:noescape
func transpose16AVX512(dst *uint32, ld int, rows *[16]*uint32, blocks int)

// Transpose16AVX512 is TransposeTwin in AVX-512 F: whole 16x16 tiles in
// registers (three rounds of unpacks, two of lane shuffles), the last
// n%16 lines in Go. It checks the operands' bounds first.
func Transpose16AVX512(dst []uint32, ld int, rows *[16][]uint32, n int) {
	if n <= 0 {
		return
	}
	if ld < 16 {
		panic("sgemm: Transpose16AVX512 with lines closer than 16 elements")
	}
	_ = dst[(n-1)*ld+15]
	var ptrs [16]*uint32
	for c := range rows {
		_ = rows[c][n-1]
		ptrs[c] = &rows[c][0]
	}
	whole := n / 16 * 16
	if whole > 0 {
		transpose16AVX512(&dst[0], ld, &ptrs, n/16)
	}
	if whole < n {
		var tail [16][]uint32
		for c := range tail {
			tail[c] = rows[c][whole:n]
		}
		TransposeTwin(dst[whole*ld:], ld, &tail, n-whole)
	}
}
