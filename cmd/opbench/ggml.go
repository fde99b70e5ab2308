package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/chart"
	"github.com/kernbench/kernbench/bench/ggmlperf"
)

const ggmlHelp = `Usage: opbench ggml -ggml PATH [sweep's flags]

Measures the same points on kernbench and on ggml's CPU backend, side by
side on this machine: ggml's own benchmark program, test-backend-ops, which
you build from ggml's public repository (see README.md, "Side by side with
ggml"), times each point in its perf mode, and kernbench times it as
opbench sweep does. The two alternate, point by point, for -rounds rounds
(ggml then kernbench, then kernbench then ggml, ...), so that the machine's
drift reaches both sides alike. Every round gives each side one sample:
ggml's mean time over its runs, kernbench's median over -time.

Points are chosen as in opbench sweep (-op, -type, sizes, -preset, -f).
Each is sent to test-backend-ops as the very node kernbench builds (a line
of its -test-file format: ggml's op and type numbers, shapes, strides and
op parameters), so both sides compute the same op on the same shapes and
parameters. ggml's op numbers change between versions: they are read from
the ggml.h of the tree the binary was built in (found above the binary, or
-ggml-header), and every result is checked to be of the op asked for.
kernbench's side is validated against the float64 reference, once per
point; ggml's output is not seen ("external").

test-backend-ops runs ggml's CPU backend with one thread per CPU and has no
flag for it, so kernbench runs with as many (-t must be left at its
default). Stop other work on the machine while this runs.

Each run of test-backend-ops (one point, one round) runs in a process
group of its own and may take -point-timeout; past it, or on Ctrl-C, it is
killed with its children, and the point is recorded as an error.

Writes the ratio table to stdout (ggml's median time over kernbench's:
above 1, kernbench is faster; the verdict is the Mann-Whitney U test of
opbench compare), and NAME.json / NAME.csv under -out with both sides'
records and ggml's build commit; -plot adds the charts and a bar chart of
the ratios. Exits 1 if a point failed validation, 2 for a bad command line
or a test-backend-ops that cannot be run.

Flags:
`

const ggmlExamples = `
Examples:

	opbench ggml -ggml ~/ggml/build/bin/test-backend-ops -op mul_mat -type f32,f16,q4_0,q8_0,q4_K,q6_K -m 14336 -k 4096 -n 1,512
	KERNBENCH_GGML=~/ggml/build/bin/test-backend-ops opbench ggml -op soft_max,rms_norm,rope -n 1,512 -plot
	opbench ggml -ggml ./test-backend-ops -f results/sweeps/ggml-side-by-side.json -rounds 7
	opbench ggml -ggml ./test-backend-ops -op ssm_scan -list      (the points and the test-file line of each)
	opbench ggml -table results/<machine>/ggml-side-by-side-ops.json   (a record's table again, with each side's range)
`

// ggmlDefaultTime is the time kernbench measures a point per round when
// -time is not given: rounds, not long samples, carry the statistics.
const ggmlDefaultTime = 300 * time.Millisecond

// ggmlConfig is the parsed command line of ggml.
type ggmlConfig struct {
	sweepConfig
	binary, header string
	rounds         int
	goal           float64
	pointTimeout   time.Duration
	// table: print the ratio table of this record (a NAME.json of opbench
	// ggml) and run nothing.
	table string
}

func newGGMLFlagSet() (*flag.FlagSet, *sweepFlags, *string, *string, *int, *float64, *time.Duration, *string) {
	fs, f := newSweepFlagSet()
	fs.Init("ggml", flag.ContinueOnError)
	bin := fs.String("ggml", os.Getenv("KERNBENCH_GGML"), "`path` of ggml's test-backend-ops (default $KERNBENCH_GGML)")
	header := fs.String("ggml-header", "", "the ggml.h `file` the binary was built from (default: include/ggml.h or ggml/include/ggml.h in a folder above the binary)")
	rounds := fs.Int("rounds", 5, "alternating rounds per point; each gives each side one sample (4 or more for a verdict)")
	goal := fs.Float64("goal", 1.25, "the speed ratio the chart marks as the goal (0 for none)")
	timeout := fs.Duration("point-timeout", 10*time.Minute, "the longest one run of test-backend-ops (one point, one round) may take; past it, it is killed with its children and the point is an error")
	table := fs.String("table", "", "print the ratio table of a `record` opbench ggml wrote (NAME.json), with each side's range, and run nothing")
	return fs, f, bin, header, rounds, goal, timeout, table
}

