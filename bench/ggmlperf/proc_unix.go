//go:build unix

package ggmlperf

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup makes cmd the leader of a process group of its own, killed
// whole when its context ends: a shell script's children die with it.
// WaitDelay bounds the wait for a child that still holds the output open.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}
