//go:build !unix

package cpu

// allocOffHeap returns n zeroed, 8-byte aligned bytes (in the Go heap
// where the OS has no anonymous mappings) and a function that lets them
// go.
func allocOffHeap(n int64) ([]byte, func(), error) {
	return alignedBytes(n), func() {}, nil
}

// reserveOffHeap returns n zeroed bytes for an arena (in the Go heap
// where the OS has no anonymous mappings) and a function that lets them
// go.
func reserveOffHeap(n int64) ([]byte, func(), error) {
	return alignedBytes(n), func() {}, nil
}

// discard zeroes b (the OS here cannot be told that pages are unneeded).
func discard(b []byte) { clear(b) }

// adviseHugeInside does nothing where the OS has no huge page advice.
func adviseHugeInside([]byte) {}
