package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/chart"
)

const plotHelp = `Usage: opbench plot [flags] FILE.json

Draws a record set (JSON or CSV, as opbench sweep writes them) with
gonum/plot, as PNG and SVG:

  BASE-OP.png/.svg       one chart per op: median throughput (GFLOP/s for
                         matrix products and attention, GB/s for the other
                         ops, or as -y says) against the swept size (-x, log
                         scale), a line per type, backend, thread count and
                         value of any other size that varies;
  BASE-roofline.png/.svg every point that does FLOPs placed by arithmetic
                         intensity (FLOP/byte, from the op's cost model)
                         against GFLOP/s, log-log, under the set's measured
                         roofline per thread count: f32 FMA peak, DRAM and
                         in-cache read bandwidth, and the int8 dot peak.

BASE is the file's name without its extension; titles name the machine,
commit and date.

Flags:
`

const plotExamples = `
Examples:

	opbench plot results/amd-epyc-2c/baseline-mul_mat.json
	opbench plot -x k -o /tmp/charts results/amd-epyc-2c/baseline-llama-7b.json
	opbench plot sweep.csv -y gbps
`

type plotConfig struct {
	file, out string
	opts      chart.Options
}

func newPlotFlagSet() (*flag.FlagSet, *string, *string, *string) {
	fs := newFlagSet("plot")
	x := fs.String("x", "", "`size` on the x axis: n, m, k, kv, ... (default: per op, the size with the most values)")
	y := fs.String("y", "auto", "throughput `metric`: auto, gflops or gbps")
	o := fs.String("o", "", "`directory` for the charts (default: the file's)")
	return fs, x, y, o
}

func parsePlot(args []string) (cfg plotConfig, help bool, err error) {
	fs, x, y, o := newPlotFlagSet()
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) != 1 {
		return cfg, false, fmt.Errorf("want one record file, got %d argument(s)", len(pos))
	}
	cfg.file = pos[0]
	cfg.out = *o
	if cfg.out == "" {
		cfg.out = filepath.Dir(cfg.file)
	}
	known := dimNames()
	if *x != "" && !containsString(known, *x) {
		return cfg, false, fmt.Errorf("-x: unknown size %q (sizes: %s)", *x, strings.Join(known, ", "))
	}
	cfg.opts.X = *x
	switch *y {
	case "auto":
		cfg.opts.Y = chart.MetricAuto
	case chart.MetricGFLOPS, chart.MetricGBPS:
		cfg.opts.Y = *y
	default:
		return cfg, false, fmt.Errorf("-y: unknown metric %q (auto, gflops or gbps)", *y)
	}
	return cfg, false, nil
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func plotUsage(w io.Writer) {
	fmt.Fprint(w, plotHelp)
	fs, _, _, _ := newPlotFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, plotExamples)
}

// runPlot is "opbench plot".
func runPlot(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parsePlot(args)
	if help {
		plotUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "plot", err)
	}
	set, err := bench.ReadFile(cfg.file)
	if err != nil {
		return usageError(stderr, "plot", err)
	}
	figs, err := chart.Throughput(set, cfg.opts)
	if err != nil {
		return usageError(stderr, "plot", err)
	}
	if rf, err := chart.Roofline(set, cfg.opts); err == nil {
		figs = append(figs, rf)
	} else {
		fmt.Fprintf(stderr, "note: %v\n", err)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "opbench plot: -o: %v\n", err)
		return exitFailure
	}
	base := strings.TrimSuffix(filepath.Base(cfg.file), filepath.Ext(cfg.file))
	paths, err := chart.WriteFiles(figs, cfg.out, base)
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "opbench plot: %v\n", err)
		return exitFailure
	}
	return exitOK
}
