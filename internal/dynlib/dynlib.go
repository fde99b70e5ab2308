// Package dynlib opens shared libraries at run time and finds their
// symbols, for the packages that call a library through purego: the CUDA
// driver, NVRTC and cuBLAS (ops/cuda) and the emulator's runtime (simt).
// On unix it is dlopen and dlsym; on Windows, LoadLibrary and
// GetProcAddress; elsewhere every Open is an error that says so. Keeping
// the loader here lets those packages build for every target, so a
// command built for Windows runs its CPU paths and reports a missing
// driver as an error instead of not compiling.
package dynlib

import (
	"fmt"
	"strings"
)

// Scope says whether a library's symbols may resolve the symbols of
// libraries loaded after it (dlopen's RTLD_GLOBAL) or stay its own
// (RTLD_LOCAL). Windows has no shared namespace; there it changes
// nothing.
type Scope int

const (
	// Local keeps the library's symbols to itself.
	Local Scope = iota
	// Global makes the library's symbols available to later loads (the
	// way NVRTC finds its builtins and cuBLAS its cuBLASLt).
	Global
)

// A LoadError is the loader's refusal of a library.
type LoadError struct {
	Path string // the library asked for
	Err  error  // what the loader said
}

// Error is the loader's message, with the library's path in front where
// the message does not name it (dlerror's does).
func (e *LoadError) Error() string {
	if msg := e.Err.Error(); strings.Contains(msg, e.Path) {
		return msg
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns the loader's error.
func (e *LoadError) Unwrap() error { return e.Err }

// Open loads the library at path (a file name alone is looked up the
// platform's way) and returns its handle. Its error is a *LoadError.
func Open(path string, scope Scope) (uintptr, error) {
	h, err := open(path, scope)
	if err != nil {
		return 0, &LoadError{Path: path, Err: err}
	}
	return h, nil
}

// Sym returns the address of the symbol name in the library h (from
// Open). Its error names the symbol: the loader's message where it does
// (dlerror's), else the name in front of it.
func Sym(h uintptr, name string) (uintptr, error) {
	p, err := sym(h, name)
	if err != nil && !strings.Contains(err.Error(), name) {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return p, err
}
