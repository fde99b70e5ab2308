//go:build amd64 && !purego

package cpu

import (
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/gemv"
	"github.com/kernbench/kernbench/quant"
)

// vnniX8Tails are the vnni tier's x8 tails: the VNNI four-row kernels
// (equal to the AVX2 tails bit for bit).
var vnniX8Tails = map[quant.Type]gemvFunc{
	quant.Q4_0: gemv.SideQ4_0VNNI, quant.Q8_0: gemv.Q8_0VNNI,
	quant.Q6_K: gemv.Q6_KVNNI, quant.Q4_K: gemv.Q4_KVNNI,
}

// TestX8VNNITable checks that the vnni tier holds the VNNI x8 kernels of
// q4_0, q8_0, q6_K and q4_K with the avx2 entries' repacking and prep,
// the VNNI four-row kernels as tails, and that installing them left the avx2 and avx512 tiers' entries
// alone (the *x8Kernel values are shared until replaced).
func TestX8VNNITable(t *testing.T) {
	fn := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for wt, want := range map[quant.Type]gemv.X8Func{
		quant.Q4_0: gemv.X8Q4_0VNNI, quant.Q8_0: gemv.X8Q8_0VNNI,
		quant.Q6_K: gemv.X8Q6_KVNNI, quant.Q4_K: gemv.X8Q4_KVNNI,
	} {
		a, v := avx2Kernels.x8[wt], vnniKernels.x8[wt]
		if a == nil || v == nil || a == v {
			t.Fatalf("%v: avx2 entry %p, vnni entry %p", wt, a, v)
		}
		if fn(v.f) != fn(want) {
			t.Errorf("%v: the vnni tier's x8 kernel is not the VNNI one", wt)
		}
		if fn(a.f) == fn(want) || fn(avx512Kernels.x8[wt].f) == fn(want) {
			t.Errorf("%v: the VNNI kernel leaked into the avx2 or avx512 tier", wt)
		}
		if fn(v.tail) != fn(vnniX8Tails[wt]) || fn(a.tail) == fn(v.tail) || fn(avx512Kernels.x8[wt].tail) == fn(v.tail) {
			t.Errorf("%v: the vnni tier's x8 tail is not the VNNI four-row kernel, or it leaked", wt)
		}
		if fn(v.prep) != fn(a.prep) || fn(v.repack) != fn(a.repack) ||
			v.qk != a.qk || v.bs != a.bs || v.per != a.per {
			t.Errorf("%v: the vnni entry differs from avx2's beyond f and tail", wt)
		}
	}
}
