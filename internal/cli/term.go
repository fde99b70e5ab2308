package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// IsTerminal reports whether w is an *os.File open on a character device,
// which for the standard streams means a terminal. (/dev/null is a character
// device too; drawing a progress bar into it is harmless.)
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// SameFile reports whether a and b are *os.File values open on the same file,
// e.g. stdout and stderr on one terminal.
func SameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 || fa == nil || fb == nil {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// ErrNoTestdata is returned by SharedTestdata when no shared/testdata
// folder holds the file.
var ErrNoTestdata = errors.New("shared test data not found")

// SharedTestdata returns the path of name in the project's shared test data:
// the first shared/testdata/name found walking up from the working
// directory (the repository sits beside shared/). Tests use it to find the
// real model files and skip when they are absent.
func SharedTestdata(name string) (string, error) {
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
			return "", ErrNoTestdata
		}
		dir = parent
	}
}
