//go:build unix

package simt

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup makes cmd the leader of a process group of its own, killed
// whole (the compiler's cc1plus, as, ld with it) when its context ends.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
}

// killGroup kills the process group led by pid.
func killGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}
