//go:build !unix

package llamabench

import "os/exec"

// inOwnGroup leaves cmd as it is: without process groups, cancelling
// kills the program itself (exec.CommandContext's default).
func inOwnGroup(cmd *exec.Cmd) {}
