package cuda

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// iqGridsFile is the CUDA header of the codebook formats' grids, written
// from package quant's tables by iqGridsHeader.
const iqGridsFile = "kernels/iq_grids.cuh"

// iqGridsHeader returns the text of kernels/iq_grids.cuh: quant's sign
// table and codebook grids (KSignsIQ2XS, IQ2XXSGrid ... IQ1SGrid) as
// device arrays, entry for entry.
func iqGridsHeader() []byte {
	var b bytes.Buffer
	b.WriteString(`// iq_grids.cuh: the sign table and codebook grids of the IQ1, IQ2 and IQ3
// formats (ggml's ksigns_iq2xs, iq2xxs_grid ... iq1s_grid), entry for
// entry package quant's KSignsIQ2XS, IQ2XXSGrid ... IQ1SGrid.
// Code generated from package quant by TestIQGridsHeader; DO NOT EDIT.
// (KERNBENCH_UPDATE_IQ_GRIDS=1 go test ./ops/cuda -run TestIQGridsHeader
// rewrites it; without it the test fails on any difference.)
#pragma once
#include "common.cuh"
`)
	writeDeviceArray(&b, "u8", "kb_ksigns_iq2xs", quant.KSignsIQ2XS[:], 16, "%d,")
	writeDeviceArray(&b, "u64", "kb_iq2xxs_grid", quant.IQ2XXSGrid[:], 4, "0x%016xull,")
	writeDeviceArray(&b, "u64", "kb_iq2xs_grid", quant.IQ2XSGrid[:], 4, "0x%016xull,")
	writeDeviceArray(&b, "u64", "kb_iq2s_grid", quant.IQ2SGrid[:], 4, "0x%016xull,")
	writeDeviceArray(&b, "u32", "kb_iq3xxs_grid", quant.IQ3XXSGrid[:], 8, "0x%08xu,")
	writeDeviceArray(&b, "u32", "kb_iq3s_grid", quant.IQ3SGrid[:], 8, "0x%08xu,")
	writeDeviceArray(&b, "u64", "kb_iq1s_grid", quant.IQ1SGrid[:], 4, "0x%016xull,")
	return b.Bytes()
}

// writeDeviceArray writes v as a CUDA device array of ctype named name,
// perLine entries a line, each in format.
func writeDeviceArray[T uint8 | uint32 | uint64](b *bytes.Buffer, ctype, name string, v []T, perLine int, format string) {
	fmt.Fprintf(b, "\nstatic __device__ const %s %s[%d] = {", ctype, name, len(v))
	for i, x := range v {
		if i%perLine == 0 {
			b.WriteString("\n\t")
		} else {
			b.WriteString(" ")
		}
		fmt.Fprintf(b, format, x)
	}
	b.WriteString("\n};\n")
}

// TestIQGridsHeader checks kernels/iq_grids.cuh byte for byte against
// the header quant's tables give (with KERNBENCH_UPDATE_IQ_GRIDS=1 it
// writes it), and that the embedded bundle the kernels compile from
// holds the same bytes.
func TestIQGridsHeader(t *testing.T) {
	want := iqGridsHeader()
	if os.Getenv("KERNBENCH_UPDATE_IQ_GRIDS") == "1" {
		if err := os.WriteFile(filepath.FromSlash(iqGridsFile), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.FromSlash(iqGridsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from package quant's tables: rerun with KERNBENCH_UPDATE_IQ_GRIDS=1", iqGridsFile)
	}
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(srcs["iq_grids.cuh"], want) {
		t.Errorf("the embedded iq_grids.cuh differs from package quant's tables")
	}
	// The header's tables are quant's, so one changed entry must show.
	bad := quant.IQ3SGrid
	bad[511] ^= 1
	if bytes.Equal(want, bytes.Replace(want, fmt.Appendf(nil, "0x%08xu", quant.IQ3SGrid[511]), fmt.Appendf(nil, "0x%08xu", bad[511]), 1)) {
		t.Error("the header does not hold IQ3SGrid's last entry")
	}
}
