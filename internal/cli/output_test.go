package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "model.gguf")
	if err := os.WriteFile(in, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "link.gguf")
	hard := filepath.Join(dir, "hard.gguf")
	os.Symlink(in, sym)
	os.Link(in, hard)
	inputs := []Input{{Flag: "m", Path: in}, {Flag: "f", Path: filepath.Join(dir, "missing.txt")}}
	for _, tc := range []struct {
		outs []Output
		flag string
		want string
	}{
		{[]Output{{"o", in}}, "o", "is the input " + in + " (-m)"},
		{[]Output{{"o", filepath.Join(dir, ".", "model.gguf")}}, "o", "is the input"},
		{[]Output{{"o", sym}}, "o", "is the input"},
		{[]Output{{"o", hard}}, "o", "is the input"},
		{[]Output{{"o", ""}}, "o", "no output file"},
		{[]Output{{"o", dir}}, "o", "is a folder"},
		{[]Output{{"o", filepath.Join(dir, "no", "x.json")}}, "o", "does not exist"},
		{[]Output{{"a", filepath.Join(dir, "x")}, {"b", filepath.Join(dir, "x")}}, "b", "also the output of -a"},
	} {
		err := CheckOutputs(inputs, tc.outs...)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Flag != tc.flag || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want a usage error for -%s with %q", tc.outs, err, tc.flag, tc.want)
		}
	}
	if err := CheckOutputs(inputs, Output{"o", filepath.Join(dir, "new.gguf")}, Output{"p", filepath.Join(dir, "x")}); err != nil {
		t.Errorf("good outputs: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("the checks left files: %v", ents)
	}
	if err := CheckFolder("out", filepath.Join(dir, "new")); err != nil {
		t.Errorf("new folder: %v", err)
	}
	if err := CheckFolder("out", filepath.Join(dir, "no", "new")); err != nil {
		t.Errorf("new folders: %v", err)
	}
	if err := CheckFolder("out", in); err == nil {
		t.Error("a file as folder: no error")
	}
	if err := CheckFolder("out", filepath.Join(in, "sub")); err == nil {
		t.Error("a folder in a file: no error")
	}
}

func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	os.WriteFile(path, []byte("old"), 0o644)

	f, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "new")
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("before commit: %q", b)
	}
	f.Abort()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after abort: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("abort left %v", ents)
	}

	f, err = CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no effect after Commit
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after commit: %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}

	err = WriteAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("boom")
	})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("WriteAtomic: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after a failed write: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a failed write left %v", ents)
	}
	pending.Lock()
	n, ch := len(pending.files), pending.ch
	pending.Unlock()
	if n != 0 || ch != nil {
		t.Errorf("%d files still tracked, signals held: %v", n, ch != nil)
	}
}

func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "a.json")
	os.WriteFile(taken, []byte("first"), 0o644)
	f, err := CreateAtomic(taken)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "second")
	if err := f.CommitNew(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CommitNew onto a taken path: %v", err)
	}
	if b, _ := os.ReadFile(taken); string(b) != "first" {
		t.Errorf("the taken file is now %q", b)
	}
	other := filepath.Join(dir, "a-2.json")
	f.SetPath(other)
	if err := f.CommitNew(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(other); string(b) != "second" {
		t.Errorf("%q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left %v", ents)
	}
}
