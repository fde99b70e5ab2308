package metal

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// newTypesAllEnv, set to 1, makes TestNewTypes run every case of the
// matrix for the formats of issue 26 (make metal-newtypes), not a sample.
const newTypesAllEnv = "KERNBENCH_METAL_NEWTYPES_ALL"

// tiledCase reports whether c is a MUL_MAT case with more activation
// columns than the matrix-vector kernel takes, so that the tiled product
// computes it.
func tiledCase(c harness.Case) bool {
	if c.Op != ops.OpMulMat {
		return false
	}
	m := regexp.MustCompile(`\bn=(\d+)`).FindStringSubmatch(c.Name)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	return n > mvMaxCols
}

// newTypeSample returns the sample of a type's cases that TestNewTypes
// runs by default: the first case of each op, and the first tiled
// MUL_MAT case.
func newTypeSample(cases []harness.Case) []harness.Case {
	var out []harness.Case
	seen := map[ops.Op]bool{}
	tiled := false
	for _, c := range cases {
		keep := !seen[c.Op]
		seen[c.Op] = true
		if !tiled && tiledCase(c) {
			keep, tiled = true, true
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
// Supports may refuse only those the matrix expects refused (rows that
// are no whole number of blocks).
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
			ran, tiled := map[ops.Op]int{}, 0
			for _, c := range cases {
				if tiledCase(c) {
					tiled++
				}
				r := harness.Run(b, c)
				if !r.Passed() {
					t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
				ran[c.Op]++
			}
			ops26 := []ops.Op{ops.OpGetRows, ops.OpMulMat}
			if slices.Contains(cpyQuantTypes, typ) {
				ops26 = append(ops26, ops.OpCpy)
			}
			for _, op := range ops26 {
				if ran[op] == 0 {
					t.Errorf("no %v case ran", op)
				}
			}
			if tiled == 0 {
				t.Error("no MUL_MAT case for the tiled product ran")
			}
		})
	}
}
