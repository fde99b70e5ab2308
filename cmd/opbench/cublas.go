package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/ops/cuda"
)

const cublasHelp = `Usage: opbench cublas -f SWEEP.json [-json OUT.json] [-backend cuda-0]
       opbench cublas -lib

Times cuBLAS beside kernbench on a GPU: for every MUL_MAT record of a
sweep's record set (opbench sweep's NAME.json), cublasGemmEx on the same
shape (weights m x k, activations n x k, an f32 result), on the GPU of the
record's backend (or -backend's):

  f16, bf16, f32   the same types (f32 without TF32)
  quantized types  f16, the dense stand-in (cuBLAS has no q4_0 product)

Prints ours, cuBLAS's and speed_vs_cublas (cuBLAS's time over ours: 1.0
or more is as fast as cuBLAS or faster) per point, and -json writes them
with the library and its version. Where there is no GPU or no cuBLAS (or
the records are cuda-emu's), the output says so and the exit status is
0: the baseline is absent, nothing failed. Exit 1 when cuBLAS ran and a
point failed, 2 for a bad command line or an unreadable record set.

cuBLAS is looked for in $KERNBENCH_CUBLAS (a library or its folder), the
toolkit $CUDA_HOME, $CUDA_PATH or $CUDA_ROOT names, the dynamic loader's
path, /usr/local/cuda, /usr/local/cuda-X.Y and NVIDIA's pip wheels
(nvidia/cublas/lib, with libcublasLt); -lib prints that order and the
library that loads.

Examples:

	opbench sweep -backend cuda-0 -op mul_mat -type f16,q4_0 -m 4096 -k 4096 -n 1,512,4096 -name mm -out /tmp/r
	opbench cublas -f /tmp/r/mm.json -json /tmp/r/mm-cublas.json
`

// cublasReport is opbench cublas -json's file.
type cublasReport struct {
	Schema  string         `json:"schema"`
	Sweep   string         `json:"sweep"`
	Date    string         `json:"date"`
	Library string         `json:"library,omitempty"`
	Version int            `json:"version,omitempty"`
	Error   string         `json:"error,omitempty"`
	Note    string         `json:"note"`
	Records []cublasRecord `json:"records"`
}

// cublasRecord is one MUL_MAT point.
type cublasRecord struct {
	Op       string    `json:"op"`
	Type     string    `json:"type"`
	Shape    string    `json:"shape"`
	Label    string    `json:"label,omitempty"`
	Backend  string    `json:"backend"`
	OursS    float64   `json:"ours_s,omitempty"`
	CublasS  float64   `json:"cublas_s,omitempty"`
	Samples  []float64 `json:"cublas_samples_s,omitempty"`
	CublasOp string    `json:"cublas_op,omitempty"`
	Speed    float64   `json:"speed_vs_cublas,omitempty"`
	Error    string    `json:"cublas_error,omitempty"`
}

// cublasGemm is cuda.CublasGemmOn; tests swap it.
var cublasGemm = cuda.CublasGemmOn

// runCublas is "opbench cublas".
func runCublas(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("cublas")
	file := fs.String("f", "", "the sweep's record set (NAME.json)")
	jsonPath := fs.String("json", "", "also write the results as JSON to this file")
	backend := fs.String("backend", "", "the GPU to time cuBLAS on (default each record's backend)")
	lib := fs.Bool("lib", false, "print where cuBLAS is looked for and which loads, and time nothing")
	pos, help, err := parseArgs(fs, args)
	if help {
		fmt.Fprint(stdout, cublasHelp)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil && *lib {
		return writeCublasLib(stdout, stderr)
	}
	if err == nil && *file == "" {
		err = errors.New("-f: name the sweep's record set")
	}
	if err != nil {
		return usageError(stderr, "cublas", flagErr(err))
	}
	set, err := bench.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(stderr, "opbench cublas: %v\n", err)
		return exitUsage
	}
	rep := cublasBaseline(set, *file, *backend)
	if err := writeCublasTable(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "opbench cublas: %v\n", err)
		return exitFailure
	}
	if *jsonPath != "" {
		if err := writeJSONFile(*jsonPath, rep); err != nil {
			fmt.Fprintf(stderr, "opbench cublas: %v\n", err)
			return exitFailure
		}
	}
	if rep.Error != "" {
		fmt.Fprintf(stderr, "opbench cublas: no baseline: %s\n", rep.Error)
		return exitOK
	}
	for _, r := range rep.Records {
		if r.Error != "" {
			return exitFailure
		}
	}
	return exitOK
}

