//go:build unix

package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalHelper is the child process of TestSignalRemovesTemporary:
// it starts an AtomicFile, says its temporary name, and waits.
func TestSignalHelper(t *testing.T) {
	path := os.Getenv("KERNBENCH_CLI_SIGNAL_OUT")
	if path == "" {
		t.Skip("the child process of TestSignalRemovesTemporary")
	}
	f, err := CreateAtomic(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	f.WriteString("partial")
	fmt.Println(f.Name())
	time.Sleep(time.Minute)
	os.Exit(4)
}

// TestSignalRemovesTemporary: SIGINT or SIGTERM while an output is being
// written removes its temporary file, and the process still ends by the
// signal (so a shell sees 130 or 143).
func TestSignalRemovesTemporary(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSignalHelper$")
		cmd.Env = append(os.Environ(), "KERNBENCH_CLI_SIGNAL_OUT="+filepath.Join(dir, "out.bin"))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tmp, err := bufio.NewReader(stdout).ReadString('\n')
		tmp = strings.TrimSpace(tmp)
		if err != nil || !strings.HasPrefix(filepath.Base(tmp), "out.tmp") || !strings.HasSuffix(tmp, ".bin") {
			cmd.Process.Kill()
			t.Fatalf("child said %q, %v", tmp, err)
		}
		if _, err := os.Stat(tmp); err != nil {
			t.Fatalf("temporary file: %v", err)
		}
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: the child ended with %v, want killed by the signal", sig, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: left %v", sig, ents)
		}
	}
}
