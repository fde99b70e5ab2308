package cuda

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu"
	"github.com/kernbench/kernbench/quant"
)

// KernelFiles returns the kernel source files (.cu) of the embedded
// bundle, sorted: the modules the backend builds.
func KernelFiles() ([]string, error) {
	srcs, err := kernelSources()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range gpu.SortedNames(srcs) {
		if strings.HasSuffix(n, ".cu") {
			out = append(out, n)
		}
	}
	return out, nil
}

// An NVRTCBuild is a kernel file compiled by NVRTC for one architecture
// with the backend's options, and ptxas's verbose report.
type NVRTCBuild struct {
	File, Arch string
	// Compiler is NVRTC's version, library and options.
	Compiler string
	Cubin    []byte
	// Log is NVRTC's log: its warnings and ptxas's resource report
	// (cudatools.ParsePtxasReport reads it).
	Log string
}

// CompileNVRTC compiles a kernel file for arch ("sm_80", "sm_90") with
// NVRTC as the backend does on a GPU, asking ptxas for its verbose
// report too (which does not change the code). It needs NVRTC, not a
// GPU; builds are cached as the backend's are.
func CompileNVRTC(file, arch string) (NVRTCBuild, error) {
	c, err := newNVRTCCompiler(arch)
	if err != nil {
		return NVRTCBuild{}, err
	}
	return c.build(file)
}

// build compiles file with ptxas's report. The report does not change
// the code, so the cubin is cached for the backend's options too: a
// report made first (opbench kernels, as scripts/gpu-check.sh does)
// spares the backend its compiles.
func (c *nvrtcCompiler) build(file string) (NVRTCBuild, error) {
	v := *c
	v.opts = append(append([]string(nil), c.opts...), "--ptxas-options=-v")
	cubin, log, err := v.cachedCompile(file)
	if err != nil {
		return NVRTCBuild{}, err
	}
	if main, headers, err := programOf(file); err == nil {
		names := gpu.SortedNames(headers)
		if p := c.cachePath(file, main, headers, names); !fileExists(p) {
			storeCubin(p, cubin, log)
		}
	}
	return NVRTCBuild{File: file, Arch: c.arch, Compiler: v.String(), Cubin: cubin, Log: log}, nil
}

// fileExists reports whether path names a file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// A Launch is the block a kernel is launched with at the report shape
// (llama-7b: 4096-wide rows, 32 heads of 128, a 512-token prompt or one
// decoded token), as the host code computes it.
type Launch struct {
	Threads int
	// Shared is the dynamic shared memory per block in bytes.
	Shared int
	// Shape says which launch of the kernel this is.
	Shape string
}

