package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

// errNoKernels is why the backend cannot open where the driver is present.
var errNoKernels = errors.New("the CUDA backend has no kernels yet (issue 12)")

// DriverLibrary is the NVIDIA driver library the backend loads.
const DriverLibrary = "libcuda.so.1"

func init() {
	registry.Register(registry.Entry{
		Name:        "cuda",
		Description: "NVIDIA GPUs through the CUDA driver API, loaded at run time; no kernels yet (issue 12)",
		Available:   available,
		Open: func(registry.Config) (ops.Backend, error) {
			if err := available(); err != nil {
				return nil, err
			}
			return nil, errNoKernels
		},
	})
}

// available says why the backend cannot open here; it looks for the
// driver once per process.
var available = sync.OnceValue(func() error {
	if err := findDriver(); err != nil {
		return err
	}
	return fmt.Errorf("%s found, but %w", DriverLibrary, errNoKernels)
})
