//go:build amd64 && !purego

package bench

import (
	"github.com/klauspost/cpuid/v2"
)

// fmaAVX2 runs iters iterations of 12 independent 8-lane float32 FMAs
// (192 FLOPs each).
//
//go:noescape
func fmaAVX2(iters int)

// int8AVX2 runs iters iterations of 6 independent 32-byte integer dot
// product groups (384 integer operations each).
//
//go:noescape
func int8AVX2(iters int)

// readAVX2 loads n bytes from p; n must be a multiple of 256.
//
//go:noescape
func readAVX2(p *byte, n int)

// asmKernels returns the assembly peak kernels the CPU can run.
func asmKernels() []peakKernel {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3) {
		return nil
	}
	return []peakKernel{
		{kind: KindF32FMA, name: "avx2 vfmadd231ps ymm, 12 chains", workPerIter: 192, run: fmaAVX2},
		{kind: KindInt8Dot, name: "avx2 vpmaddubsw+vpmaddwd+vpaddd, 6 groups", workPerIter: 384, run: int8AVX2},
	}
}

// asmRead is the assembly streaming read, or nil.
func asmRead() (name string, read func(p []byte)) {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2) {
		return "", nil
	}
	return "avx2 vpaddq ymm loads, 4 accumulators", func(p []byte) {
		n := len(p) &^ 255
		if n > 0 {
			readAVX2(&p[0], n)
		}
	}
}
