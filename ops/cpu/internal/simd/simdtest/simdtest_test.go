package simdtest

import (
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// TestAVX2Detection holds cpuid's answer to the operating system's list
// of CPU flags where there is one: a tier the CPU has must not be
// detected as missing (its tests would skip), nor one it lacks as present
// (its kernels would fault).
func TestAVX2Detection(t *testing.T) {
	if simd.Hidden() {
		t.Skipf("$%s hides CPU features on purpose", simd.EnvDisable)
	}
	has, known := OSReportsAVX2()
	if !known {
		t.Skip("the OS lists no CPU flags here")
	}
	if has != HasAVX2() {
		t.Errorf("the OS lists the avx2 tier's features: %v; cpuid: %v", has, HasAVX2())
	}
	NeedAVX2(t)
}

// TestAVX512Detection is TestAVX2Detection for the avx512 and vnni
// tiers' features.
func TestAVX512Detection(t *testing.T) {
	if simd.Hidden() {
		t.Skipf("$%s hides CPU features on purpose", simd.EnvDisable)
	}
	for _, c := range []struct {
		flags []string
		has   func() bool
	}{
		{[]string{"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl"}, HasAVX512},
		{[]string{"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"}, HasVNNI},
	} {
		has, known := OSReports(c.flags...)
		if !known {
			t.Skip("the OS lists no CPU flags here")
		}
		if has != c.has() {
			t.Errorf("the OS lists %v: %v; cpuid: %v", c.flags, has, c.has())
		}
	}
}
