package cli

import (
	"io"
	"os"
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
