//go:build unix

package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The faults of issue 21: external programs that hang, builds that are
// interrupted, a damaged emulator cache.

// runEnv is runFor with env added to the command's environment.
func runEnv(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(cx, filepath.Join(commands(t), name), args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: o.String(), stderr: e.String(), state: cmd.ProcessState, took: time.Since(start)}
	if cmd.ProcessState == nil {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	r.code = cmd.ProcessState.ExitCode()
	return r
}

// waitPID waits for a program to write its process id to path and
// returns it.
func waitPID(t *testing.T, path string, limit time.Duration) int {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return pid
		}
	}
	t.Fatalf("no process id in %s after %v", path, limit)
	return 0
}

// groupGone reports whether no live process is left in process group
// pgid, waiting a little for the kernel to deliver the kills. Where /proc
// lists processes, a zombie (killed, not yet reaped by init) counts as
// gone.
func groupGone(pgid int) bool {
	for i := 0; i < 100; i++ {
		if !groupAlive(pgid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// hungGGMLTree lays out a ggml checkout whose test-backend-ops writes its
// process id to pidFile and then waits on a child that never ends.
func hungGGMLTree(t *testing.T, pidFile string) string {
	t.Helper()
	root := t.TempDir()
	header := "enum ggml_op {\n\tGGML_OP_NONE = 0,\n\tGGML_OP_RMS_NORM = 25,\n\tGGML_OP_COUNT,\n};\n" +
		"enum ggml_unary_op { GGML_UNARY_OP_SILU = 10 };\nenum ggml_glu_op { GGML_GLU_OP_SWIGLU = 2 };\n"
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nsleep 1000\n"
	for path, text := range map[string]string{"include/ggml.h": header, "build/bin/test-backend-ops": script} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "build", "bin", "test-backend-ops")
}

// TestGGMLHung: a test-backend-ops that never answers is killed with its
// children after -point-timeout, and at once on SIGINT.
func TestGGMLHung(t *testing.T) {
	commands(t)
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid")
	bin := hungGGMLTree(t, pidFile)
	args := []string{"ggml", "-ggml", bin, "-op", "rms_norm", "-k", "256", "-n", "1", "-rounds", "1", "-time", "2ms", "-roofline", "off", "-out", work}

	t.Run("timeout", func(t *testing.T) {
		os.Remove(pidFile)
		r := runFor(t, time.Minute, work, "opbench", append(args, "-point-timeout", "2s")...)
		if _, err := os.Stat(pidFile); err != nil {
			t.Fatalf("test-backend-ops did not run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		pid := waitPID(t, pidFile, time.Second)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "time limit of 2s") {
			t.Errorf("exit %d, want 1 and the time limit named\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if r.took > 30*time.Second {
			t.Errorf("took %v with a 2s limit per point", r.took)
		}
		if !groupGone(pid) {
			t.Errorf("test-backend-ops' process group %d is still alive", pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		os.Remove(pidFile)
		cmd := exec.Command(filepath.Join(commands(t), "opbench"), args...)
		cmd.Dir = work
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := waitPID(t, pidFile, time.Minute)
		start := time.Now()
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("opbench ggml still running 20s after SIGINT")
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("opbench ggml took %v to stop after SIGINT", took)
		}
		if !strings.Contains(e.String(), "interrupted") {
			t.Errorf("stderr does not say it was interrupted:\n%s", e.String())
		}
		if !groupGone(pid) {
			t.Errorf("test-backend-ops' process group %d is still alive after SIGINT", pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
}

// fakeCXX writes a stand-in for g++: it answers --version as GCC, and
// otherwise writes its process id to pidFile and hangs on a child (or,
// with FAKE_CXX_FAIL set, fails at once).
func fakeCXX(t *testing.T, dir, pidFile string) string {
	t.Helper()
	p := filepath.Join(dir, "fake-g++")
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = --version ]; then echo 'g++ (fake) 13.2.0'; exit 0; fi\n" +
		"if [ -n \"$FAKE_CXX_FAIL\" ]; then echo 'fake-g++: refused' >&2; exit 1; fi\n" +
		"echo $$ > " + pidFile + "\nsleep 1000\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// tmpLeft returns the temporary build folders left in a cache.
func tmpLeft(t *testing.T, cache string) []string {
	t.Helper()
	ents, _ := os.ReadDir(cache)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSIMTBuildInterrupted: a signal during the emulator's first build
// kills the compilers and leaves no temporary folder; a compiler past its
// time limit is killed; the build environment is checked.
func TestSIMTBuildInterrupted(t *testing.T) {
	commands(t)
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid")
	cxx := fakeCXX(t, work, pidFile)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		os.Remove(pidFile)
		cache := filepath.Join(work, "cache-"+sig.String())
		cmd := exec.Command(filepath.Join(commands(t), "opbench"), "backends")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "KERNBENCH_CXX="+cxx, "KERNBENCH_SIMT_CACHE="+cache)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := waitPID(t, pidFile, time.Minute)
		if len(tmpLeft(t, cache)) == 0 {
			t.Errorf("%v: no temporary build folder while the compiler runs", sig)
		}
		cmd.Process.Signal(sig)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%v: opbench backends still running 20s after the signal", sig)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: ended with %v, want killed by the signal", sig, cmd.ProcessState)
		}
		if !groupGone(pid) {
			t.Errorf("%v: the compiler's process group %d is still alive", sig, pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		if left := tmpLeft(t, cache); len(left) > 0 {
			t.Errorf("%v: left %v in the cache", sig, left)
		}
	}

	t.Run("time limit", func(t *testing.T) {
		os.Remove(pidFile)
		cache := filepath.Join(work, "cache-timeout")
		r := runEnv(t, time.Minute, work, []string{"KERNBENCH_CXX=" + cxx, "KERNBENCH_SIMT_CACHE=" + cache, "KERNBENCH_SIMT_BUILD_TIMEOUT=1s"},
			"opbench", "validate", "-backend", "cuda-emu", "-op", "add")
		pid := waitPID(t, pidFile, time.Second)
		if r.code != 2 || !strings.Contains(r.stderr, "time limit of 1s") || !strings.Contains(r.stderr, "KERNBENCH_SIMT_BUILD_TIMEOUT") {
			t.Errorf("exit %d, want 2 and the time limit named\nstderr: %s", r.code, r.stderr)
		}
		if !groupGone(pid) {
			t.Errorf("the compiler's process group %d is still alive", pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		if left := tmpLeft(t, cache); len(left) > 0 {
			t.Errorf("left %v in the cache", left)
		}
	})

	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"unknown mode", []string{"KERNBENCH_SIMT_MODE=bogus"}, `unknown mode "bogus" (valid: checked, fast)`},
		{"bad time limit", []string{"KERNBENCH_SIMT_BUILD_TIMEOUT=soon", "FAKE_CXX_FAIL=1"}, `KERNBENCH_SIMT_BUILD_TIMEOUT="soon"`},
	} {
		env := append([]string{"KERNBENCH_CXX=" + cxx, "KERNBENCH_SIMT_CACHE=" + filepath.Join(work, "cache-env")}, c.env...)
		for _, backend := range []string{"cuda-emu", "metal-emu"} {
			r := runEnv(t, time.Minute, work, env, "opbench", "validate", "-backend", backend, "-op", "add")
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%s, -backend %s: exit %d, want 2 and %q\nstderr: %s", c.name, backend, r.code, c.want, r.stderr)
			}
		}
	}

	t.Run("no home", func(t *testing.T) {
		tmp := t.TempDir()
		env := []string{"KERNBENCH_CXX=" + cxx, "FAKE_CXX_FAIL=1", "KERNBENCH_SIMT_CACHE=", "HOME=", "XDG_CACHE_HOME=", "TMPDIR=" + tmp}
		r := runEnv(t, time.Minute, work, env, "opbench", "validate", "-backend", "cuda-emu", "-op", "add")
		if !strings.Contains(r.stderr, "fake-g++: refused") {
			t.Fatalf("the build did not run: exit %d\n%s", r.code, r.stderr)
		}
		cache := filepath.Join(tmp, fmt.Sprintf("kernbench-simt-%d", os.Getuid()))
		st, err := os.Stat(cache)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("the per-user cache %s: %v (mode %v), want a 0700 folder", cache, err, st.Mode().Perm())
		}
		if err := os.Chmod(cache, 0o777); err != nil {
			t.Fatal(err)
		}
		r = runEnv(t, time.Minute, work, env, "opbench", "validate", "-backend", "cuda-emu", "-op", "add")
		if r.code != 2 || !strings.Contains(r.stderr, "others can write to it") {
			t.Errorf("a world-writable cache folder: exit %d\n%s", r.code, r.stderr)
		}
	})
}

// TestSIMTCacheHeals: a relative cache path works from the folder it is
// relative to and leaves nothing else there; truncating or overwriting a
// library of the cache costs one rebuild and a notice, never a crash or a
// false kernel failure.
func TestSIMTCacheHeals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the emulator's runtime and a module three times")
	}
	if _, err := exec.LookPath("g++"); err != nil && os.Getenv("KERNBENCH_CXX") == "" {
		t.Skip("no g++: the emulator cannot build")
	}
	commands(t)
	work := t.TempDir()
	env := []string{"KERNBENCH_SIMT_CACHE=cache", "KERNBENCH_SIMT_MODE=fast"}
	validate := func(what string) result {
		t.Helper()
		r := runEnv(t, 10*time.Minute, work, env, "opbench", "validate", "-backend", "cuda-emu", "-op", "soft_max")
		if r.code != 0 || strings.Contains(r.stdout, "FAIL") {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
		}
		return r
	}
	validate("an empty relative cache")
	if ents, _ := os.ReadDir(work); len(ents) != 1 || ents[0].Name() != "cache" {
		t.Errorf("the working folder holds %v, want only the cache", ents)
	}
	find := func(pattern string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(work, "cache", pattern))
		if len(m) != 1 {
			t.Fatalf("%s in the cache: %v", pattern, m)
		}
		return m[0]
	}
	rt := find("rt-*/libkbsimt-*.so")
	mod := find("mod-*/module.so")
	for _, c := range []struct {
		name   string
		damage func() error
		entry  string
	}{
		{"truncated runtime", func() error { return os.Truncate(rt, 4096) }, filepath.Base(filepath.Dir(rt))},
		{"module overwritten", func() error {
			st, err := os.Stat(mod)
			if err != nil {
				return err
			}
			return os.WriteFile(mod, bytes.Repeat([]byte{0x5a}, int(st.Size())), 0o755)
		}, filepath.Base(filepath.Dir(mod))},
	} {
		if err := c.damage(); err != nil {
			t.Fatal(err)
		}
		r := validate(c.name)
		if strings.Count(r.stderr, "is damaged") != 1 || !strings.Contains(r.stderr, c.entry) || !strings.Contains(r.stderr, "rebuilding") {
			t.Errorf("%s: stderr does not say once that %s was damaged and rebuilt:\n%s", c.name, c.entry, r.stderr)
		}
		if r := validate(c.name + ", again"); strings.Contains(r.stderr, "damaged") {
			t.Errorf("%s: the rebuilt entry is damaged again:\n%s", c.name, r.stderr)
		}
	}
}

// TestKernelBuildFailureNamed: a kernel file the compiler refuses is
// reported once, as the backend's build failure with the compiler's
// message, not as a "FAIL: compute" of every case.
func TestKernelBuildFailureNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the emulator's runtime")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the emulator cannot build")
	}
	commands(t)
	work := t.TempDir()
	// The real compiler, but for the module step of any kernel file.
	cxx := filepath.Join(work, "g++-no-modules")
	script := "#!/bin/sh\nfor a in \"$@\"; do\n\tif [ \"$a\" = module.ii ]; then echo 'module.ii:1:1: error: refused by the test compiler' >&2; exit 1; fi\ndone\nexec " + gxx + " \"$@\"\n"
	if err := os.WriteFile(cxx, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"KERNBENCH_CXX=" + cxx, "KERNBENCH_SIMT_CACHE=" + filepath.Join(work, "cache")}
	r := runEnv(t, 10*time.Minute, work, env, "opbench", "validate", "-backend", "cuda-emu,metal-emu", "-op", "soft_max")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, be := range []string{"cuda-emu", "metal-emu"} {
		line := "opbench validate: " + be + ": "
		if n := strings.Count(r.stderr, line); n != 1 {
			t.Errorf("stderr names %s's failure %d times, want once:\n%s", be, n, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "refused by the test compiler"); n != 2 || !strings.Contains(r.stderr, "could not be built or loaded") {
		t.Errorf("stderr does not give the compiler's message once per backend:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "FAIL: compute") || !strings.Contains(r.stdout, "kernels not built or loaded") {
		t.Errorf("the cases' failures are reported as kernel results:\n%s", r.stdout)
	}
}
