//go:build unix && !linux

package cpu

// adviseHuge does nothing where there is no transparent huge page advice.
func adviseHuge([]byte) {}
