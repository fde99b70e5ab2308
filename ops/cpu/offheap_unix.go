//go:build unix

package cpu

import (
	"fmt"
	"unsafe"

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

// reserveOffHeap returns at least n zeroed bytes outside the Go heap
// that start on a huge-page boundary and are a whole number of huge
// pages long, and the function that frees them. The mapping is not
// charged against the commit limit (MAP_NORESERVE): only the pages an
// arena touches become resident.
//
// A transparent huge page can only back a huge-page-aligned range that
// lies wholly in one mapping, so the many small per-tensor mappings of
// allocOffHeap got next to none (16 of the 42 MiB of a 100M q4_0
// model's copies); one aligned reservation for them all gets them
// throughout.
func reserveOffHeap(n int64) ([]byte, func(), error) {
	if n <= 0 {
		return nil, func() {}, nil
	}
	size := (n + hugePage - 1) / hugePage * hugePage
	raw, err := unix.Mmap(-1, 0, int(size+hugePage), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil, fmt.Errorf("cpu: reserve %d bytes: %w", size, err)
	}
	lo := int64((hugePage - uintptr(unsafe.Pointer(&raw[0]))%hugePage) % hugePage)
	b := raw[lo : lo+size : lo+size]
	adviseHuge(b)
	return b, func() { _ = unix.Munmap(raw) }, nil
}

// discard zeroes b and gives the whole pages inside it back to the OS
// (they read as zeros when next touched), clearing only the bytes in the
// partial pages at its ends, so a freed piece of an arena neither stays
// resident nor is faulted back in.
func discard(b []byte) {
	if len(b) == 0 {
		return
	}
	ps := uintptr(unix.Getpagesize())
	p := uintptr(unsafe.Pointer(&b[0]))
	lo := int((ps - p%ps) % ps)
	hi := len(b) - int((p+uintptr(len(b)))%ps)
	if hi <= lo || unix.Madvise(b[lo:hi], unix.MADV_DONTNEED) != nil {
		clear(b)
		return
	}
	clear(b[:lo])
	clear(b[hi:])
}

// adviseHugeInside asks for transparent huge pages for the whole huge
// pages inside b (advice only; nothing where b holds none).
func adviseHugeInside(b []byte) {
	if len(b) < hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((hugePage - p%hugePage) % hugePage)
	hi := lo + (len(b)-lo)/hugePage*hugePage
	if hi > lo {
		adviseHuge(b[lo:hi])
	}
}
