package simt

import (
	"os"
	"path/filepath"
	"runtime"
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
	dir, err := cached("mod-stale-again", func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "done"), old, old)
	if _, err := cached("mod-stale-again", func(string) error { t.Fatal("rebuilt a cached entry"); return nil }); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, "done")); err != nil || time.Since(info.ModTime()) > time.Hour {
		t.Errorf("a cache hit did not mark the entry used: %v", err)
	}
}

func TestDefaultMode(t *testing.T) {
	t.Setenv("KERNBENCH_SIMT_MODE", "")
	if DefaultMode() != Checked {
		t.Errorf("default mode %v, want checked", DefaultMode())
	}
	t.Setenv("KERNBENCH_SIMT_MODE", "fast")
	if DefaultMode() != Fast {
		t.Errorf("KERNBENCH_SIMT_MODE=fast: %v", DefaultMode())
	}
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
