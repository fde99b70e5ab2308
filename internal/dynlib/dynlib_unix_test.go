//go:build unix

package dynlib

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libc is the C library's name as the platform's loader finds it.
func libc(t *testing.T) string {
	switch runtime.GOOS {
	case "linux":
		return "libc.so.6"
	case "darwin":
		return "/usr/lib/libSystem.B.dylib"
	}
	t.Skipf("no known C library name on %s", runtime.GOOS)
	return ""
}

// TestOpenSym loads the C library in both scopes, finds strlen and calls
// it: the handle and the address are the library's, not just non-zero.
func TestOpenSym(t *testing.T) {
	for _, scope := range []Scope{Local, Global} {
		h, err := Open(libc(t), scope)
		if err != nil {
			t.Fatalf("scope %d: %v", scope, err)
		}
		p, err := Sym(h, "strlen")
		if err != nil {
			t.Fatalf("scope %d: %v", scope, err)
		}
		s := []byte("kernbench\x00")
		n, _, _ := purego.SyscallN(p, uintptr(unsafe.Pointer(&s[0])))
		if n != 9 {
			t.Fatalf("scope %d: strlen(\"kernbench\") = %d through the symbol, want 9", scope, n)
		}
	}
}

// TestErrors checks that a library that is missing or not a library, and
// a symbol a library lacks, are errors naming what was asked for.
func TestErrors(t *testing.T) {
	notLib := filepath.Join(t.TempDir(), "not-a-library.so")
	if err := os.WriteFile(notLib, []byte("plain text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(t.TempDir(), "missing.so"), notLib} {
		if _, err := Open(path, Local); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%s) = %v, want an error naming it", path, err)
		}
	}
	h, err := Open(libc(t), Local)
	if err != nil {
		t.Fatal(err)
	}
	const name = "kernbench_no_such_symbol"
	if _, err := Sym(h, name); err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("Sym(%s) = %v, want an error naming it", name, err)
	}
}
