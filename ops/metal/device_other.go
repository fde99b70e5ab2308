//go:build !darwin

package metal

import (
	"fmt"
	"runtime"
)

// gpuAvailable says why there is no Metal GPU here: Metal is macOS's.
func gpuAvailable() error {
	return fmt.Errorf("not darwin: Metal needs macOS (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
}

func openGPU() (device, error) { return nil, gpuAvailable() }
