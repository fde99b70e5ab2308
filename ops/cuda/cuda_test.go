package cuda

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops/registry"
)

// TestUnavailable checks that the backend is registered and says why it
// cannot open here, whether or not the driver is present: it has no
// kernels yet.
func TestUnavailable(t *testing.T) {
	e, err := registry.Lookup("cuda")
	if err != nil {
		t.Fatal(err)
	}
	why := e.Err()
	if why == nil {
		t.Fatal("the cuda backend says it is available, but it has no kernels")
	}
	t.Logf("cuda: %v", why)
	switch {
	case runtime.GOOS != "linux":
		if !strings.HasPrefix(why.Error(), "not linux") {
			t.Errorf("off linux: %v", why)
		}
	case strings.HasPrefix(why.Error(), "no "+DriverLibrary+" found ("):
	case errors.Is(why, errNoKernels) && strings.HasPrefix(why.Error(), DriverLibrary+" found, but"):
	default:
		t.Errorf("reason %q says neither that the driver is missing nor that there are no kernels", why)
	}
	b, err := registry.Open("cuda", registry.Config{})
	var ue *registry.UnavailableError
	if b != nil || !errors.As(err, &ue) || ue.Target != "cuda" {
		t.Errorf("Open: %v, %v; want an UnavailableError", b, err)
	}
}
