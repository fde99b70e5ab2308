// Package sgemm holds the micro-kernel of the packed float32 gemm path
// (package cpu's mul_mat_sgemm.go packs the panels and drives it): MR weight rows
// against NR packed activation columns, in AVX2 assembly (MicroAVX2,
// sgemm_amd64.s) and its Go twin (Twin), and the AVX-512 two-panel kernel
// (Micro2AVX512, sgemm_avx512_amd64.s) with its twin Twin2.
package sgemm

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// The micro-kernel's tile: MR weight rows by NR activation columns.
const (
	MR = 6
	NR = 16
)

// Twin is the micro-kernel in Go, bit for bit the AVX2 one: each
// output's products are summed by FMA from zero in order of i, then added
// to c.
func Twin(kc int, a []float32, lda int, b []float32, c []float32, ldc int) {
	for r := range MR {
		for j := range NR {
			var acc float32
			for i := range kc {
				acc = simd.FMA32(a[r*lda+i], b[16*i+j], acc)
			}
			c[r*ldc+j] += acc
		}
	}
}

// Twin2 is the two-panel micro-kernel in Go (the twin of the AVX-512
// Micro2AVX512): Twin on the panel b with c's columns [0, NR), then on
// the panel b[bstride:] with c's columns [NR, 2*NR).
func Twin2(kc int, a []float32, lda int, b []float32, bstride int, c []float32, ldc int) {
	Twin(kc, a, lda, b, c, ldc)
	Twin(kc, a, lda, b[bstride:], c[NR:], ldc)
}

// PfLen is how many floats a two-panel micro-kernel (Micro2AVX512)
// prefetches at its prefetch operand for a chunk of kc: one 64-byte line
// for every four k steps.
func PfLen(kc int) int { return PfLines(kc) * 16 }

// PfLines is how many 64-byte lines a two-panel micro-kernel prefetches
// for a chunk of kc: one for every four k steps.
func PfLines(kc int) int { return kc / 4 }

// F32Bytes returns the bytes of f (nil for an empty f), for a
// micro-kernel's prefetch operand.
func F32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// U16Bytes returns the bytes of u (nil for an empty u), for a
// micro-kernel's prefetch operand.
func U16Bytes(u []uint16) []byte {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&u[0])), 2*len(u))
}
