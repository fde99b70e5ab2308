//go:build !unix

package simdtest

// ProcessCPUSeconds returns 0: CPU time is not measured here.
func ProcessCPUSeconds() float64 { return 0 }