func parseGGML(args []string) (cfg ggmlConfig, help bool, err error) {
	// -table runs nothing, so the sweep's flags are not asked for.
	if cfg.table = ggmlTableFlag(args); cfg.table != "" {
		return cfg, false, nil
	}
	fs, f, bin, header, rounds, goal, timeout, _ := newGGMLFlagSet()
	cfg.sweepConfig, help, err = parseSweepFlags(fs, f, "opbench ggml", args)
	if help || err != nil {
		return cfg, help, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["time"] {
		cfg.protocol.Time = ggmlDefaultTime
	}
	if *bin == "" && !cfg.list {
		return cfg, false, errors.New("-ggml: name ggml's test-backend-ops (or set $KERNBENCH_GGML); see README.md, \"Side by side with ggml\"")
	}
	if len(cfg.threads) != 1 || cfg.threads[0] != runtime.NumCPU() {
		return cfg, false, fmt.Errorf("-t: test-backend-ops runs ggml's CPU backend on every CPU (%d here) and has no flag for it; leave -t at its default", runtime.NumCPU())
	}
	if cfg.profileDir != "" {
		return cfg, false, errors.New("-cpuprofile: profile with opbench sweep; ggml times the same points in alternation here")
	}
	if *rounds < 1 || *rounds > 1000 {
		return cfg, false, fmt.Errorf("-rounds: %d is not in 1..1000", *rounds)
	}
	if *goal < 0 {
		return cfg, false, fmt.Errorf("-goal: %g is negative", *goal)
	}
	if *timeout <= 0 {
		return cfg, false, fmt.Errorf("-point-timeout: %v is not a positive duration", *timeout)
	}
	cfg.binary, cfg.header, cfg.rounds, cfg.goal, cfg.pointTimeout = *bin, *header, *rounds, *goal, *timeout
	return cfg, false, nil
}

// ggmlTableFlag returns the -table of args, parsed with the command's
// own flags (a first parse that only looks for it), or "".
func ggmlTableFlag(args []string) string {
	fs, _, _, _, _, _, _, table := newGGMLFlagSet()
	fs.SetOutput(io.Discard)
	if fs.Parse(args) != nil {
		return ""
	}
	return *table
}

func ggmlUsage(w io.Writer) {
	fmt.Fprint(w, ggmlHelp)
	fs, _, _, _, _, _, _, _ := newGGMLFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, ggmlExamples)
}

