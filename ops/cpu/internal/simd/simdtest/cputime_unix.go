//go:build unix

package simdtest

import "syscall"

// ProcessCPUSeconds returns the user and system CPU time this process has
// used, or 0 when it cannot tell.
func ProcessCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
