package metal

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestMatVecRows checks that the host's rows per simdgroup of
// kb_mul_mv_<type> (mvTypeRows, which sizes the grid) are mv.h's
// kb_mv<T>::NR for every weight type the kernel is instantiated for:
// a grid sized for other rows would leave rows unwritten or written
// twice.
func TestMatVecRows(t *testing.T) {
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	mv := string(srcs["mv.h"])
	nr := map[string]int64{}
	for _, m := range regexp.MustCompile(`struct kb_mv<KB_(\w+)> \{\n\tenum \{ NR = (\d+)`).FindAllStringSubmatch(mv, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		nr[m[1]] = n
	}
	flt := regexp.MustCompile(`struct kb_mv_flt \{\n\tenum \{ NR = (\d+)`).FindStringSubmatch(mv)
	if flt == nil {
		t.Fatal("mv.h: no kb_mv_flt with its NR")
	}
	fn, _ := strconv.ParseInt(flt[1], 10, 64)
	for _, name := range regexp.MustCompile(`struct kb_mv<KB_(\w+)> : kb_mv_flt`).FindAllStringSubmatch(mv, -1) {
		nr[name[1]] = fn
	}
	// The formats of issue 26: kb_mv_dq's NR, for KB_FOR_NEW_WEIGHT_TYPES.
	dq := regexp.MustCompile(`struct kb_mv_dq \{\n\tenum \{ NR = (\d+)`).FindStringSubmatch(mv)
	if dq == nil || !regexp.MustCompile(`KB_FOR_NEW_WEIGHT_TYPES\(KB_MV_DQ\)`).MatchString(mv) {
		t.Fatal("mv.h: no kb_mv_dq with its NR for KB_FOR_NEW_WEIGHT_TYPES")
	}
	dn, _ := strconv.ParseInt(dq[1], 10, 64)
	quants := string(srcs["quants.h"])
	newTypes := quants[strings.Index(quants, "#define KB_FOR_NEW_WEIGHT_TYPES"):]
	for _, m := range regexp.MustCompile(`X\((\w+), KB_(\w+)\)`).FindAllStringSubmatch(newTypes, -1) {
		nr[m[2]] = dn
	}
	inst := regexp.MustCompile(`X\((\w+), KB_\w+\)`).FindAllStringSubmatch(string(srcs["quants.h"]), -1)
	if len(inst) == 0 {
		t.Fatal("quants.h: no KB_FOR_WEIGHT_TYPES entries")
	}
	for _, m := range inst {
		typ, err := quant.ParseType(m[1])
		if err != nil {
			t.Fatalf("KB_FOR_WEIGHT_TYPES names %q: %v", m[1], err)
		}
		key := strings.ToUpper(m[1])
		want, ok := nr[key]
		if !ok {
			t.Errorf("%v: mv.h has no kb_mv<KB_%s>", typ, key)
			continue
		}
		if got := mvTypeRows(typ); got != want {
			t.Errorf("%v: mvTypeRows %d, kb_mv<KB_%s>::NR %d", typ, got, key, want)
		}
	}
}
