//go:build unix

package llamabench

import (
	"os/exec"
	"syscall"
)

// inOwnGroup makes cmd start in a process group of its own, and its
// cancellation (the context's end: the time limit or an interrupt) kill
// that whole group, so that the threads and any children of a benchmark
// program end with it.
//
// (bench/ggmlperf drives test-backend-ops the same way; this package
// keeps its own few lines rather than share a helper across packages
// with different jobs.)
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The group's id is the leader's pid; a negative pid names the
		// group.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
