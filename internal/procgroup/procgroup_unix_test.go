//go:build unix

package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOwnKillsTheGroup: a shell whose child sleeps and holds the output
// pipe is ended at its context's deadline, child included, and the wait
// returns promptly.
func TestOwnKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 1000 & echo $!; wait")
	var out strings.Builder
	cmd.Stdout = &out
	Own(cmd)
	start := time.Now()
	err := cmd.Run()
	if err == nil {
		t.Fatal("the program ended by itself; want it killed")
	}
	if d := time.Since(start); d > WaitDelay+2*time.Second {
		t.Errorf("Run returned after %v", d)
	}
	child, perr := strconv.Atoi(strings.TrimSpace(out.String()))
	if perr != nil {
		t.Fatalf("child pid %q: %v", out.String(), perr)
	}
	// The child is gone (or a zombie being reaped): signal 0 fails, or
	// /proc says it is dead.
	deadline := time.Now().Add(2 * time.Second)
	for {
		e := syscall.Kill(child, 0)
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if errors.Is(e, syscall.ESRCH) || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d outlived its group's kill", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
