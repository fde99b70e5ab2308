//go:build !unix

package ggmlperf

import (
	"os/exec"
	"time"
)

// ownGroup bounds the wait for cmd's output once its context ends (the
// process is killed; there are no process groups to kill here).
func ownGroup(cmd *exec.Cmd) {
	cmd.WaitDelay = 5 * time.Second
}
