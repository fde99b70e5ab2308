//go:build !unix

package simt

import (
	"fmt"
	"os"
)

// checkPrivate returns an error unless dir is a folder (the emulator
// builds only on Linux; this keeps the package building elsewhere).
func checkPrivate(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("not a folder")
	}
	return nil
}
