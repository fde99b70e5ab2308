//go:build !unix

package simt

import (
	"os"
	"os/exec"
	"time"
)

// ownGroup lets cmd be killed when its context ends (the emulator builds
// only on Linux; this keeps the package building elsewhere).
func ownGroup(cmd *exec.Cmd) {
	cmd.WaitDelay = 5 * time.Second
}

// killGroup kills the process pid.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
