package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/kernbench/kernbench/internal/cudatools"
	"github.com/kernbench/kernbench/ops/cuda"
)

const kernelsHelp = `Usage: opbench kernels [-arch sm_80,sm_90] [-file mul_mat.cu] [-kernel regexp] [-json out.json]
       opbench kernels -nvrtc

Compiles every CUDA kernel file with NVRTC, as the cuda backend does on a
GPU (no GPU is needed), and prints per kernel and architecture what
NVIDIA's compiler says about it:

  regs       registers per thread (ptxas)
  spill      bytes of register spill stores/loads per thread (ptxas)
  smem       static shared memory per block, + the dynamic shared memory
             of its launch at the report shape (see below)
  block      threads per block at the report shape
  occ        theoretical occupancy on the architecture's GPU (sm_80: A100,
             sm_90: H100) from registers, threads and shared memory, and
             what limits it (threads, blocks, registers, shared)
  the SASS mix, static instruction counts from cuobjdump -sass:
             HMMA/IMMA/GMMA tensor-core products, LDGSTS (cp.async), LDSM
             (ldmatrix), global loads by width (LDG8 ... LDG128), IDP.4A
             (dp4a), FFMA, SHFL, BAR, LDL/STL (local memory), and the total

An architecture with the "a" suffix (sm_90a: Hopper's wgmma and setmaxnreg,
NVRTC 12 or later) gets the occupancy of its base architecture's GPU.
"-arch device" is the architecture the cuda backend compiles for on GPU 0
(sm_90a on an H100 or H200 with NVRTC 12; it needs the GPU's driver).
Files compile in parallel, one per CPU; a build also serves the cuda
backend's cache, so a report made first spares a GPU run its compiles.

The report shape is llama-7b's: 4096-wide rows, 32 heads of 128, a
512-token prompt, or one decoded token for the flash-attention r1
kernels; the block sizes come from the cuda backend's launch code.

NVRTC (libnvrtc.so) and cuobjdump come from .ci/install-cuda-tools.sh on
Debian; cuobjdump is looked for in $KERNBENCH_CUDA_TOOLS/usr/bin, the
user cache's kernbench/cuda-tools, $CUDA_PATH/bin, /usr/local/cuda/bin
and $PATH. Without cuobjdump the SASS columns are left out. Builds are
cached ($KERNBENCH_CUDA_CACHE); the first run takes minutes.

NVRTC is looked for in $KERNBENCH_NVRTC (a library or its folder), the
toolkit $CUDA_HOME, $CUDA_PATH or $CUDA_ROOT names, the dynamic loader's
path (libnvrtc.so.13, .12, .11.2), /usr/local/cuda, /usr/local/cuda-X.Y
(newest first) and NVIDIA's pip wheels (nvidia/cuda_nvrtc/lib under a
Python environment's site-packages); -nvrtc prints that order here and
the library and version that load, and compiles nothing.

Exits 1 when a kernel spills registers or its block does not fit the GPU.

Examples:

	opbench kernels -arch sm_90
	opbench kernels -file flash_attn_ext.cu -arch sm_80,sm_90
	opbench kernels -kernel 'mmvq_q4_0|mmq_dp4a_q4_0' -json /tmp/k.json
	opbench kernels -arch sm_90a -json /tmp/k.json   # NVRTC 12 or later
	opbench kernels -nvrtc
`

// kernelMix are the SASS classes the table prints, in order.
var kernelMix = []string{"HMMA", "IMMA", "GMMA", "LDGSTS", "LDSM", "LDG8", "LDG16", "LDG32", "LDG64", "LDG128", "IDP.4A", "FFMA", "SHFL", "BAR", "LDL/STL"}

// kernelRecord is one kernel's line of the report, and its JSON record.
type kernelRecord struct {
	Arch         string         `json:"arch"`
	GPU          string         `json:"gpu"`
	File         string         `json:"file"`
	Kernel       string         `json:"kernel"`
	Registers    int            `json:"registers"`
	SpillStores  int            `json:"spill_stores"`
	SpillLoads   int            `json:"spill_loads"`
	StackFrame   int            `json:"stack_frame"`
	SharedStatic int            `json:"shared_static"`
	LaunchShape  string         `json:"launch_shape,omitempty"`
	Threads      int            `json:"threads,omitempty"`
	SharedDyn    int            `json:"shared_dynamic"`
	BlocksPerSM  int            `json:"blocks_per_sm,omitempty"`
	Occupancy    float64        `json:"occupancy,omitempty"`
	Limiter      string         `json:"occupancy_limiter,omitempty"`
	Problem      string         `json:"problem,omitempty"`
	Instructions int            `json:"sass_instructions,omitempty"`
	Mix          map[string]int `json:"sass_mix,omitempty"`
	Compiler     string         `json:"compiler"`
}

