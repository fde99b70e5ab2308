package cuda

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// iqFullEnv set to 1 makes TestIQKernels run every GET_ROWS, MUL_MAT and
// MUL_MAT_ID case of every iqTypes type down every path (make
// cuda-iq-check); by default it runs a sample (see TestIQKernels), as the package's tests are
// near their time limit.
const iqFullEnv = "KERNBENCH_CUDA_IQ_FULL"

// iqCases returns the default GET_ROWS, MUL_MAT and MUL_MAT_ID cases of
// type t.
func iqCases(t quant.Type) []harness.Case {
	var out []harness.Case
	for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpGetRows, ops.OpMulMat, ops.OpMulMatID}}) {
		if c.Types[0] == t {
			out = append(out, c)
		}
	}
	return out
}

// TestIQKernels runs the formats of kernels/mul_mat_iq.cu against the reference:
// each case must be supported and pass. The paths: the default choice
// (the integer matrix-vector kernels up to 8 columns, the integer
// tensor-core tiles above), and every case through the integer tiles
// with tensor cores ("tiled mma": kb_mmq_*, kb_mmq128_*) and without
// ("tiled simt": kb_mmq_dp4a_*; "tiled mma" takes the 128-row tile for
// every second type, and every type with $KERNBENCH_CUDA_IQ_FULL=1).
// harness's TestBackends runs
// every default case on the default path already, so by default type i
// runs path i%3 on every fourth of its cases (from the (i%4)th); with
// $KERNBENCH_CUDA_IQ_FULL=1 every type runs every case down every path.
func TestIQKernels(t *testing.T) {
	b := emulated(t)
	full := os.Getenv(iqFullEnv) == "1"
	paths := []struct {
		name string
		mmv  int64
		mma  bool
	}{{"default", mmvMaxCols, true}, {"tiled mma", 0, true}, {"tiled simt", 0, false}}
	for ti, typ := range iqTypes {
		cases := iqCases(typ)
		if len(cases) == 0 {
			t.Errorf("%v: no cases", typ)
		}
		for pi, p := range paths {
			if !full && ti%3 != pi {
				continue
			}
			// The tensor-core tiles: odd types take the 128-row tile
			// (kb_mmq128_*), which the cases' small grids never pick;
			// with $KERNBENCH_CUDA_IQ_FULL=1 every type takes both.
			tiles := []int{tileAuto}
			if p.name == "tiled mma" {
				switch {
				case full:
					tiles = []int{tileAuto, tileBig}
				case ti%2 == 1:
					tiles = []int{tileBig}
				}
			}
			for _, tile := range tiles {
				name := typ.String() + "/" + p.name
				if tile == tileBig {
					name += "/128"
				}
				t.Run(name, func(t *testing.T) {
					withPaths(p.mmv, p.mma, func() {
						withTile(b, tile, func() {
							for ci, c := range cases {
								if !full && ci%4 != ti%4 {
									continue
								}
								r := harness.Run(b, c)
								if !r.Passed() || r.Unsupported() {
									t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
								}
							}
						})
					})
				})
			}
		}
	}
}

// TestIQTypesSupported: the backend takes the formats of kernels/mul_mat_iq.cu
// for GET_ROWS, MUL_MAT and MUL_MAT_ID (whose cases TestIQKernels runs),
// and every one of them has kernels: iqTypes is quants_iq.cuh's list.
func TestIQTypesSupported(t *testing.T) {
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	src := string(srcs["quants_iq.cuh"])
	for _, typ := range quant.Types() {
		in := slices.Contains(iqTypes, typ)
		x := "X(" + typ.String() + ", KB_" + strings.ToUpper(typ.String()) + ")"
		if has := strings.Contains(src, x); has != in {
			t.Errorf("%v: in iqTypes %v, in KB_FOR_IQ_TYPES %v", typ, in, has)
		}
		if in && !isWeightType(typ) {
			t.Errorf("%v: the supports checks refuse it", typ)
		}
	}
}
