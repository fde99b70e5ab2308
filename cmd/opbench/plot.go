package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/chart"
	"github.com/kernbench/kernbench/internal/cli"
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
commit and date. Every record must name its sizes (dims), each positive
(a log scale has no place for 0); its median, min, max and throughputs
must be those of its samples (a record edited or damaged is refused,
named); no two records may time the same point; and a record of an
emulated backend (marked so, or named *-emu) has no throughput to draw.
Charts are written atomically: a chart that fails leaves no file.

Flags:
`

const plotExamples = `
Examples:

	opbench plot results/amd-epyc-zen3-2c/baseline-mul_mat.json
	opbench plot -x k -out /tmp/charts results/amd-epyc-zen3-2c/baseline-llama-7b.json
	opbench plot sweep.csv -y gbps
`

type plotConfig struct {
	file, out string
	opts      chart.Options
	warnings  []string // deprecated spellings used
}

func newPlotFlagSet() (*flag.FlagSet, *string, *string, *string) {
	fs := newFlagSet("plot")
	x := fs.String("x", "", "`size` on the x axis: n, m, k, kv, ... (default: per op, the size with the most values)")
	y := fs.String("y", "auto", "throughput `metric`: auto, gflops or gbps")
	o := fs.String("out", "", "`directory` for the charts (default: the file's)")
	cli.Deprecated(fs, "o", "out")
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
	cfg.warnings = cli.Warnings(fs)
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
	warn(stderr, "plot", cfg.warnings)
	set, err := bench.ReadFile(cfg.file)
	if err == nil {
		err = checkRecords(set)
	}
	if err != nil {
		return usageError(stderr, "plot", fmt.Errorf("%s: %w", cfg.file, err))
	}
	if err := cli.CheckFolder("out", cfg.out); err != nil {
		return usageError(stderr, "plot", err)
	}
	var figs []chart.Figure
	err = noPanic(func() (err error) {
		figs, err = chart.Throughput(set, cfg.opts)
		return err
	})
	if err != nil {
		return usageError(stderr, "plot", err)
	}
	var rf chart.Figure
	if err := noPanic(func() (err error) { rf, err = chart.Roofline(set, cfg.opts); return err }); err == nil {
		figs = append(figs, rf)
	} else {
		fmt.Fprintf(stderr, "note: %v\n", err)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "opbench plot: -o: %v\n", err)
		return exitFailure
	}
	base := strings.TrimSuffix(filepath.Base(cfg.file), filepath.Ext(cfg.file))
	paths, err := writeCharts(figs, cfg.out, base)
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "opbench plot: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// checkRecords checks what the charts need of a record set: positive
// sizes (for log scales), and times and rates that are numbers.
func checkRecords(s *bench.Set) error {
	if i, j, dup := s.Duplicate(); dup {
		return fmt.Errorf("records %d and %d are both %s: a chart cannot show two timings of one point (opbench compare refuses them too)", i+1, j+1, s.Records[j].Name())
	}
	for i, r := range s.Records {
		if len(r.Dims) == 0 {
			return fmt.Errorf("record %d (%s %s %s on %s): no dims: a chart's x axis is one of a record's sizes (m, n, k, ...), and this record names none", i+1, r.Op, r.Type, r.Shape, r.Backend)
		}
		for _, d := range slices.Sorted(maps.Keys(r.Dims)) {
			if v := r.Dims[d]; v <= 0 {
				return fmt.Errorf("record %d (%s %s %s): size %s is %d: sizes must be positive", i+1, r.Op, r.Type, r.Shape, d, v)
			}
		}
		for _, v := range []struct {
			name string
			x    float64
		}{{"gflops", r.GFLOPS}, {"gbps", r.GBPS}, {"flop_per_byte", r.Intensity}, {"median_s", r.Median}} {
			if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
				return fmt.Errorf("record %d (%s %s %s): %s is %v", i+1, r.Op, r.Type, r.Shape, v.name, v.x)
			}
		}
	}
	return nil
}

// noPanic runs f, turning a panic (gonum/plot panics on values a scale
// cannot show) into an error.
func noPanic(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("chart: %v", p)
		}
	}()
	return f()
}

// writeCharts writes each figure as DIR/BASE-NAME.png and .svg, each
// atomically (a chart that fails to draw leaves no file), and returns the
// paths written.
func writeCharts(figs []chart.Figure, dir, base string) ([]string, error) {
	var paths []string
	for _, f := range figs {
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(dir, base+"-"+f.Name+"."+format)
			err := cli.WriteAtomic(path, func(w io.Writer) error {
				return noPanic(func() error { return f.Write(w, format) })
			})
			if err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}
