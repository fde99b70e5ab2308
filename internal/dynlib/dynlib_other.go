//go:build !unix && !windows

package dynlib

import (
	"errors"
	"runtime"
)

// errNoLoader is every load's error where the platform has no loader
// this package knows.
var errNoLoader = errors.New("no dynamic loader on " + runtime.GOOS)

func open(string, Scope) (uintptr, error) { return 0, errNoLoader }

func sym(uintptr, string) (uintptr, error) { return 0, errNoLoader }