// reportLaunches maps kernel-name prefixes to their launch at the report
// shape; the longest matching prefix wins. The values come from the
// launch functions' own geometry helpers, so they follow them.
var reportLaunches = func() map[string]Launch {
	const n, heads, head, prompt = 4096, 32, 128, 512
	_, elem := elementGrid(n * prompt)
	rope := &ops.Tensor{Ne: [ops.MaxDims]int64{head, heads, prompt, 1}, Params: ops.RopeParams{NDims: head}}
	_, ropeThreads := ropeGeometry(rope)
	sm := softMaxGeometry(prompt, heads*prompt)
	_, mmvf, _ := mmvGeometry(quant.F16, n, 1)
	m := map[string]Launch{
		"kb_mmq_":               {tileNT, 0, "tile product"},
		"kb_mmq128_":            {2 * bigTileM, mmqShared(bigTileM), "tile product, 128 rows"},
		"kb_mmq_splitk_sum":     {int(elem.x), 0, "element grid"},
		"kb_mmf_":               {tileNT, 0, "tile product"},
		"kb_mmh_":               {tileNT, 0, "tile product"},
		"kb_mmh128x128_":        {int(hTile128x128.Threads), 0, "large tile product"},
		"kb_mmh128x64_":         {int(hTile128x64.Threads), 0, "large tile product"},
		"kb_mmh128x128w4_":      {int(hTile128x128w4.Threads), 0, "large tile product"},
		"kb_mmvf_":              {int(mmvf.x * mmvf.y), 0, "mat-vec, 4096 rows"},
		"kb_mmvf1_":             {int(mmvf.x * mmvf.y), 0, "mat-vec, 4096 rows"},
		"kb_quantize_q8a":       {128, 0, "activations to q8"},
		"kb_convert_act":        {int(elem.x), 0, "element grid"},
		"kb_mmid_group":         {256, 8 * 8, "8 experts"},
		"kb_rms_norm_f32":       {int(rowBlock(n)), 0, "4096-wide rows"},
		"kb_get_rows_":          {int(rowBlock(n)), 0, "4096-wide rows"},
		"kb_rope_f32":           {int(ropeThreads), 8 * head / 2, "32 heads of 128"},
		"kb_soft_max_f32":       {int(sm.x * sm.y), int(sm.y) * prompt * 4, "512-wide rows"},
		"kb_cpy_":               {int(elem.x), 0, "element grid"},
		"kb_cont_w":             {int(elem.x), 0, "element grid"},
		"kb_quantize_":          {64, 0, "64 blocks"},
		"kb_transpose_w":        {32 * 8, 0, "32x32 tiles"},
		"kb_add":                {int(elem.x), 0, "element grid"},
		"kb_mul":                {int(elem.x), 0, "element grid"},
		"kb_unary_f32":          {int(elem.x), 0, "element grid"},
		"kb_swiglu":             {int(elem.x), 0, "element grid"},
		"kb_argsort_f32":        {int(sortThreads(256 / 2)), 8 * 256, "256 keys"},
		"kb_argsort_keys":       {int(elem.x), 0, "element grid"},
		"kb_argsort_step":       {int(elem.x), 0, "element grid"},
		"kb_argsort_indices":    {int(elem.x), 0, "element grid"},
		"kb_argsort_tiles":      {int(sortThreads(sortTile / 2)), 8 * sortTile, "4096-key tiles"},
		"kb_sum_rows_f32":       {int(rowBlock(256)), 0, "wide rows"},
		"kb_ssm_conv_f32":       {int(rowBlock(128)), 0, "128+ channels"},
		"kb_ssm_scan_f32_":      {scanThreads, 16 * 128, "d_state 128"},
		"kb_flash_attn_combine": {int(min(rowBlock(head), 256)), 0, "head 128"},
	}
	// The integer mat-vec kernels' shared memory depends on the type and
	// the columns: 8 (kb_mmvq_), 1 (kb_mmvq1_); and on k, n here.
	for _, t := range append(slices.Clone(weightTypes), iqTypes...) {
		if q8Acts(t) {
			_, block, shared := mmvGeometryK(t, n, mmvMaxCols, n)
			m["kb_mmvq_"+t.String()] = Launch{int(block.x), shared, "mat-vec, 8 columns"}
			_, block, shared = mmvGeometryK(t, n, 1, n)
			m["kb_mmvq1_"+t.String()] = Launch{int(block.x), shared, "mat-vec, one column"}
		}
	}
	// Flash attention: kb_flash_attn_ext_r<rows per warp>_d<head>, at the
	// shape that picks each variant (r4 a prompt, r2 8 query rows per
	// K/V head, r1 decode).
	for _, rpw := range []int{1, 2, 4} {
		for _, d := range []int64{64, 128, 256} {
			nq := map[int]int64{1: 1, 2: 8, 4: prompt}[rpw]
			q := &ops.Tensor{Ne: [ops.MaxDims]int64{d, nq, heads, 1}}
			k := &ops.Tensor{Ne: [ops.MaxDims]int64{d, prompt, heads, 1}}
			t := &ops.Tensor{Src: []*ops.Tensor{ops.FAQ: q, ops.FAK: k, ops.FAV: k}}
			g := faGeometryOf(t)
			shape := fmt.Sprintf("%d query rows, head %d", nq, d)
			m[fmt.Sprintf("kb_flash_attn_ext_r%d_d%d", g.rpw, g.cols)] = Launch{32 * g.warps, g.sharedBytes, shape}
		}
	}
	// The tensor-core kernel, kb_flash_attn_mma_d<head>: a prompt.
	for _, d := range []int64{64, 80, 96, 112, 128, 256} {
		q := &ops.Tensor{Ne: [ops.MaxDims]int64{d, prompt, heads, 1}}
		k := &ops.Tensor{Type: quant.F16, Ne: [ops.MaxDims]int64{d, prompt, heads, 1}}
		t := &ops.Tensor{Src: []*ops.Tensor{ops.FAQ: q, ops.FAK: k, ops.FAV: k}}
		g := faMMAGeometryFor(t, 0)
		m[g.name()] = Launch{32 * g.warps, g.sharedBytes, fmt.Sprintf("%d query rows, head %d", prompt, d)}
	}
	// The vector kernel, kb_flash_attn_vec_[q8_0_]d<head>_r<rows>: decode
	// with 1, 2, 4 or 8 query rows per K/V head (GQA groups).
	for _, typ := range []quant.Type{quant.F16, quant.Q8_0} {
		for _, rows := range []int64{1, 2, 4, 8} {
			for _, d := range []int64{64, 128, 256} {
				q := &ops.Tensor{Ne: [ops.MaxDims]int64{d, 1, heads, 1}}
				k := &ops.Tensor{Type: typ, Ne: [ops.MaxDims]int64{d, prompt, heads / rows, 1}}
				t := &ops.Tensor{Src: []*ops.Tensor{ops.FAQ: q, ops.FAK: k, ops.FAV: k}}
				g := faVecGeometryFor(t, 0, 0)
				shape := fmt.Sprintf("decode, %d query rows per K/V head, head %d, %v", rows, d, typ)
				m[g.name()] = Launch{32 * g.warps, g.sharedBytes, shape}
			}
		}
	}
	return m
}()

// ReportLaunch returns kernel's launch at the report shape, and false
// for a kernel the table does not know.
func ReportLaunch(kernel string) (Launch, bool) {
	p := launchPrefix(kernel)
	l, ok := reportLaunches[p]
	return l, ok
}

// launchPrefix returns the longest prefix of reportLaunches that kernel
// has, or "".
func launchPrefix(kernel string) string {
	best := ""
	for p := range reportLaunches {
		if strings.HasPrefix(kernel, p) && len(p) > len(best) {
			best = p
		}
	}
	return best
}
