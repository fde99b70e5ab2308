//go:build !linux

package cuda

import (
	"fmt"
	"runtime"
)

// findDriver says that the backend needs linux: it loads libcuda.so.1,
// which only the linux driver provides.
func findDriver() error {
	return fmt.Errorf("not linux: the CUDA backend loads the linux driver's %s (this is %s/%s)", DriverLibrary, runtime.GOOS, runtime.GOARCH)
}
