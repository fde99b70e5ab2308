//go:build unix

package llamabench

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script into a temporary folder.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProgramRuns checks what a program is given and how its output and
// failures are read.
func TestProgramRuns(t *testing.T) {
	out, err := os.ReadFile("testdata/run-bench-stories260K.json")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(data, out, 0o644); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args")
	p := &Program{Backend: "kernbench", Path: script(t, `echo "$@" > `+argsFile+`; cat `+data+"\n"), Args: []string{"-bench"}}
	res, err := p.Bench(context.Background(), "m.gguf", Params{Prompt: []int{16}, Gen: []int{8}, Reps: 2, Threads: 2, FlashAttn: true})
	if err != nil || len(res) != 2 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	args, _ := os.ReadFile(argsFile)
	if got, want := strings.TrimSpace(string(args)), "-bench -m m.gguf -p 16 -n 8 -r 2 -t 2 -fa on -o json"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}

	for _, tt := range []struct{ body, want string }{
		{"echo 'error: failed to load model' >&2; exit 1\n", "exit status 1: error: failed to load model"},
		{"echo '| model | size |'\n", "JSON lines"},
	} {
		p := &Program{Backend: "llama.cpp", Path: script(t, tt.body)}
		if _, err := p.Bench(context.Background(), "m.gguf", Params{Prompt: []int{16}, Reps: 1, Threads: 1}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want one containing %q", tt.body, err, tt.want)
		}
	}
}

// TestProgramTimeLimit checks that a program over its time limit is
// killed with what it started: the script starts a child that would
// sleep on (and keep stdout open), writes the child's pid, and waits.
func TestProgramTimeLimit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := &Program{Backend: "llama.cpp", Limit: 300 * time.Millisecond,
		Path: script(t, "sleep 30 &\necho $! > "+pidFile+"\nwait\n")}
	start := time.Now()
	_, err := p.Bench(context.Background(), "m.gguf", Params{Prompt: []int{16}, Reps: 1, Threads: 1})
	if err == nil || !strings.Contains(err.Error(), "over its time limit") {
		t.Fatalf("error %v, want the time limit", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("took %v to give up", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child was killed with the group; give the kernel a moment to
	// reap it (it is the shell's child, re-parented when the shell died).
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the script's child %d outlived the time limit", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
