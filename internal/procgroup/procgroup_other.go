//go:build !unix

package procgroup

import "os/exec"

// Own bounds the wait for cmd's output once its context ends; without
// process groups, cancelling kills the program itself
// (exec.CommandContext's default).
func Own(cmd *exec.Cmd) {
	cmd.WaitDelay = WaitDelay
}
