package simt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPruneCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("KERNBENCH_SIMT_CACHE", root)
	old := time.Now().Add(-2 * cacheMaxAge)
	mk := func(name string, done bool, mtime time.Time) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if done {
			if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(filepath.Join(dir, "done"), mtime, mtime)
		}
		os.Chtimes(dir, mtime, mtime)
	}
	mk("mod-stale", true, old)
	mk("mod-fresh", true, time.Now())
	mk("tmp-killed", false, time.Now().Add(-2*tmpMaxAge))
	mk("tmp-building", false, time.Now())
	if err := pruneCache(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"mod-stale": false, "mod-fresh": true, "tmp-killed": false, "tmp-building": true} {
		_, err := os.Stat(filepath.Join(root, name))
		if got := err == nil; got != want {
			t.Errorf("%s kept %v, want %v", name, got, want)
		}
	}
	// A cached entry in use is marked fresh again.
	dir, err := cached("mod-stale-again", func(_ context.Context, dir string) error {
		return os.WriteFile(filepath.Join(dir, "module.so"), []byte("lib"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "done"), old, old)
	verified.Clear()
	if _, err := cached("mod-stale-again", func(context.Context, string) error { t.Fatal("rebuilt a cached entry"); return nil }); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, "done")); err != nil || time.Since(info.ModTime()) > time.Hour {
		t.Errorf("a cache hit did not mark the entry used: %v", err)
	}
}

func TestDefaultMode(t *testing.T) {
	for _, c := range []struct {
		env  string
		want Mode
		err  string
	}{
		{"", Checked, ""},
		{"checked", Checked, ""},
		{"fast", Fast, ""},
		{"FAST", Fast, ""},
		{"bogus", Checked, `unknown mode "bogus" (valid: checked, fast)`},
		{"fast ", Checked, "valid: checked, fast"},
	} {
		t.Setenv("KERNBENCH_SIMT_MODE", c.env)
		m, err := DefaultMode()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "KERNBENCH_SIMT_MODE") {
				t.Errorf("KERNBENCH_SIMT_MODE=%q: error %v, want one saying %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || m != c.want {
			t.Errorf("KERNBENCH_SIMT_MODE=%q: %v, %v; want %v", c.env, m, err, c.want)
		}
	}
}

