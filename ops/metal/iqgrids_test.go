package metal

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

var updateGrids = flag.Bool("update-iqgrids", false, "rewrite kernels/iqgrids.h from package quant's tables")

// iqGridTable is one of quant's codebook tables as iqgrids.h declares it.
type iqGridTable struct {
	name, ctype string
	words       []uint64
	digits      int // hex digits a word
}

// iqGridTables lists quant's IQ1, IQ2 and IQ3 tables in iqgrids.h's order.
func iqGridTables() []iqGridTable {
	u8 := func(v []uint8) []uint64 {
		out := make([]uint64, len(v))
		for i, x := range v {
			out[i] = uint64(x)
		}
		return out
	}
	u32 := func(v []uint32) []uint64 {
		out := make([]uint64, len(v))
		for i, x := range v {
			out[i] = uint64(x)
		}
		return out
	}
	return []iqGridTable{
		{"kb_ksigns_iq2xs", "uchar", u8(quant.KSignsIQ2XS[:]), 2},
		{"kb_iq2xxs_grid", "ulong", quant.IQ2XXSGrid[:], 16},
		{"kb_iq2xs_grid", "ulong", quant.IQ2XSGrid[:], 16},
		{"kb_iq2s_grid", "ulong", quant.IQ2SGrid[:], 16},
		{"kb_iq3xxs_grid", "uint", u32(quant.IQ3XXSGrid[:]), 8},
		{"kb_iq3s_grid", "uint", u32(quant.IQ3SGrid[:]), 8},
		{"kb_iq1s_grid", "ulong", quant.IQ1SGrid[:], 16},
	}
}

// iqGridsHeader renders kernels/iqgrids.h from quant's tables.
func iqGridsHeader() []byte {
	var b bytes.Buffer
	b.WriteString(`// iqgrids.h: the codebooks and sign table of the IQ1, IQ2 and IQ3
// formats (ggml's ksigns_iq2xs, iq2xxs_grid, ..., iq1s_grid), as package
// quant's iqtables_*.go hold them, element j of a grid entry in byte j.
// Written by go test ./ops/metal -run TestIQGridsHeader -update-iqgrids;
// the test checks it byte for byte against quant. DO NOT EDIT.
#pragma once
#include <metal_stdlib>
using namespace metal;
`)
	for _, t := range iqGridTables() {
		per := 8
		if t.digits == 2 {
			per = 16
		}
		fmt.Fprintf(&b, "\nconstant %s %s[%d] = {\n", t.ctype, t.name, len(t.words))
		for i, w := range t.words {
			if i%per == 0 {
				b.WriteString("\t")
			}
			fmt.Fprintf(&b, "0x%0*x,", t.digits, w)
			if i%per == per-1 || i == len(t.words)-1 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString("};\n")
	}
	return b.Bytes()
}

// TestIQGridsHeader checks kernels/iqgrids.h byte for byte against the
// header rendered from package quant's tables (-update-iqgrids rewrites
// it), and that the rendering carries every table word.
func TestIQGridsHeader(t *testing.T) {
	want := iqGridsHeader()
	if *updateGrids {
		if err := os.WriteFile("kernels/iqgrids.h", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := srcs["iqgrids.h"]
	if !ok {
		t.Fatal("no kernels/iqgrids.h (go test -run TestIQGridsHeader -update-iqgrids writes it)")
	}
	if !*updateGrids && !bytes.Equal(got, want) {
		t.Error("kernels/iqgrids.h differs from package quant's tables (go test -run TestIQGridsHeader -update-iqgrids rewrites it)")
	}
	// A changed word must show: the rendering is of the tables' values.
	tabs := iqGridTables()
	n := 0
	for _, tb := range tabs {
		n += len(tb.words)
	}
	if c := bytes.Count(want, []byte("0x")); c != n {
		t.Errorf("iqgrids.h has %d words, quant's tables %d", c, n)
	}
	if !bytes.Contains(want, []byte(fmt.Sprintf("0x%016x,", quant.IQ1SGrid[2047]))) {
		t.Error("iqgrids.h lacks IQ1SGrid's last word")
	}
}