// cublasType returns the type cuBLAS computes a weight type's product
// in, and whether it stands in for another.
func cublasType(t string) (string, bool) {
	switch t {
	case "f16", "bf16", "f32":
		return t, false
	}
	return "f16", true
}

// cublasBaseline times every MUL_MAT record of set. The first error
// that says cuBLAS cannot run at all (no GPU, no library, the emulator)
// ends the timing: the report's Error says why, and the records keep
// ours alone.
func cublasBaseline(set *bench.Set, file, backend string) cublasReport {
	rep := cublasReport{
		Schema: "kernbench-cublas-baseline/1", Sweep: file, Date: time.Now().UTC().Format(time.RFC3339),
		Note:    "speed_vs_cublas is cuBLAS's time over ours: 1.0 or more is as fast as cuBLAS or faster; quantized weights are timed in f16 (the dense stand-in)",
		Records: []cublasRecord{},
	}
	for _, r := range set.Records {
		if r.Op != "MUL_MAT" {
			continue
		}
		out := cublasRecord{Op: r.Op, Type: r.Type, Shape: r.Shape, Label: r.Label, Backend: r.Backend}
		if r.Timed() && !r.Emulated {
			out.OursS = r.Median
		}
		be := r.Backend
		if backend != "" {
			be = backend
		}
		typ, standIn := cublasType(r.Type)
		m, n, k := int(r.Dims["m"]), int(r.Dims["n"]), int(r.Dims["k"])
		switch {
		case rep.Error != "":
		case m == 0 || n == 0 || k == 0:
			out.Error = "no m, n and k in the record"
		default:
			g, err := cublasGemm(be, m, n, k, typ)
			if err != nil {
				if rep.Library == "" {
					// Nothing ran yet: cuBLAS or the GPU is absent.
					rep.Error = err.Error()
					break
				}
				out.Error = err.Error()
				break
			}
			rep.Library, rep.Version = g.Library, g.Version
			out.CublasS, out.Samples, out.CublasOp = g.Median, g.Samples, g.What
			if standIn {
				out.CublasOp += " (stand-in for " + r.Type + ")"
			}
			if out.OursS > 0 {
				out.Speed = g.Median / out.OursS
			}
		}
		rep.Records = append(rep.Records, out)
	}
	return rep
}

// writeCublasTable prints the report.
func writeCublasTable(w io.Writer, rep cublasReport) error {
	var b bytes.Buffer
	switch {
	case rep.Error != "":
		fmt.Fprintf(&b, "no cuBLAS baseline: %s\n", rep.Error)
	case rep.Library == "":
		fmt.Fprintf(&b, "no cuBLAS baseline: no MUL_MAT point was timed\n")
	default:
		fmt.Fprintf(&b, "cuBLAS %d (%s)\n", rep.Version, rep.Library)
	}
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "op\ttype\tshape\tbackend\tours\tcuBLAS\tvs cuBLAS\t")
	for _, r := range rep.Records {
		speed := "-"
		if r.Speed > 0 {
			speed = fmt.Sprintf("%.2fx", r.Speed)
		}
		cb := seconds(r.CublasS)
		if r.Error != "" {
			cb = "! " + r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Op, r.Type, r.Shape, r.Backend, seconds(r.OursS), cb, speed)
	}
	tw.Flush()
	_, err := w.Write(b.Bytes())
	return err
}

// writeCublasLib is "opbench cublas -lib".
func writeCublasLib(stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "cuBLAS is looked for in, in order:")
	for _, p := range cuda.CublasSearchOrder() {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	lib, err := cuda.CublasLibrary()
	if err != nil {
		fmt.Fprintf(stderr, "opbench cublas: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "loaded: %s\n", lib)
	return exitOK
}
