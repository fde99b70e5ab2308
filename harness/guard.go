package harness

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// guardByte returns the sentinel pattern's byte i: a sequence no kernel
// writes by accident (neither zeros, nor 0xFF, nor a repeated value).
func guardByte(i int) byte { return 0xA5 ^ byte(i*29) }

// writeGuarded writes data at t's first byte and the sentinel pattern in the
// guard bytes after t's extent. t must own storage of extent+guard.
func writeGuarded(t *ops.Tensor, data []byte, guard int64) error {
	buf, off := t.Storage()
	if buf == nil {
		return fmt.Errorf("%s has no storage", t.Label())
	}
	ext := t.Extent()
	if int64(len(data)) != ext {
		return fmt.Errorf("%d bytes for %s of extent %d", len(data), t.Label(), ext)
	}
	if off+ext+guard > buf.Size() {
		return fmt.Errorf("%s: no room for guard bytes (buffer %d, need %d)", t.Label(), buf.Size(), off+ext+guard)
	}
	all := make([]byte, ext+guard)
	copy(all, data)
	for i := 0; i < int(guard); i++ {
		all[ext+int64(i)] = guardByte(i)
	}
	if _, err := buf.WriteAt(all, off); err != nil {
		return fmt.Errorf("write %s: %w", t.Label(), err)
	}
	return nil
}

// readStorage reads t's extent and its guard bytes.
func readStorage(t *ops.Tensor, guard int64) ([]byte, error) {
	buf, off := t.Storage()
	if buf == nil {
		return nil, fmt.Errorf("%s has no storage", t.Label())
	}
	p := make([]byte, t.Extent()+guard)
	if _, err := buf.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Label(), err)
	}
	return p, nil
}

// guardDamage counts the changed sentinel bytes past t's extent.
func guardDamage(t *ops.Tensor, guard int64) (int, error) {
	p, err := readStorage(t, guard)
	if err != nil {
		return 0, err
	}
	ext := t.Extent()
	n := 0
	for i := 0; i < int(guard); i++ {
		if p[ext+int64(i)] != guardByte(i) {
			n++
		}
	}
	return n, nil
}

// changedBytes counts the bytes of leaf l that differ from what was written
// and are not covered by the write of node (nil when the node writes
// elsewhere). The first such offset is returned too (or -1).
func changedBytes(l *leaf, node *ops.Tensor) (int, int64, error) {
	p, err := readStorage(l.t, 0)
	if err != nil {
		return 0, -1, err
	}
	var covered []bool
	if node != nil {
		covered = coverage(node, int64(len(l.data)))
	}
	n, first := 0, int64(-1)
	for i, want := range l.data {
		if p[i] != want && (covered == nil || !covered[i]) {
			if n == 0 {
				first = int64(i)
			}
			n++
		}
	}
	return n, first, nil
}

// coverage marks the bytes of the owning storage (of size n) that node's
// elements occupy.
func coverage(node *ops.Tensor, n int64) []bool {
	c := make([]bool, n)
	_, off := node.Storage()
	_, base := owner(node).Storage()
	off -= base
	bs := node.Type.BlockSize()
	size := node.Type.TypeSize()
	for i3 := int64(0); i3 < node.Ne[3]; i3++ {
		for i2 := int64(0); i2 < node.Ne[2]; i2++ {
			for i1 := int64(0); i1 < node.Ne[1]; i1++ {
				for b := int64(0); b < node.Ne[0]/bs; b++ {
					at := off + b*node.Nb[0] + i1*node.Nb[1] + i2*node.Nb[2] + i3*node.Nb[3]
					for k := at; k < at+size && k < n; k++ {
						if k >= 0 {
							c[k] = true
						}
					}
				}
			}
		}
	}
	return c
}

// owner returns the tensor that owns t's storage.
func owner(t *ops.Tensor) *ops.Tensor {
	for t.ViewOf != nil {
		t = t.ViewOf
	}
	return t
}
