package simdtest

import "testing"

// TestAVX2Detection holds cpuid's answer to the operating system's list
// of CPU flags where there is one: a tier the CPU has must not be
// detected as missing (its tests would skip), nor one it lacks as present
// (its kernels would fault).
func TestAVX2Detection(t *testing.T) {
	has, known := OSReportsAVX2()
	if !known {
		t.Skip("the OS lists no CPU flags here")
	}
	if has != HasAVX2() {
		t.Errorf("the OS lists the avx2 tier's features: %v; cpuid: %v", has, HasAVX2())
	}
	NeedAVX2(t)
}
