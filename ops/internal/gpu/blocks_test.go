package gpu

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// blockType is one entry of blocks.h's KB_BLOCK_TYPES.
type blockType struct {
	name                 string
	num, elements, bytes int64
}

var blockEntry = regexp.MustCompile(`X\((\w+), (\d+), (\d+), (\d+)\)`)

// blockTypes parses KB_BLOCK_TYPES out of blocks.h.
func blockTypes(t *testing.T, src []byte) []blockType {
	t.Helper()
	var out []blockType
	for _, m := range blockEntry.FindAllStringSubmatch(string(src), -1) {
		e := blockType{name: m[1]}
		for i, p := range []*int64{&e.num, &e.elements, &e.bytes} {
			v, err := strconv.ParseInt(m[i+2], 10, 64)
			if err != nil {
				t.Fatalf("blocks.h: %s: %v", m[0], err)
			}
			*p = v
		}
		out = append(out, e)
	}
	return out
}

// TestBlocksMatchQuant checks blocks.h's type numbers, elements per block
// and bytes per block against package quant's, for every type.
func TestBlocksMatchQuant(t *testing.T) {
	hs, err := SharedHeaders()
	if err != nil {
		t.Fatal(err)
	}
	src, ok := hs["blocks.h"]
	if !ok {
		t.Fatal("no blocks.h among the shared headers")
	}
	if err := checkBlocks(blockTypes(t, src)); err != nil {
		t.Error(err)
	}
}

// checkBlocks returns an error naming every entry that disagrees with
// package quant, and every quant type with no entry.
func checkBlocks(entries []blockType) error {
	var bad []string
	seen := map[quant.Type]bool{}
	for _, e := range entries {
		typ := quant.Type(e.num)
		if !typ.Valid() || !strings.EqualFold(typ.String(), e.name) {
			bad = append(bad, "KB_"+e.name+" = "+strconv.FormatInt(e.num, 10)+", but quant numbers that type "+typ.String())
			continue
		}
		seen[typ] = true
		if typ.BlockSize() != e.elements || typ.TypeSize() != e.bytes {
			bad = append(bad, "KB_"+e.name+": "+strconv.FormatInt(e.elements, 10)+" elements in "+strconv.FormatInt(e.bytes, 10)+
				" bytes, quant says "+strconv.FormatInt(typ.BlockSize(), 10)+" in "+strconv.FormatInt(typ.TypeSize(), 10))
		}
	}
	for _, typ := range quant.Types() {
		if !seen[typ] {
			bad = append(bad, "no entry for "+typ.String())
		}
	}
	if len(bad) > 0 {
		return &blocksError{bad}
	}
	return nil
}

type blocksError struct{ bad []string }

func (e *blocksError) Error() string {
	return "blocks.h disagrees with package quant: " + strings.Join(e.bad, "; ")
}

// TestTablesMatchQuant checks blocks.h's code tables against quant's.
func TestTablesMatchQuant(t *testing.T) {
	hs, err := SharedHeaders()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want [16]int8
	}{{"KB_IQ4NL_VALUES", quant.IQ4NLValues}, {"KB_MXFP4_VALUES", quant.MXFP4Values}} {
		m := regexp.MustCompile(`#define ` + tc.name + ` (.*)`).FindSubmatch(hs["blocks.h"])
		if m == nil {
			t.Errorf("blocks.h defines no %s", tc.name)
			continue
		}
		var got []int8
		for _, f := range strings.Split(string(m[1]), ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 8)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, int8(v))
		}
		if len(got) != 16 || [16]int8(got) != tc.want {
			t.Errorf("%s = %v, quant says %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckBlocksFails checks that a wrong number or size in blocks.h
// would fail TestBlocksMatchQuant.
func TestCheckBlocksFails(t *testing.T) {
	hs, err := SharedHeaders()
	if err != nil {
		t.Fatal(err)
	}
	good := blockTypes(t, hs["blocks.h"])
	if len(good) == 0 {
		t.Fatal("blocks.h lists no type")
	}
	for i := range good {
		for _, change := range []func(e *blockType){
			func(e *blockType) { e.num++ },
			func(e *blockType) { e.elements *= 2 },
			func(e *blockType) { e.bytes++ },
		} {
			bad := append([]blockType(nil), good...)
			change(&bad[i])
			if checkBlocks(bad) == nil {
				t.Errorf("a changed %+v passes", bad[i])
			}
		}
	}
	if checkBlocks(good[1:]) == nil {
		t.Errorf("blocks.h without %s passes", good[0].name)
	}
}

// typeNumber is a type number written out in a dialect's header.
var typeNumber = regexp.MustCompile(`\bKB_(F16|F32|BF16|I8|I16|I32|Q\d_[0-9K])\s*=\s*\d+`)

// TestNoOtherTypeNumbers checks that no kernel source of either backend
// writes out type numbers of its own: they come from blocks.h.
func TestNoOtherTypeNumbers(t *testing.T) {
	for _, dir := range []string{"../../cuda/kernels", "../../metal/kernels"} {
		names, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no kernel sources in %s", dir)
		}
		for _, p := range names {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if m := typeNumber.Find(b); m != nil {
				t.Errorf("%s writes out a type number (%s); blocks.h holds them", p, m)
			}
		}
	}
}
