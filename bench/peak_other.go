//go:build !amd64 || purego

package bench

// asmKernels returns no assembly kernels where none are built.
func asmKernels() []peakKernel { return nil }

// asmRead is nil where no assembly is built.
func asmRead() (name string, read func(p []byte)) { return "", nil }
