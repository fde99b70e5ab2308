package cuda

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// findDriver loads the driver library to see that it is there, and lets it
// go again.
func findDriver() error {
	h, err := purego.Dlopen(DriverLibrary, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return fmt.Errorf("no %s found (%v)", DriverLibrary, err)
	}
	purego.Dlclose(h)
	return nil
}