// runGGML is "opbench ggml".
func runGGML(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseGGML(args)
	if help {
		ggmlUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "ggml", err)
	}
	if cfg.table != "" {
		return printGGMLTable(cfg.table, stdout, stderr)
	}
	points, notes, err := bench.ExpandAll(cfg.entries)
	if err != nil {
		return usageError(stderr, "ggml", err)
	}
	extra := map[string]string{"ggml": cfg.binary, "rounds": strconv.Itoa(cfg.rounds)}
	points, sweepShard, err := shardSweep(cfg.sweepConfig, "ggml", extra, points, stderr)
	if err != nil {
		return usageError(stderr, "ggml", err)
	}
	var bin *ggmlperf.Binary
	if cfg.binary != "" {
		if bin, err = ggmlperf.Open(cfg.binary, cfg.header); err != nil {
			return usageError(stderr, "ggml", fmt.Errorf("-ggml: %w", err))
		}
		bin.Timeout = cfg.pointTimeout
	}
	if cfg.list {
		return listGGML(stdout, stderr, points, notes, bin)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}

	machine := bench.DetectMachine()
	if cfg.maxMem == 0 && machine.MemoryBytes > 0 {
		cfg.maxMem = machine.MemoryBytes / 2
	}
	place, exit := placeSet(stderr, "ggml", cfg.out, cfg.name, "ggml", machine.ID, cfg.inputs)
	if exit >= 0 {
		return exit
	}
	out, name, unique := place.dir, place.name, place.unique
	side, sideNotes := ggmlperf.NewSide(bin, points, runtime.NumCPU(), "")
	for _, n := range sideNotes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}

	var backends []bench.Backend
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	for _, target := range cfg.targets {
		be, err := openBackend(target, cfg.threads[0])
		if err != nil {
			return usageError(stderr, "ggml", fmt.Errorf("-backend: %w", err))
		}
		backends = append(backends, be)
	}
	roof, err := sweepRoofline(cfg.sweepConfig, machine, out, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "opbench ggml: -roofline: %v\n", err)
		return exitUsage
	}
	set := &bench.Set{
		Schema: bench.Schema, Machine: machine, Provenance: bench.DetectProvenance(cfg.command),
		Protocol: bench.NewProtocolInfo(cfg.protocol, effectiveBudget(cfg.refBudget)), Roofline: roof,
		Baseline: &bench.Baseline{Backend: side.Name(), Program: cfg.binary,
			Notes: fmt.Sprintf("test-backend-ops perf -b CPU --test-file (one case per run), %d rounds alternating with kernbench, %d threads", cfg.rounds, side.Threads())},
		Sweep: sweepShard,
	}
	runner := &bench.Runner{
		Backends: backends, Protocol: cfg.protocol, RefBudget: cfg.refBudget, MaxMemory: cfg.maxMem,
		Roofline: roof, CacheBytes: cacheBytes(machine),
		Progress: newProgress(stderr, time.Now()),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runner.Context = ctx
	set.Records = runner.RunPaired(points, side, cfg.rounds)
	interrupted := ctx.Err() != nil
	stop()
	set.Baseline.Version = side.Commit()
	if interrupted {
		fmt.Fprintf(stderr, "\nopbench ggml: interrupted; writing the %d records measured\n", len(set.Records))
	}

	reports, err := ggmlReports(set)
	if err != nil {
		fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
		return exitFailure
	}
	if err := writeGGMLTable(stdout, set, reports); err != nil {
		fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
		return exitFailure
	}
	paths, name, err := writeSet(set, out, name, unique)
	if err != nil {
		fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
		return exitFailure
	}
	if cfg.plot {
		figs, err := chart.All(set, chart.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "opbench ggml: plot: %v\n", err)
		}
		for _, r := range reports {
			if len(r.rep.Comparisons) == 0 {
				continue
			}
			fig, err := chart.Speedups(r.rep, "kernbench against ggml-cpu, same machine, alternating rounds", "ggml-cpu", r.backend, cfg.goal, chart.Options{})
			if err != nil {
				fmt.Fprintf(stderr, "opbench ggml: plot: %v\n", err)
				continue
			}
			fig.Name = "speedup-" + r.backend
			figs = append(figs, fig)
		}
		ps, err := writeCharts(figs, out, name)
		paths = append(paths, ps...)
		if err != nil {
			fmt.Fprintf(stderr, "opbench ggml: plot: %v\n", err)
			return exitFailure
		}
	}
	code := exitOK
	bad := 0
	for _, r := range set.Records {
		if r.Validation == bench.ValidFail || r.Validation == bench.ValidError {
			bad++
		}
	}
	summary := fmt.Sprintf("%d records", len(set.Records))
	if bad > 0 {
		summary += fmt.Sprintf(", %d failed or could not be measured (see the records' errors)", bad)
		code = exitFailure
	}
	if interrupted {
		summary += " (interrupted)"
		code = exitFailure
	}
	fmt.Fprintf(stdout, "%s; wrote %s\n", summary, strings.Join(paths, ", "))
	return code
}

