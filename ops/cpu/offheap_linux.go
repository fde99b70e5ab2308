package cpu

import "golang.org/x/sys/unix"

// adviseHuge asks for transparent huge pages for b (advice only).
func adviseHuge(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
