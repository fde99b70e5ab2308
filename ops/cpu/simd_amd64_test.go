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

// TestAVX2TierDetection checks the avx2 tier against cpuid and that a
// tier the CPU lacks can be named but not chosen, by Options.Tier or
// $KERNBENCH_CPU.
func TestAVX2TierDetection(t *testing.T) {
	for _, tr := range Tiers() {
		switch {
		case tr.Name == "avx2" && tr.Supported != hasAVX2():
			t.Errorf("avx2 supported = %v, cpuid says %v (%s)", tr.Supported, hasAVX2(), tr.Reason)
		case !tr.Supported:
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
	}
	if hasAVX2() {
		t.Setenv(EnvTier, "")
		b := newTestBackend(t, 1)
		if b.Tier().Name != "avx2" {
			t.Errorf("default tier %s, want avx2 (the fastest supported here)", b.Tier().Name)
		}
		if b.kern != avx2Kernels {
			t.Error("backend does not use the avx2 kernel set")
		}
	}
}

func mustRowSize(t *testing.T, typ quant.Type, n int) int64 { return simdtest.MustRowSize(t, typ, n) }
