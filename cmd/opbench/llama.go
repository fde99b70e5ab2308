package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/llamabench"
	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/model"
)

const llamaHelp = `Usage: opbench llama -llama-bench PATH -run PATH [flags] MODEL.gguf...

Measures whole models side by side on this machine: llama.cpp's
llama-bench (built from llama.cpp's public repository, see README.md,
"Side by side with llama.cpp") and kernbench's own run -bench, on the same
GGUF files with the same settings (-p, -n, -r, -t, -fa). For each model
the two alternate for -rounds rounds, one process each per round (in even
rounds llama-bench goes first, in odd ones kernbench, continuing across
models), so that the machine's drift reaches both alike. Each process has
the time limit -timeout and runs in a process group of its own, which is
killed at the limit.

Both programs report every repetition's time (llama-bench's -o json
fields, which run -bench writes too); a test's samples are all the
repetitions of all rounds. The table gives each side's median tokens/s
with the range of its samples beside it, kernbench's speed over
llama.cpp's (the ratio of the median times: above 1, kernbench is faster),
the Mann-Whitney p-value and the verdict of opbench compare (faster or
slower only outside the noise: 4 or more samples a side are needed), and
for tg tests the bytes a second each side streamed: the weight bytes a
decode step reads (model.DecodeWeightBytes: every tensor once, one row
of the token embeddings, the used experts' share of a mixture's), plus a
recurrent model's states read and written once (DecodeStateBytes), times
tokens/s. Before every run -dram reads a buffer far larger than the
last-level cache, on transparent huge pages where the kernel gives them,
with the CPU's widest loads (bench.DRAMProbe), so that
a decode's bandwidth stands beside the DRAM read bandwidth the machine
gave in the same minutes (a shared host's moves by half within the
hour): the "% of DRAM" column is each side's tg bandwidth over the
median of the model's probes, and the probes are the set's roofline.
Writes both sides' records to NAME.json / NAME.csv
under -out, with llama.cpp's build commit. Exits 1 if a run failed, 2 for
a bad command line.

Flags:
`

const llamaExamples = `
Examples:

	opbench llama -llama-bench ~/llama.cpp/build/bin/llama-bench -run ./run model.gguf
	opbench llama -llama-bench ./llama-bench -run ./run -p 512 -n 128 -r 3 -rounds 2 -name llama-side-by-side a.gguf b.gguf
	opbench llama -llama-bench ./llama-bench -run ./run -p 0 -n 128 -run-args "-backend cpu:generic" m.gguf
	make llama-side LLAMA_BENCH=~/llama.cpp/build/bin/llama-bench     (the issue-25 models, made and measured)
	opbench llama -table results/<machine>/llama-side-by-side.json   (a record's table again)
`

// llamaConfig is the parsed command line of llama.
type llamaConfig struct {
	llamaBench, run string
	runArgs         []string
	params          llamabench.Params
	rounds          int
	timeout, dram   time.Duration
	out, name       string
	models          []string
	command         string
	// table: print the table of this record (a NAME.json of opbench
	// llama) and run nothing.
	table string
}

func newLlamaFlagSet() (*flag.FlagSet, *llamaFlags) {
	fs := newFlagSet("llama")
	f := &llamaFlags{}
	fs.StringVar(&f.llamaBench, "llama-bench", os.Getenv("KERNBENCH_LLAMA_BENCH"), "`path` of llama.cpp's llama-bench (default $KERNBENCH_LLAMA_BENCH)")
	fs.StringVar(&f.run, "run", os.Getenv("KERNBENCH_RUN"), "`path` of kernbench's run command, built with go build ./cmd/run (default $KERNBENCH_RUN)")
	fs.StringVar(&f.runArgs, "run-args", "", "more `flags` for run, before the common ones (such as \"-backend cpu:generic\")")
	fs.StringVar(&f.prompt, "p", "512", "prompt lengths (ppN tests), comma-separated; 0 for none")
	fs.StringVar(&f.gen, "n", "128", "generation lengths (tgN tests), comma-separated; 0 for none")
	fs.IntVar(&f.reps, "r", 3, "repetitions of each test per run")
	fs.IntVar(&f.rounds, "rounds", 2, "runs of each program per model, alternating")
	fs.IntVar(&f.threads, "t", runtime.NumCPU(), "threads, for both programs")
	fs.StringVar(&f.fa, "fa", "on", "flash attention in both programs: on or off")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "time limit of one program run (0: none)")
	fs.StringVar(&f.out, "out", "", "`directory` for the records (default results/<machine-id>)")
	fs.StringVar(&f.name, "name", "", "the records' file name without extension (default llama-<date>-<time>, never replacing a file)")
	fs.DurationVar(&f.dram, "dram", 500*time.Millisecond, "time to measure the DRAM read bandwidth before each run (0: not measured)")
	fs.StringVar(&f.table, "table", "", "print the table of a `record` opbench llama wrote (NAME.json) and run nothing")
	return fs, f
}

