//go:build !amd64 || purego

package cpu

// avx2Kernels is nil where the assembly is not built: other
// architectures, and amd64 with the purego build tag.
var avx2Kernels *kernelSet

// avx512Kernels and vnniKernels are nil there too.
var (
	avx512Kernels *kernelSet
	vnniKernels   *kernelSet
)

// vnniExtras is empty there.
var vnniExtras []tierExtra
