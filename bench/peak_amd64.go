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

// fmaAVX512 runs iters iterations of 12 independent 16-lane float32 FMAs
// (384 FLOPs each).
//
//go:noescape
func fmaAVX512(iters int)

// int8VNNI512 runs iters iterations of 12 independent 64-byte VPDPBUSD
// dot products (1536 integer operations each).
//
//go:noescape
func int8VNNI512(iters int)

// bf16DotAVX512 runs iters iterations of 12 independent 16-lane
// VDPBF16PS bf16 pair dot products (768 FLOPs each).
//
//go:noescape
func bf16DotAVX512(iters int)

// readAVX512 loads n bytes from p with zmm loads; n must be a multiple of
// 256.
//
//go:noescape
func readAVX512(p *byte, n int)

// readAVX2 loads n bytes from p; n must be a multiple of 256.
//
//go:noescape
func readAVX2(p *byte, n int)

// asmKernels returns the assembly peak kernels the CPU can run.
func asmKernels() []peakKernel {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3) {
		return nil
	}
	ks := []peakKernel{
		{kind: KindF32FMA, name: "avx2 vfmadd231ps ymm, 12 chains", workPerIter: 192, run: fmaAVX2},
		{kind: KindInt8Dot, name: "avx2 vpmaddubsw+vpmaddwd+vpaddd, 6 groups", workPerIter: 384, run: int8AVX2},
	}
	if hasAVX512() {
		ks = append(ks, peakKernel{kind: KindF32FMA, name: "avx512 vfmadd231ps zmm, 12 chains", workPerIter: 384, run: fmaAVX512})
		if cpuid.CPU.Supports(cpuid.AVX512VNNI) {
			ks = append(ks, peakKernel{kind: KindInt8Dot, name: "avx512vnni vpdpbusd zmm, 12 chains", workPerIter: 1536, run: int8VNNI512})
		}
		if cpuid.CPU.Supports(cpuid.AVX512BF16) {
			ks = append(ks, peakKernel{kind: KindBF16Dot, name: "avx512bf16 vdpbf16ps zmm, 12 chains", workPerIter: 768, run: bf16DotAVX512})
		}
	}
	return ks
}

// hasAVX512 reports whether the CPU and OS run the AVX-512 F/BW/VL code
// of the avx512 tier (cpuid reports AVX512F only where the OS saves the
// zmm state).
func hasAVX512() bool {
	return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL)
}

// asmReads returns the assembly streaming reads the CPU can run.
func asmReads() []peakRead {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2) {
		return nil
	}
	rs := []peakRead{{"avx2 vpaddq ymm loads, 4 accumulators", func(p []byte) {
		if n := len(p) &^ 255; n > 0 {
			readAVX2(&p[0], n)
		}
	}}}
	if hasAVX512() {
		rs = append(rs, peakRead{"avx512 vpaddq zmm loads, 4 accumulators", func(p []byte) {
			if n := len(p) &^ 255; n > 0 {
				readAVX512(&p[0], n)
			}
		}})
	}
	return rs
}
