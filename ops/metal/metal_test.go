package metal

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops/registry"
)

// TestUnavailable checks that the backend is registered and says why it
// cannot open here.
func TestUnavailable(t *testing.T) {
	e, err := registry.Lookup("metal")
	if err != nil {
		t.Fatal(err)
	}
	want := "not darwin"
	if runtime.GOOS == "darwin" {
		want = "no kernels yet (issue 13)"
	}
	if why := e.Err(); why == nil || !strings.Contains(why.Error(), want) {
		t.Errorf("reason %v, want one saying %q", why, want)
	}
	b, err := registry.Open("metal", registry.Config{})
	var ue *registry.UnavailableError
	if b != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Errorf("Open: %v, %v; want an UnavailableError saying %q", b, err, want)
	}
}