// llamaFlags are the flags' values before checking.
type llamaFlags struct {
	llamaBench, run, runArgs, prompt, gen, fa, out, name, table string
	reps, rounds, threads                                       int
	timeout, dram                                               time.Duration
}

func parseLlama(args []string) (cfg llamaConfig, help bool, err error) {
	fs, f := newLlamaFlagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, true, nil
		}
		return cfg, false, flagError(err)
	}
	cfg.command = "opbench llama " + strings.Join(args, " ")
	if f.table != "" {
		// -table runs nothing, so the run's flags are not asked for.
		cfg.table = f.table
		return cfg, false, nil
	}
	switch {
	case f.llamaBench == "":
		return cfg, false, errors.New("-llama-bench: name llama.cpp's llama-bench (or set $KERNBENCH_LLAMA_BENCH); see README.md, \"Side by side with llama.cpp\"")
	case f.run == "":
		return cfg, false, errors.New("-run: name kernbench's run command (go build -o run ./cmd/run; or set $KERNBENCH_RUN)")
	case fs.NArg() == 0:
		return cfg, false, errors.New("no model: give one or more GGUF files after the flags")
	case f.rounds < 1 || f.rounds > 100:
		return cfg, false, fmt.Errorf("-rounds: %d is not in 1..100", f.rounds)
	case f.reps < 1 || f.reps > 1000:
		return cfg, false, fmt.Errorf("-r: %d is not in 1..1000", f.reps)
	case f.threads < 1 || f.threads > 1024:
		return cfg, false, fmt.Errorf("-t: %d is not in 1..1024", f.threads)
	case f.fa != "on" && f.fa != "off":
		return cfg, false, fmt.Errorf("-fa: %q is not on or off", f.fa)
	case f.timeout < 0:
		return cfg, false, fmt.Errorf("-timeout: %v is negative", f.timeout)
	case f.dram < 0 || f.dram > time.Minute:
		return cfg, false, fmt.Errorf("-dram: %v is not in 0..1m", f.dram)
	}
	for _, p := range []struct{ flag, path string }{{"llama-bench", f.llamaBench}, {"run", f.run}} {
		if err := checkExecutable(p.path); err != nil {
			return cfg, false, fmt.Errorf("-%s: %w", p.flag, err)
		}
	}
	if cfg.params.Prompt, err = tokenCounts(f.prompt); err != nil {
		return cfg, false, fmt.Errorf("-p: %w", err)
	}
	if cfg.params.Gen, err = tokenCounts(f.gen); err != nil {
		return cfg, false, fmt.Errorf("-n: %w", err)
	}
	cfg.params.Reps, cfg.params.Threads, cfg.params.FlashAttn = f.reps, f.threads, f.fa == "on"
	if err := cfg.params.Check(); err != nil {
		return cfg, false, fmt.Errorf("-p, -n: %w", err)
	}
	for _, m := range fs.Args() {
		st, err := os.Stat(m)
		if err != nil {
			return cfg, false, fmt.Errorf("model: %w", err)
		}
		if !st.Mode().IsRegular() {
			return cfg, false, fmt.Errorf("model: %s is not a file", m)
		}
		cfg.models = append(cfg.models, m)
	}
	cfg.llamaBench, cfg.run, cfg.runArgs = f.llamaBench, f.run, strings.Fields(f.runArgs)
	cfg.rounds, cfg.timeout, cfg.dram, cfg.out, cfg.name = f.rounds, f.timeout, f.dram, f.out, f.name
	return cfg, false, nil
}

