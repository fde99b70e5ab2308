//go:build unix

package dynlib

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// open is dlopen with RTLD_NOW on one OS thread, so that the loader's
// message, which dlerror keeps per thread, is this call's.
func open(path string, scope Scope) (uintptr, error) {
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if scope == Global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}

// sym is dlsym, on one OS thread for the same reason as open.
func sym(h uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(h, name)
}
