//go:build unix

package cpu

import (
	"testing"
	"unsafe"
)

// TestReserveOffHeapAligned: a reservation starts on a huge-page boundary
// and is whole huge pages long, so transparent huge pages can back all of
// it where the OS offers them.
func TestReserveOffHeapAligned(t *testing.T) {
	for _, n := range []int64{1, hugePage - 1, hugePage, hugePage + 1, 5 * hugePage / 2} {
		b, free, err := reserveOffHeap(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(b)%hugePage != 0 || int64(len(b)) < n || int64(len(b)) >= n+hugePage {
			t.Errorf("reserveOffHeap(%d): %d bytes", n, len(b))
		}
		if at := uintptr(unsafe.Pointer(&b[0])); at%hugePage != 0 {
			t.Errorf("reserveOffHeap(%d) at %#x, not huge-page aligned", n, at)
		}
		free()
	}
}