// checkExecutable reports a path that is not an executable file.
func checkExecutable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// tokenCounts parses a comma-separated list of token counts (0 allowed:
// no test of that kind).
func tokenCounts(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("%q is not a token count", item)
		}
		if v < 0 || v > 1<<20 {
			return nil, fmt.Errorf("%d is not in 0..%d", v, 1<<20)
		}
		out = append(out, v)
	}
	return out, nil
}

func llamaUsage(w io.Writer) {
	fmt.Fprint(w, llamaHelp)
	fs, _ := newLlamaFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, llamaExamples)
}

// The backend names of the two sides in the records.
const (
	llamaSide     = "llama.cpp"
	kernbenchSide = "kernbench"
)

// runLlama is "opbench llama".
func runLlama(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseLlama(args)
	if help {
		llamaUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "llama", err)
	}
	if cfg.table != "" {
		return printLlamaTable(cfg.table, stdout, stderr)
	}
	machine := bench.DetectMachine()
	place, exit := placeSet(stderr, "llama", cfg.out, cfg.name, "llama", machine.ID, nil)
	if exit >= 0 {
		return exit
	}
	out, name, unique := place.dir, place.name, place.unique

	llama := &llamabench.Program{Backend: llamaSide, Path: cfg.llamaBench, Limit: cfg.timeout}
	kern := &llamabench.Program{Backend: kernbenchSide, Path: cfg.run, Args: append([]string{"-bench"}, cfg.runArgs...), Limit: cfg.timeout}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	total := len(cfg.models) * cfg.rounds * 2
	done := 0
	var probe *bench.DRAMProbe
	if cfg.dram > 0 {
		if probe, err = bench.NewDRAMProbe(cfg.params.Threads, bench.DefaultDRAMBytes(machine)); err != nil {
			fmt.Fprintf(stderr, "opbench llama: %v\n", err)
			return exitFailure
		}
	}
	probes := map[string][]bench.Peak{} // by model
	runs := llamabench.Pair(ctx, cfg.models, llama, kern, cfg.rounds, cfg.params, func(model string, round int, side string) {
		done++
		dram := ""
		if probe != nil {
			pk := probe.Measure(cfg.dram)
			probes[model] = append(probes[model], pk)
			dram = fmt.Sprintf(" (DRAM read %.1f GB/s)", pk.Median)
		}
		fmt.Fprintf(stderr, "[%d/%d %s] %s, round %d: %s%s\n", done, total, time.Since(start).Round(time.Second), filepath.Base(model), round+1, side, dram)
	})
	probe = nil // release the probe's buffer (256 MiB or more) before the records are made
	interrupted := ctx.Err() != nil
	stop()
	failed := 0
	version := ""
	for _, r := range runs {
		if r.Err != nil {
			failed++
			fmt.Fprintf(stderr, "opbench llama: %s, round %d, %s: %v\n", filepath.Base(r.Model), r.Round+1, r.Side, r.Err)
		}
		if r.Side == llamaSide && len(r.Results) > 0 {
			version = r.Results[0].BuildCommit
		}
	}
	fa := "off"
	if cfg.params.FlashAttn {
		fa = "on"
	}
	decode := map[string]int64{} // bytes a decoded token reads, by model path
	for _, m := range cfg.models {
		b, err := decodeBytes(m)
		if err != nil {
			fmt.Fprintf(stderr, "opbench llama: %s: the bytes a decode step reads are not known, so tg bandwidths are the file size times tokens/s: %v\n", filepath.Base(m), err)
			continue
		}
		decode[m] = b
	}
	set := &bench.Set{
		Schema: bench.Schema, Machine: machine, Provenance: bench.DetectProvenance(cfg.command),
		Protocol: bench.ProtocolInfo{Inputs: "llama-bench's tests: random tokens from an empty cache each repetition, one warm-up run"},
		Baseline: &bench.Baseline{Backend: llamaSide, Program: cfg.llamaBench, Version: version,
			Notes: fmt.Sprintf("llama-bench and run -bench (%s) with -p %s -n %s -r %d -t %d -fa %s -o json, %d rounds alternating, one process per model, program and round",
				cfg.run, joinCounts(cfg.params.Prompt), joinCounts(cfg.params.Gen), cfg.params.Reps, cfg.params.Threads, fa, cfg.rounds)},
		Records: llamabench.Records(runs, cfg.params.Threads, kernbenchSide, decode),
	}
	if len(probes) > 0 {
		set.Roofline = &bench.Roofline{MachineID: machine.ID, Date: start.UTC().Truncate(time.Second),
			Note: fmt.Sprintf("DRAM read bandwidth measured for %v before every run, one peak per model over its runs", cfg.dram)}
	}
	for _, m := range cfg.models {
		if ps := probes[m]; len(ps) > 0 {
			pk := poolPeaks(ps, filepath.Base(m))
			set.Roofline.Peaks = append(set.Roofline.Peaks, pk)
			setDRAMShare(set.Records, filepath.Base(m), pk.Median)
		}
	}
	writeLlamaHeader(stdout, set)
	if err := writeLlamaTable(stdout, set); err != nil {
		fmt.Fprintf(stderr, "opbench llama: %v\n", err)
		return exitFailure
	}
	paths, _, err := writeSet(set, out, name, unique)
	if err != nil {
		fmt.Fprintf(stderr, "opbench llama: %v\n", err)
		return exitFailure
	}
	summary := fmt.Sprintf("%d records", len(set.Records))
	code := exitOK
	if failed > 0 {
		summary += fmt.Sprintf(", %d failed runs", failed)
		code = exitFailure
	}
	if interrupted {
		summary += " (interrupted)"
		code = exitFailure
	}
	fmt.Fprintf(stdout, "%s; wrote %s\n", summary, strings.Join(paths, ", "))
	return code
}

