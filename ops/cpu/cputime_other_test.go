//go:build !unix

package cpu

// processCPUSeconds returns 0: CPU time is not measured here.
func processCPUSeconds() float64 { return 0 }