// runKernels is "opbench kernels".
func runKernels(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels")
	archs := fs.String("arch", "sm_80,sm_90", "architectures, comma-separated: sm_80 (A100), sm_90 (H100), sm_90a, or device (what the cuda backend compiles for on GPU 0)")
	fileList := fs.String("file", "", "kernel files, comma-separated (default every one)")
	kernelRE := fs.String("kernel", "", "only kernels whose name matches this regexp")
	jsonPath := fs.String("json", "", "also write the records as JSON to this file")
	which := fs.Bool("nvrtc", false, "print where NVRTC is looked for and which loads, and compile nothing")
	pos, help, err := parseArgs(fs, args)
	if help {
		fmt.Fprint(stdout, kernelsHelp)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil && *which {
		return writeNVRTC(stdout, stderr)
	}
	var re *regexp.Regexp
	if err == nil && *kernelRE != "" {
		re, err = regexp.Compile(*kernelRE)
		if err != nil {
			err = fmt.Errorf("-kernel: %w", err)
		}
	}
	var gpus []cudatools.GPU
	if err == nil {
		list := splitList(*archs)
		for i, a := range list {
			if a == "device" {
				if list[i], err = cuda.GPUArch(0); err != nil {
					fmt.Fprintf(stderr, "opbench kernels: -arch device: %v\n", err)
					return exitFailure
				}
			}
		}
		gpus, err = gpusForArchs(list)
	}
	var files []string
	if err == nil {
		files, err = kernelFiles(splitList(*fileList))
	}
	if err != nil {
		return usageError(stderr, "kernels", flagErr(err))
	}

	sassOK := true
	if _, err := cudatools.Tool("cuobjdump"); err != nil {
		fmt.Fprintf(stderr, "opbench kernels: no SASS mix: %v\n", err)
		sassOK = false
	}
	var recs []kernelRecord
	for _, rs := range compileAll(gpus, files, sassOK, stderr) {
		if rs.err != nil {
			fmt.Fprintf(stderr, "opbench kernels: %v\n", rs.err)
			return exitFailure
		}
		for _, r := range rs.recs {
			if re == nil || re.MatchString(r.Kernel) {
				recs = append(recs, r)
			}
		}
	}
	if err := writeKernelTable(stdout, recs, sassOK); err != nil {
		fmt.Fprintf(stderr, "opbench kernels: %v\n", err)
		return exitFailure
	}
	if *jsonPath != "" {
		if err := writeJSONFile(*jsonPath, recs); err != nil {
			fmt.Fprintf(stderr, "opbench kernels: %v\n", err)
			return exitFailure
		}
	}
	bad := 0
	for _, r := range recs {
		if r.SpillStores > 0 || r.SpillLoads > 0 || r.Problem != "" {
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "opbench kernels: %d kernels spill registers or do not fit (see the table)\n", bad)
		return exitFailure
	}
	return exitOK
}

// writeNVRTC is "opbench kernels -nvrtc": the search order and what
// loads.
func writeNVRTC(stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "NVRTC is looked for in, in order:")
	for _, p := range cuda.NVRTCSearchOrder() {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	lib, version, err := cuda.NVRTCLibrary()
	if err != nil {
		fmt.Fprintf(stderr, "opbench kernels: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "loaded: %s, NVRTC %s\n", lib, version)
	return exitOK
}

// A fileReport is one file's records for one architecture, or why there
// are none.
type fileReport struct {
	recs []kernelRecord
	err  error
}

// compileAll compiles every file for every GPU's architecture, as many
// at once as there are CPUs (NVRTC compiles programs in parallel), and
// returns the reports in order: by GPU, then by file.
func compileAll(gpus []cudatools.GPU, files []string, withSASS bool, stderr io.Writer) []fileReport {
	out := make([]fileReport, len(gpus)*len(files))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for gi, g := range gpus {
		for fi, f := range files {
			wg.Add(1)
			go func(i int, g cudatools.GPU, f string) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				mu.Lock()
				fmt.Fprintf(stderr, "compiling %s for %s\n", f, g.Arch)
				mu.Unlock()
				rs, err := kernelReport(f, g, withSASS)
				out[i] = fileReport{rs, err}
			}(gi*len(files)+fi, g, f)
		}
	}
	wg.Wait()
	return out
}

// gpusForArchs returns the GPU each architecture's occupancy is computed
// for. An architecture-specific target (sm_90a) takes its base
// architecture's GPU and keeps its own name.
func gpusForArchs(archs []string) ([]cudatools.GPU, error) {
	if len(archs) == 0 {
		return nil, errors.New("-arch: no architecture")
	}
	var out []cudatools.GPU
	for _, a := range archs {
		found := false
		for _, g := range cudatools.GPUs {
			if g.Arch == a || g.Arch+"a" == a && hasArchSpecific(g.Arch) {
				g.Arch = a
				out, found = append(out, g), true
				break
			}
		}
		if !found {
			var known []string
			for _, g := range cudatools.GPUs {
				known = append(known, g.Arch+" ("+g.Name+")")
			}
			return nil, fmt.Errorf("-arch: unknown architecture %q (known: %s)", a, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// hasArchSpecific reports whether an architecture has an
// architecture-specific variant (the "a" suffix): sm_90 and later.
func hasArchSpecific(arch string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(arch, "sm_"))
	return err == nil && n >= 90
}

// kernelFiles returns the named kernel files, or every one.
func kernelFiles(names []string) ([]string, error) {
	all, err := cuda.KernelFiles()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return all, nil
	}
	for _, n := range names {
		found := false
		for _, a := range all {
			found = found || a == n
		}
		if !found {
			return nil, fmt.Errorf("-file: no kernel file %q (there are %s)", n, strings.Join(all, ", "))
		}
	}
	return names, nil
}

// kernelReport compiles one file for g's architecture and returns its
// kernels' records.
func kernelReport(file string, g cudatools.GPU, withSASS bool) ([]kernelRecord, error) {
	b, err := cuda.CompileNVRTC(file, g.Arch)
	if err != nil {
		return nil, err
	}
	res, err := cudatools.ParsePtxasReport(b.Log)
	if err != nil {
		return nil, fmt.Errorf("%s for %s: %w", file, g.Arch, err)
	}
	var sass []cudatools.SASS
	if withSASS {
		text, err := cudatools.DisassembleCubin(b.Cubin)
		if err != nil {
			return nil, fmt.Errorf("%s for %s: %w", file, g.Arch, err)
		}
		if sass, err = cudatools.ParseSASS(text); err != nil {
			return nil, fmt.Errorf("%s for %s: %w", file, g.Arch, err)
		}
	} else {
		// Join needs a listing: an empty one per kernel.
		for _, r := range res {
			sass = append(sass, cudatools.SASS{Name: r.Name, Arch: r.Arch})
		}
	}
	ks, err := cudatools.Join(res, sass)
	if err != nil {
		return nil, fmt.Errorf("%s for %s: %w", file, g.Arch, err)
	}
	out := make([]kernelRecord, 0, len(ks))
	for _, k := range ks {
		out = append(out, newKernelRecord(file, g, b.Compiler, k, withSASS))
	}
	return out, nil
}

// newKernelRecord adds the launch at the report shape and the occupancy
// to what the tools said about k.
func newKernelRecord(file string, g cudatools.GPU, compiler string, k cudatools.Kernel, withSASS bool) kernelRecord {
	r := kernelRecord{
		Arch: g.Arch, GPU: g.Name, File: file, Kernel: k.Name, Compiler: compiler,
		Registers: k.Registers, SpillStores: k.SpillStores, SpillLoads: k.SpillLoads, StackFrame: k.StackFrame,
		SharedStatic: k.SharedStatic,
	}
	if withSASS {
		r.Instructions = k.SASS.Total
		r.Mix = k.SASS.Mix()
	}
	l, ok := cuda.ReportLaunch(k.Name)
	if !ok {
		r.Problem = "no launch at the report shape"
		return r
	}
	r.LaunchShape, r.Threads, r.SharedDyn = l.Shape, l.Threads, l.Shared
	o, err := g.Occupancy(k.Registers, l.Threads, k.SharedStatic+l.Shared)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.BlocksPerSM, r.Occupancy, r.Limiter = o.BlocksPerSM, o.Fraction, o.Limiter
	return r
}

// writeKernelTable prints the records, a table per architecture.
func writeKernelTable(w io.Writer, recs []kernelRecord, withSASS bool) error {
	var b bytes.Buffer
	arch := ""
	var tw *tabwriter.Writer
	for _, r := range recs {
		if r.Arch != arch {
			if tw != nil {
				tw.Flush()
				b.WriteString("\n")
			}
			arch = r.Arch
			fmt.Fprintf(&b, "%s (occupancy on an %s) — %s\n", r.Arch, r.GPU, r.Compiler)
			tw = tabwriter.NewWriter(&b, 0, 8, 1, ' ', tabwriter.AlignRight)
			head := "kernel\tfile\tregs\tspill\tsmem\tblock\tocc\t"
			if withSASS {
				head += strings.Join(kernelMix, "\t") + "\tinstrs\t"
			}
			fmt.Fprintln(tw, head)
		}
		spill := "-"
		if r.SpillStores > 0 || r.SpillLoads > 0 {
			spill = fmt.Sprintf("%d/%d", r.SpillStores, r.SpillLoads)
		}
		smem := fmt.Sprint(r.SharedStatic)
		if r.SharedDyn > 0 {
			smem += fmt.Sprintf("+%d", r.SharedDyn)
		}
		block, occ := "?", "?"
		if r.Threads > 0 {
			block = fmt.Sprint(r.Threads)
		}
		switch {
		case r.Problem != "":
			occ = "! " + r.Problem
		case r.Limiter != "":
			occ = fmt.Sprintf("%.0f%% %s", 100*r.Occupancy, r.Limiter)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t", r.Kernel, r.File, r.Registers, spill, smem, block, occ)
		if withSASS {
			for _, c := range kernelMix {
				line += fmt.Sprintf("%d\t", r.Mix[c])
			}
			line += fmt.Sprintf("%d\t", r.Instructions)
		}
		fmt.Fprintln(tw, line)
	}
	if tw != nil {
		tw.Flush()
	}
	_, err := w.Write(b.Bytes())
	return err
}
