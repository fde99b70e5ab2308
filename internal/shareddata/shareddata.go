// Package shareddata finds the project's shared test files: the real GGUF
// models, tokenizer vectors and texts in shared/testdata, which sits beside
// the repository (../shared from its root). Tests use Path, which skips the
// test when the file is absent, so a checkout without it still passes, and
// fails it under KERNBENCH_STRICT=1 (package require), as CI sets it.
package shareddata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
)

// ErrNotFound is returned by Find when no shared/testdata folder above the
// working directory holds the file.
var ErrNotFound = errors.New("shared test data not found")

// Find returns the path of name in the first shared/testdata folder found
// walking up from the working directory. An empty name finds the folder.
func Find(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "testdata", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNotFound
		}
		dir = parent
	}
}

// Path returns the path of name in shared/testdata, or skips the test
// when it cannot be found (fails it under KERNBENCH_STRICT=1).
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if errors.Is(err, ErrNotFound) {
		if name == "" {
			require.Skip(tb, "no shared/testdata folder above the working directory")
		} else {
			require.Skip(tb, "test file %q not found in a shared/testdata above the working directory", name)
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Dir returns the shared/testdata folder, or skips the test (fails it
// under KERNBENCH_STRICT=1).
func Dir(tb testing.TB) string {
	tb.Helper()
	return Path(tb, "")
}
