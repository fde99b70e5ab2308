//go:build unix

package simt

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate returns an error unless dir is a folder (not a link)
// owned by this user that no one else can write to.
func checkPrivate(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("not a folder")
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("cannot read its owner")
	}
	if uid := os.Getuid(); int(sys.Uid) != uid {
		return fmt.Errorf("owned by user %d, not by this user (%d)", sys.Uid, uid)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("others can write to it (mode %v)", st.Mode().Perm())
	}
	return nil
}
