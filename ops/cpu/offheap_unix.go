//go:build unix

package cpu

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocOffHeap returns n zeroed bytes outside the Go heap (an anonymous
// private mapping, page aligned) and the function that frees them: long-
// lived copies of weights there do not raise the collector's heap goal
// (with GOGC's default, the heap may grow to twice what is live).
func allocOffHeap(n int64) ([]byte, func(), error) {
	if n <= 0 {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("cpu: map %d bytes: %w", n, err)
	}
	// Huge pages where the kernel offers them on request: fewer TLB
	// misses while a kernel streams the copy (advice only).
	adviseHuge(b)
	return b, func() { _ = unix.Munmap(b) }, nil
}
