//go:build unix

package gguf

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only and returns them with
// the function that unmaps them.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return unix.Munmap(b) }, nil
}

// dropPages drops the whole pages inside p, a part of a read-only file
// mapping, from memory (MADV_DONTNEED): they stop counting toward the
// process's resident set, and a later read faults them back in from the
// file. The pages at p's ends, which it may share with neighbours, stay.
var dropPages = func(p []byte) {
	if len(p) == 0 {
		return
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	lo := (start + ps - 1) &^ (ps - 1)
	hi := (start + uintptr(len(p))) &^ (ps - 1)
	if hi <= lo {
		return
	}
	// Advice only: a failure leaves the pages resident, nothing worse.
	_ = unix.Madvise(p[lo-start:hi-start], unix.MADV_DONTNEED)
}
