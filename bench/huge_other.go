//go:build !linux

package bench

// adviseHuge does nothing where the kernel has no transparent huge pages
// to ask for (see huge_linux.go).
func adviseHuge([]byte) {}