func orUnknown(s string) string {
	if s == "" {
		return "(build unknown)"
	}
	return s
}

func joinCounts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// printLlamaTable prints the table of the record at path as the run that
// wrote it printed it, after the same header line (writeLlamaHeader).
func printLlamaTable(path string, stdout, stderr io.Writer) int {
	set, err := readSideRecord(path, "llama", llamaSide)
	if err != nil {
		return usageError(stderr, "llama", fmt.Errorf("-table: %w", err))
	}
	writeLlamaHeader(stdout, set)
	if err := writeLlamaTable(stdout, set); err != nil {
		fmt.Fprintf(stderr, "opbench llama: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// writeLlamaHeader prints the line above a table: the record's machine,
// its runs' threads, llama.cpp's build and kernbench's commit.
func writeLlamaHeader(w io.Writer, s *bench.Set) {
	version, threads := "", 0
	if s.Baseline != nil {
		version = s.Baseline.Version
	}
	if len(s.Records) > 0 {
		threads = s.Records[0].Threads
	}
	fmt.Fprintf(w, "%s (%s), %d threads; llama.cpp %s, kernbench %s\n", s.Machine.String(), s.Machine.ID, threads, orUnknown(version), s.ShortCommit())
}

// writeLlamaTable prints, per model and test, both sides' median speeds
// with their ranges, the ratio and its verdict, then the records without
// a time.
func writeLlamaTable(w io.Writer, s *bench.Set) error {
	a, b := &bench.Set{Schema: s.Schema}, &bench.Set{Schema: s.Schema}
	for _, r := range s.Records {
		if r.Backend == llamaSide {
			a.Records = append(a.Records, r)
		} else {
			b.Records = append(b.Records, r)
		}
	}
	rep, err := bench.Compare(a, b, bench.CompareOptions{Ignore: []string{"backend"}})
	if err != nil {
		return err
	}
	header := []string{"model", "type", "test", "llama.cpp t/s", "kernbench t/s", "kernbench/llama.cpp", "p", "verdict", "streamed GB/s llama.cpp, kernbench", "% of DRAM read"}
	var rows [][]string
	for _, c := range rep.Comparisons {
		gbps, pct := "-", "-"
		if c.A.GBPS > 0 || c.B.GBPS > 0 {
			gbps = fmt.Sprintf("%.1f, %.1f", c.A.GBPS, c.B.GBPS)
		}
		r := c.B
		if r.RooflinePct <= 0 {
			r = c.A
		}
		if r.RooflinePct > 0 {
			// Both sides' shares are of the model's one DRAM figure,
			// which either record gives back.
			pct = fmt.Sprintf("%.0f%%, %.0f%% of %.1f", c.A.RooflinePct, c.B.RooflinePct, 100*r.GBPS/r.RooflinePct)
		}
		rows = append(rows, []string{c.A.Shape, c.A.Type, c.A.Op, speedRange(c.A), speedRange(c.B),
			fmt.Sprintf("%.2fx", c.Speedup), fmt.Sprintf("%.3g", c.P), c.Verdict.String(), gbps, pct})
	}
	if len(rows) > 0 {
		if err := renderTable(w, header, rows); err != nil {
			return err
		}
	}
	for _, r := range s.Records {
		if r.Error != "" {
			fmt.Fprintf(w, "%s %s on %s: %s\n", r.Shape, r.Op, r.Backend, r.Error)
		}
	}
	if n := len(rep.Comparisons); n > 0 {
		fmt.Fprintf(w, "kernbench against llama.cpp: geomean %.3fx over %d tests: %d faster, %d slower, %d within noise, %d with too few samples (alpha %g)\n",
			rep.GeoMean, n, rep.Count(bench.Faster), rep.Count(bench.Slower), rep.Count(bench.WithinNoise), rep.Count(bench.TooFewSamples), rep.Alpha)
	}
	return nil
}

// speedRange is a record's median tokens/s and the range of its
// samples' speeds: "812.3 (790.1-830.0)".
func speedRange(r bench.Record) string {
	tokens := float64(r.Dims["p"] + r.Dims["n"])
	if tokens == 0 || r.Median <= 0 {
		return "-"
	}
	f := func(s float64) string {
		v := tokens / s
		if v >= 100 || math.IsInf(v, 0) {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%s (%s-%s)", f(r.Median), f(r.Max), f(r.Min))
}

// decodeBytes is the bytes a decode step of a GGUF file's model moves:
// model.DecodeWeightBytes plus model.DecodeStateBytes.
func decodeBytes(path string) (int64, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w, err := model.DecodeWeightBytes(f)
	if err != nil {
		return 0, err
	}
	st, err := model.DecodeStateBytes(f)
	if err != nil {
		return 0, err
	}
	return w + st, nil
}

// poolPeaks joins one model's DRAM probes into one peak: the best of
// their bests, the median of their medians, all their samples.
func poolPeaks(ps []bench.Peak, model string) bench.Peak {
	pk := ps[0]
	pk.Kernel += ", before each run on " + model
	meds := make([]float64, len(ps))
	pk.Samples = 0
	for i, p := range ps {
		pk.Best = max(pk.Best, p.Best)
		pk.Samples += p.Samples
		meds[i] = p.Median
	}
	pk.Median = bench.Summarize(meds).Median
	return pk
}

// setDRAMShare sets the tg records of a model (by file name) beside the
// DRAM read bandwidth measured with them: Roof "dram", and their
// bandwidth as a percentage of it.
func setDRAMShare(recs []bench.Record, model string, dram float64) {
	for i := range recs {
		r := &recs[i]
		if r.Shape == model && r.Dims["n"] > 0 && r.Dims["p"] == 0 && r.GBPS > 0 {
			r.Roof, r.RooflinePct = bench.LevelDRAM, 100*r.GBPS/dram
		}
	}
}
