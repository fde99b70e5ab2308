//go:build !amd64 || purego

package bench

// asmKernels returns no assembly kernels where none are built.
func asmKernels() []peakKernel { return nil }

// asmReads returns no reads where no assembly is built.
func asmReads() []peakRead { return nil }
