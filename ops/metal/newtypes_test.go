package metal

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// newTypesAllEnv, set to 1, makes TestNewTypes run every case of the
// matrix for the formats of issue 26 (make metal-newtypes), not a sample.
const newTypesAllEnv = "KERNBENCH_METAL_NEWTYPES_ALL"

// newTypeSample returns the sample of cases of type typ that TestNewTypes
// runs by default: the first case of each op, and the first MUL_MAT case
// with more columns than the matrix-vector kernel takes (the tiled
// product).
func newTypeSample(cases []harness.Case) []harness.Case {
	cols := regexp.MustCompile(`\bn=(\d+)`)
	var out []harness.Case
	seen := map[ops.Op]bool{}
	tiled := false
	for _, c := range cases {
		keep := !seen[c.Op]
		seen[c.Op] = true
		if c.Op == ops.OpMulMat && !tiled {
			if m := cols.FindStringSubmatch(c.Name); m != nil {
				if n, _ := strconv.Atoi(m[1]); n > mvMaxCols {
					keep, tiled = true, true
				}
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// TestNewTypes runs the harness's cases of the formats of issue 26
// (GET_ROWS, MUL_MAT's matrix-vector and tiled kernels, MUL_MAT_ID) on
// metal-emu against the float64 reference: a sample per type by default,
// all of them with $KERNBENCH_METAL_NEWTYPES_ALL=1. Every case must pass:
// none may be refused.
func TestNewTypes(t *testing.T) {
	b := emulated(t)
	all := os.Getenv(newTypesAllEnv) == "1"
	for _, typ := range newWeightTypes {
		t.Run(typ.String(), func(t *testing.T) {
			cases := harness.Select(harness.Cases(), harness.Filter{Types: []quant.Type{typ}})
			if len(cases) == 0 {
				t.Fatal("the harness has no case of this type")
			}
			if !all {
				cases = newTypeSample(cases)
			}
			ran := map[ops.Op]int{}
			for _, c := range cases {
				r := harness.Run(b, c)
				if !r.Passed() {
					t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
				ran[c.Op]++
			}
			for _, op := range []ops.Op{ops.OpGetRows, ops.OpMulMat} {
				if ran[op] == 0 {
					t.Errorf("no %v case ran", op)
				}
			}
		})
	}
}