// listGGML prints the points and, with a binary, each one's test file
// line.
func listGGML(stdout, stderr io.Writer, points []bench.PlannedPoint, notes []string, bin *ggmlperf.Binary) int {
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if bin == nil {
		if err := writePoints(stdout, points); err != nil {
			fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "%d points (give -ggml to see each one's test-backend-ops case)\n", len(points))
		return exitOK
	}
	side, _ := ggmlperf.NewSide(bin, points, runtime.NumCPU(), "")
	rows := make([][]string, 0, len(points))
	for i, p := range points {
		line := "-"
		if c := side.Case(i); c != nil {
			line = c.Line()
		} else if _, _, err := side.Time(context.Background(), i, p); err != nil {
			line = err.Error()
		}
		rows = append(rows, []string{p.Op.String(), p.Type.String(), p.Shape(), line})
	}
	if err := renderTable(stdout, []string{"op", "type", "shape", "test-backend-ops test file line"}, rows); err != nil {
		fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%d points\n", len(points))
	return exitOK
}

// ggmlReport is the comparison of ggml's records with one kernbench
// backend's.
type ggmlReport struct {
	backend string
	rep     bench.Report
}

// ggmlReports compares ggml's records (A) with each kernbench backend's
// (B), joined on op, type and shape.
func ggmlReports(s *bench.Set) ([]ggmlReport, error) {
	base := s.Baseline.Backend
	a := &bench.Set{Schema: s.Schema}
	byBackend := map[string]*bench.Set{}
	var order []string
	for _, r := range s.Records {
		if r.Backend == base {
			a.Records = append(a.Records, r)
			continue
		}
		b, ok := byBackend[r.Backend]
		if !ok {
			b = &bench.Set{Schema: s.Schema}
			byBackend[r.Backend] = b
			order = append(order, r.Backend)
		}
		b.Records = append(b.Records, r)
	}
	var out []ggmlReport
	for _, name := range order {
		rep, err := bench.Compare(a, byBackend[name], bench.CompareOptions{Ignore: []string{"backend"}})
		if err != nil {
			return nil, fmt.Errorf("compare with %s: %w", name, err)
		}
		out = append(out, ggmlReport{backend: name, rep: rep})
	}
	return out, nil
}

// printGGMLTable prints the ratio table of the record at path, as the
// run that wrote it printed it (with the ranges of each side's samples,
// which records written before the table had them lack in their text).
func printGGMLTable(path string, stdout, stderr io.Writer) int {
	set, err := readSideRecord(path, "ggml", ggmlperf.SideName)
	if err != nil {
		return usageError(stderr, "ggml", fmt.Errorf("-table: %w", err))
	}
	reports, err := ggmlReports(set)
	if err == nil {
		err = writeGGMLTable(stdout, set, reports)
	}
	if err != nil {
		fmt.Fprintf(stderr, "opbench ggml: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// writeGGMLTable prints, per point and kernbench backend, both medians
// with the range of their samples (one a round: ggml's mean over its runs,
// kernbench's median over -time), the ratio and the verdict, each side's
// share of the point's roofline bound (roofPair), then the points a side
// did not time.
func writeGGMLTable(w io.Writer, s *bench.Set, reports []ggmlReport) error {
	header := []string{"op", "type", "shape", "thr", "ggml median (range)", "backend", "median (range)", "kernbench/ggml", "p", "verdict", "valid", "% of roof ggml, kernbench"}
	var rows [][]string
	for _, r := range reports {
		for _, c := range r.rep.Comparisons {
			rows = append(rows, []string{c.A.Op, c.A.Type, c.A.Shape, strconv.Itoa(c.B.Threads), secondsRange(c.A.Median, c.A.Min, c.A.Max),
				c.B.Backend, secondsRange(c.B.Median, c.B.Min, c.B.Max), fmt.Sprintf("%.2fx", c.Speedup), fmt.Sprintf("%.3g", c.P), c.Verdict.String(), c.B.Validation,
				roofPair(c.A, c.B)})
		}
	}
	if len(rows) > 0 {
		if err := renderTable(w, header, rows); err != nil {
			return err
		}
	}
	for _, r := range s.Records {
		if r.Timed() {
			continue
		}
		msg := r.Validation
		if r.Error != "" {
			msg += ": " + r.Error
		}
		fmt.Fprintf(w, "not timed: %s %s %s on %s: %s\n", r.Op, r.Type, r.Shape, r.Backend, msg)
	}
	for _, r := range reports {
		if len(r.rep.Comparisons) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s against ggml-cpu: geomean %.3fx over %d points: %d faster, %d slower, %d within noise, %d with too few samples (alpha %g)\n",
			r.backend, r.rep.GeoMean, len(r.rep.Comparisons), r.rep.Count(bench.Faster), r.rep.Count(bench.Slower), r.rep.Count(bench.WithinNoise), r.rep.Count(bench.TooFewSamples), r.rep.Alpha)
	}
	return nil
}

// roofPair is both sides' share of a point's roofline bound and the
// ceiling that sets it, "87%, 90% compute" (the ceiling named once when
// both share it), or "-" where a record has none (no roofline, or an
// emulated time). A ratio near 1.0 means little when both sides sit
// under a third of the bound, and all there is when both are near it.
func roofPair(a, b bench.Record) string {
	if a.RooflinePct <= 0 || b.RooflinePct <= 0 {
		return "-"
	}
	if a.Roof == b.Roof {
		return fmt.Sprintf("%.0f%%, %.0f%% %s", a.RooflinePct, b.RooflinePct, a.Roof)
	}
	return roofPct(a) + ", " + roofPct(b)
}

// readSideRecord reads the record at path for a -table flag: a set that
// opbench cmd wrote, whose baseline is side (ggml-cpu, llama.cpp).
func readSideRecord(path, cmd, side string) (*bench.Set, error) {
	set, err := bench.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if set.Baseline == nil || set.Baseline.Backend != side {
		return nil, fmt.Errorf("%s is not a record of opbench %s (no %s baseline)", path, cmd, side)
	}
	return set, nil
}
