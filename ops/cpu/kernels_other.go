//go:build !amd64 || purego

package cpu

// avx2Kernels is nil where the assembly is not built: other
// architectures, and amd64 with the purego build tag.
var avx2Kernels *kernelSet
