// Command opbench validates and measures kernbench's op kernels.
//
// Usage:
//
//	opbench <command> [flags]
//
// Commands:
//
//	validate   run the case matrix on a backend against the float64 reference
//	sweep      measure ops x types x sizes x backends x threads into JSON/CSV records
//	merge      join the shards of a sharded sweep into one record set per machine
//	compare    compare two record sets point by point, with a verdict from the samples
//	plot       chart a record set: throughput vs size, and a roofline chart
//	profile    count each GPU kernel's memory requests, bank conflicts and tensor work on the emulator, with a roofline estimate for named GPUs
//	roofline   measure this machine's peak FLOP/s and read bandwidth
//	ggml       time the same points on ggml's CPU backend and kernbench, alternating
//	llama      run llama.cpp's llama-bench and kernbench's run -bench on the same models, alternating
//	tune       search the CPU backend's tunable parameters into results/<machine-id>/tuned.json
//	backends   list the registered backends, with why one cannot open here
//	kernels    NVRTC's view of each CUDA kernel: registers, spills, occupancy, SASS mix
//	ncu        on a GPU: Nsight Compute's counters of ten CUDA kernels, as JSON
//	cublas     on a GPU: cuBLAS's times on a sweep's matrix products, beside ours
//
// Run "opbench <command> -h" for a command's flags.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0 // everything passed
	exitFailure = 1 // the command ran and something failed
	exitUsage   = 2 // bad command line
)

// A command is one opbench subcommand. run gets the arguments after the
// command's name and returns the exit code.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands.
var commands = []command{
	{name: "validate", summary: "run the case matrix on a backend against the float64 reference", run: runValidate},
	{name: "sweep", summary: "measure ops x types x sizes x backends x threads into JSON/CSV records", run: runSweep},
	{name: "merge", summary: "join the shards of a sharded sweep (-shard i/n) into one record set per machine, checked against the sweep's point list", run: runMerge},
	{name: "compare", summary: "compare two record sets point by point: faster, slower or within noise", run: runCompare},
	{name: "plot", summary: "chart a record set: throughput vs size, and a roofline chart (PNG, SVG)", run: runPlot},
	{name: "profile", summary: "count each GPU kernel's memory requests, bank conflicts and tensor work on the emulator, with a roofline estimate for named GPUs", run: runProfile},
	{name: "roofline", summary: "measure this machine's peak FLOP/s and read bandwidth per thread count", run: runRoofline},
	{name: "ggml", summary: "time the same points on ggml's CPU backend (its test-backend-ops) and kernbench, alternating", run: runGGML},
	{name: "llama", summary: "run llama.cpp's llama-bench and kernbench's run -bench on the same models, alternating", run: runLlama},
	{name: "tune", summary: "search the CPU backend's tunable kernel parameters and keep the best in results/<machine>/tuned.json", run: runTune},
	{name: "backends", summary: "list the registered backends and their variants, with why one cannot open here", run: runBackends},
	{name: "kernels", summary: "compile the CUDA kernels with NVRTC: registers, spills, shared memory, occupancy, SASS mix", run: runKernels},
	{name: "ncu", summary: "on a GPU: Nsight Compute's memory and divergence counters of ten cuda kernels, as JSON", run: runNCU},
	{name: "cublas", summary: "on a GPU: cuBLAS's times on a sweep's MUL_MAT points, beside ours (the baseline)", run: runCublas},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "opbench: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `opbench validates and measures kernbench's op kernels.

Usage:

	opbench <command> [flags]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Examples:

	opbench validate                          # every case on the CPU
	opbench validate -op mul_mat -type q4_0   # one op, one type
	opbench validate -op soft_max,flash_attn_ext -v
	opbench sweep -op mul_mat -type q4_0,q8_0 -m 4096 -n 1,512 -k 4096 -t 2
	opbench plot results/<machine-id>/sweep-<date>.json
	opbench compare base.json new.json -fail-on-regression
	opbench sweep -preset llama-7b -shard 0/3 -name part0   # and 1/3, 2/3; or in a job array
	opbench merge results part0.json part1.json part2.json
	opbench roofline -t 1,2
	opbench profile -backend cuda-emu -op mul_mat -type q4_0 -m 4096 -k 4096 -n 1,512
	opbench backends                          # what -backend takes, and what can open here
	opbench kernels -arch sm_90               # registers, occupancy and SASS mix of the CUDA kernels

Run "opbench <command> -h" for a command's flags.
`)
}
