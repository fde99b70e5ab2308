package metal

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

func init() {
	registry.Register(registry.Entry{
		Name:        "metal",
		Description: "Apple GPUs through Metal, loaded at run time; no kernels yet (issue 13)",
		Available:   available,
		Open: func(registry.Config) (ops.Backend, error) {
			return nil, available()
		},
	})
}

// available says why the backend cannot open here.
func available() error {
	if runtime.GOOS != "darwin" {
		return fmt.Errorf("not darwin: Metal needs macOS (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	return errors.New("the Metal backend has no kernels yet (issue 13)")
}
