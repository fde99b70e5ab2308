//go:build amd64 && !purego

package cpu

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/dot"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

func init() {
	if hasAVX2() {
		fma32Ref = dot.FMA32AVX2
	}
}

// hasAVX2 reports whether the host runs the avx2 tier.
func hasAVX2() bool { return simdtest.HasAVX2() }

// needAVX2 is simdtest.NeedAVX2: it skips t on hosts without the avx2
// tier (fails it under KERNBENCH_STRICT=1 where the OS lists the tier).
func needAVX2(t testing.TB) {
	t.Helper()
	simdtest.NeedAVX2(t)
}

// fillRow is simdtest.FillRow.
func fillRow(t quant.Type, n, off int, data []byte) []byte { return simdtest.FillRow(t, n, off, data) }

// TestSIMDTierDetection checks the SIMD tiers against cpuid (the
// features each needs, as simdtest reads them), that the default is the
// fastest supported one with that tier's kernel set, and that a tier the
// CPU lacks can be named but not chosen, by Options.Tier or
// $KERNBENCH_CPU.
func TestSIMDTierDetection(t *testing.T) {
	has := map[string]bool{"generic": true, "avx2": hasAVX2(), "avx512": simdtest.HasAVX512(), "vnni": simdtest.HasVNNI()}
	sets := map[string]*kernelSet{"generic": genericKernels, "avx2": avx2Kernels, "avx512": avx512Kernels, "vnni": vnniKernels}
	fastest := ""
	for _, tr := range Tiers() {
		want, known := has[tr.Name]
		if !known {
			t.Errorf("tier %s: no expectation here", tr.Name)
		}
		if tr.Supported != want {
			t.Errorf("%s supported = %v, cpuid says %v (%s)", tr.Name, tr.Supported, want, tr.Reason)
		}
		if tr.Supported {
			fastest = tr.Name
			continue
		}
		_, err := NewWithOptions(Options{Tier: tr.Name})
		if err == nil || !strings.Contains(err.Error(), tr.Reason) {
			t.Errorf("forcing unsupported tier %s: err %v, want the reason %q", tr.Name, err, tr.Reason)
		}
		t.Setenv(EnvTier, tr.Name)
		if b, err := New(1); err == nil {
			t.Errorf("%s=%s on a CPU without it gave tier %s, want an error", EnvTier, tr.Name, b.Tier().Name)
			b.Close()
		}
	}
	t.Setenv(EnvTier, "")
	b := newTestBackend(t, 1)
	if b.Tier().Name != fastest {
		t.Errorf("default tier %s, want %s (the fastest supported here)", b.Tier().Name, fastest)
	}
	// A tier without some of its kernels (Tier.Without: a CPU, or
	// KERNBENCH_CPU_DISABLE, without a feature they need) runs a copy
	// of its set without them.
	if without := b.Tier().Without; b.kern.name != fastest || without == "" && b.kern != sets[fastest] {
		t.Errorf("backend does not use the %s kernel set (without: %q)", fastest, without)
	}
	for name, ks := range sets {
		if ks.name != name {
			t.Errorf("kernel set %s calls itself %s", name, ks.name)
		}
	}
}

func mustRowSize(t *testing.T, typ quant.Type, n int) int64 { return simdtest.MustRowSize(t, typ, n) }
