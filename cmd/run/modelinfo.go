package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/quant"
)

// modelInfo is what the reports say about a model, as llama-bench's
// model_filename, model_type, model_size and model_n_params.
type modelInfo struct {
	Filename string // the path given
	Desc     string // "ARCH SIZE FTYPE", e.g. "llama 292K all F32"
	Size     int64  // bytes of tensor data
	Params   int64  // elements of all tensors
}

// describe returns the report facts of m, loaded from path.
func describe(path string, m *model.Model) modelInfo {
	info := modelInfo{Filename: path}
	f := m.File()
	if f == nil {
		info.Desc = m.Hparams.Arch
		return info
	}
	for _, t := range f.Tensors {
		info.Size += t.Size
		n := int64(1)
		for _, d := range t.Ne {
			n *= d
		}
		info.Params += n
	}
	info.Desc = fmt.Sprintf("%s %s %s", m.Hparams.Arch, sizeLabel(info.Params), fileType(f))
	return info
}

// sizeLabel writes a parameter count the way model names do: "260K",
// "15M", "7.2B". llama.cpp puts its own size class here ("7B", or "?B"
// when it does not know the shape); a rounded count says more for the
// synthetic and tiny models kernbench runs.
func sizeLabel(n int64) string {
	switch {
	case n < 1e6:
		return fmt.Sprintf("%dK", (n+500)/1000)
	case n < 1e9:
		return fmt.Sprintf("%dM", (n+500_000)/1_000_000)
	}
	return fmt.Sprintf("%.1fB", float64(n)/1e9)
}

// ftypeNames are llama.cpp's names for the general.file_type values
// (enum llama_ftype) that describe a file's main weight type.
var ftypeNames = map[int64]string{
	0: "all F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K - Medium", 11: "Q3_K - Small", 12: "Q3_K - Medium", 13: "Q3_K - Large",
	14: "Q4_K - Small", 15: "Q4_K - Medium", 16: "Q5_K - Small", 17: "Q5_K - Medium",
	18: "Q6_K", 21: "Q2_K - Small", 32: "BF16",
}

// fileType names the file's weight type: from general.file_type when the
// file has a known one, else the type holding most bytes of 2-D tensors
// ("all F32" when everything is F32).
func fileType(f *gguf.File) string {
	if v, err := f.Int("general.file_type"); err == nil {
		if s, ok := ftypeNames[v]; ok {
			return s
		}
	}
	bytes := map[quant.Type]int64{}
	allF32 := true
	for _, t := range f.Tensors {
		if t.Type != quant.F32 {
			allF32 = false
		}
		if t.NDims >= 2 {
			bytes[t.Type] += t.Size
		}
	}
	if allF32 {
		return "all F32"
	}
	best, bestN := quant.F32, int64(-1)
	for t, n := range bytes {
		if n > bestN || n == bestN && t < best {
			best, bestN = t, n
		}
	}
	return strings.ToUpper(best.String())
}

// formatSize writes a byte count as llama-bench does: MiB below a GiB.
func formatSize(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// formatParams writes a parameter count as llama-bench does: M below a
// billion, else B.
func formatParams(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

// baseName is the file name of a model path, for short reports.
func baseName(path string) string { return filepath.Base(path) }
