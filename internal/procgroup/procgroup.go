// Package procgroup runs an external program (test-backend-ops,
// llama-bench) so that ending it ends everything it started: on unix the
// program leads a process group of its own, and cancelling its command
// (the context's end: a time limit or an interrupt) kills the whole group,
// so a shell script's children or a benchmark's helpers die with it.
package procgroup

import "time"

// WaitDelay bounds the wait for the program's output once its context
// ends: a child that escaped the group and still holds the pipe open
// cannot hang the caller.
const WaitDelay = 5 * time.Second
