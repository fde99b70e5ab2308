package shareddata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "shared", "testdata")
	deep := filepath.Join(dir, "repo", "pkg", "sub")
	for _, d := range []string{data, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "m.gguf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	p, err := Find("m.gguf")
	if err != nil || p != filepath.Join(data, "m.gguf") {
		t.Errorf("Find(m.gguf) = %q, %v", p, err)
	}
	if d := Dir(t); d != data+string(filepath.Separator) && d != data {
		t.Errorf("Dir = %q, want %q", d, data)
	}
	if _, err := Find("absent.gguf"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find(absent) error %v, want ErrNotFound", err)
	}
}

// TestShared finds the shared folder from the package's own directory, as
// every test that uses it does: it skips in a checkout without
// ../shared/testdata and fails there under KERNBENCH_STRICT=1, which is
// how CI proves the shared files were there.
func TestShared(t *testing.T) {
	p := Path(t, "SOURCES.md")
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
		t.Errorf("%s: %v, or empty", p, err)
	}
}
