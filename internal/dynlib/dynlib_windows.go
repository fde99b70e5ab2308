//go:build windows

package dynlib

import "syscall"

// open is LoadLibrary (scope has no meaning on Windows).
func open(path string, _ Scope) (uintptr, error) {
	h, err := syscall.LoadLibrary(path)
	return uintptr(h), err
}

// sym is GetProcAddress.
func sym(h uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(h), name)
}
