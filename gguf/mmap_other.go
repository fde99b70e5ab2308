//go:build !unix

package gguf

import (
	"io"
	"os"
)

// mapFile reads the first size bytes of f into memory, where memory
// mapping is not available; the returned release function does nothing.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// dropPages is nil where the file is read into memory: its bytes are the
// only copy.
var dropPages func(p []byte)