// Every kind of damage to a cached entry costs one rebuild and a one-line
// notice.
func TestCacheRebuildsDamaged(t *testing.T) {
	lib := bytes.Repeat([]byte("\x7fELF library "), 1000)
	for _, c := range []struct {
		name   string
		damage func(dir string) error
	}{
		{"truncated", func(dir string) error { return os.Truncate(filepath.Join(dir, "lib.so"), 100) }},
		{"empty", func(dir string) error { return os.Truncate(filepath.Join(dir, "lib.so"), 0) }},
		{"overwritten", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "lib.so"), bytes.Repeat([]byte{0xAA}, len(lib)), 0o644)
		}},
		{"one byte changed", func(dir string) error {
			b := bytes.Clone(lib)
			b[len(b)/2] ^= 1
			return os.WriteFile(filepath.Join(dir, "lib.so"), b, 0o644)
		}},
		{"removed", func(dir string) error { return os.Remove(filepath.Join(dir, "meta.json")) }},
		{"marker without manifest", func(dir string) error { return os.WriteFile(filepath.Join(dir, "done"), nil, 0o644) }},
		{"garbage manifest", func(dir string) error { return os.WriteFile(filepath.Join(dir, "done"), []byte("{\x00"), 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KERNBENCH_SIMT_CACHE", t.TempDir())
			var note bytes.Buffer
			notices = &note
			defer func() { notices = os.Stderr }()
			builds := 0
			build := func(_ context.Context, dir string) error {
				builds++
				if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"kernels":[]}`), 0o644); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(dir, "lib.so"), lib, 0o755)
			}
			dir, err := cached("mod-x", build)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.damage(dir); err != nil {
				t.Fatal(err)
			}
			verified.Clear() // as a new process
			if _, err := cached("mod-x", build); err != nil {
				t.Fatal(err)
			}
			if builds != 2 {
				t.Errorf("%d builds, want 2 (one rebuild)", builds)
			}
			got, err := os.ReadFile(filepath.Join(dir, "lib.so"))
			if err != nil || !bytes.Equal(got, lib) {
				t.Errorf("the rebuilt library is not what was built (%v)", err)
			}
			if n := strings.Count(note.String(), "\n"); n != 1 || !strings.Contains(note.String(), "is damaged") || !strings.Contains(note.String(), "rebuilding") {
				t.Errorf("notice %q, want one line saying the entry is damaged and rebuilt", note.String())
			}
			verified.Clear()
			note.Reset()
			if _, err := cached("mod-x", build); err != nil || builds != 2 || note.Len() != 0 {
				t.Errorf("an intact entry: %d builds, notice %q, error %v", builds, note.String(), err)
			}
			if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
				t.Errorf("the cache holds %d entries, want 1 (nothing of the damaged one left)", len(ents))
			}
		})
	}
}

func TestCacheRoot(t *testing.T) {
	t.Run("relative", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("KERNBENCH_SIMT_CACHE", "rel/cache")
		root, err := cacheRoot()
		if err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		if !filepath.IsAbs(root) || root != filepath.Join(wd, "rel", "cache") {
			t.Errorf("root %q, want %q", root, filepath.Join(wd, "rel", "cache"))
		}
	})
	t.Run("no home", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("KERNBENCH_SIMT_CACHE", "")
		t.Setenv("HOME", "")
		t.Setenv("XDG_CACHE_HOME", "")
		t.Setenv("TMPDIR", tmp)
		root, err := cacheRoot()
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(tmp, fmt.Sprintf("kernbench-simt-%d", os.Getuid()))
		if root != want {
			t.Fatalf("root %q, want %q", root, want)
		}
		st, err := os.Stat(root)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("the per-user cache folder: %v, %v; want mode 0700", st.Mode(), err)
		}
		// One that others can write to is refused.
		if err := os.Chmod(root, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, err := cacheRoot(); err == nil || !strings.Contains(err.Error(), "others can write") {
			t.Errorf("a world-writable cache folder: error %v", err)
		}
		// So is one owned by another user (when the test may give it away).
		if os.Getuid() == 0 {
			if err := os.Chmod(root, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(root, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			if _, err := cacheRoot(); err == nil || !strings.Contains(err.Error(), "owned by user 4242") {
				t.Errorf("another user's cache folder: error %v", err)
			}
		}
	})
}

func TestBufferFreedByCollector(t *testing.T) {
	d := device(t)
	b, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	addr := uintptr(b.Addr())
	if d.buffer(addr) != b {
		t.Fatal("a live buffer is not found by its address")
	}
	b = nil
	for i := 0; i < 20 && d.liveBuffer(addr); i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if d.liveBuffer(addr) {
		t.Error("an unreachable buffer was not released")
	}
	c, _ := d.Alloc(16)
	if err := c.Free(); err != nil {
		t.Fatal(err)
	}
	if err := c.Free(); err == nil {
		t.Error("a second Free gave no error")
	}
}

// A damaged module library is rebuilt, whether its manifest catches the
// damage (before it is loaded) or the loader does.
func TestDamagedModuleRebuilt(t *testing.T) {
	d := device(t)
	var note bytes.Buffer
	notices = &note
	defer func() { notices = os.Stderr }()
	src := `extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }`
	// A define of its own gives the test a cache entry no other test uses.
	p := Program{Dialect: CUDA, Main: Source{Name: "twice.cu", Text: []byte(src)},
		Defines: []string{fmt.Sprintf("KBS_CACHE_TEST=%d", time.Now().UnixNano())}}
	image, err := d.ModuleImage(p, Fast)
	if err != nil {
		t.Fatal(err)
	}
	lib := strings.TrimSuffix(strings.TrimPrefix(string(image), imageMagic), "\x00")

	// Truncated: the manifest catches it.
	if err := os.Truncate(lib, 64); err != nil {
		t.Fatal(err)
	}
	verified.Clear()
	if _, err := d.ModuleImage(p, Fast); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(lib); err != nil || st.Size() <= 64 {
		t.Fatalf("the truncated library was not rebuilt: %v", err)
	}
	if !strings.Contains(note.String(), "module.so has 64 bytes") {
		t.Errorf("notice %q does not say what was wrong", note.String())
	}

	// Garbage the manifest vouches for: the loader refuses it, and Load
	// rebuilds it once.
	note.Reset()
	garbage := bytes.Repeat([]byte("not a library "), 100)
	if err := os.WriteFile(lib, garbage, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(lib)
	m, err := makeManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	delete(m.Files, "done")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "done"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	verified.Clear()
	mod, err := d.Load(p, Fast)
	if err != nil {
		t.Fatalf("Load of a module whose library the loader refuses: %v", err)
	}
	if _, err := mod.Kernel("twice"); err != nil {
		t.Error(err)
	}
	if !strings.Contains(note.String(), "rebuilding") || strings.Count(note.String(), "\n") != 1 {
		t.Errorf("notice %q, want one line", note.String())
	}
}
