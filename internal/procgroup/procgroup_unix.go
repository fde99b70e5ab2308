//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Own makes cmd, which must not have started, the leader of a process
// group of its own, killed whole (SIGKILL to the group) when cmd's
// context ends.
func Own(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// A negative pid names the group the leader's pid numbers.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = WaitDelay
}
