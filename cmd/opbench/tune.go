package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/machineid"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/tuning"
)

const tuneHelp = `Usage: opbench tune [flags]

Searches the CPU backend's tunable kernel parameters on this machine and
keeps the best value of each in results/<machine-id>/tuned.json, which
the CPU backend loads when it opens ($KERNBENCH_TUNED=off runs with the
defaults; $KERNBENCH_TUNED=FILE loads another file). Each parameter is
measured on the op point it matters for (-list shows them): for every
candidate value a CPU backend runs the point with that value, its output
is validated against the float64 reference (a candidate that fails is
left out), and it is timed as opbench sweep times it. The candidates
alternate for -rounds rounds (increasing, then decreasing) and the one of
least median time is kept. Stop other work on the machine while this
runs: the choice is only as good as the timings.

With -model, the decode path's parameters (gemv_rows, x8_prefetch) are
measured on those GGUF models instead: -tokens generated tokens per
candidate and round, after a warm-up, timed per token, each candidate's
last logits checked bit for bit against a run with every default (these
parameters move work, never change it); the cost is the geometric mean
of the models' times per token. A model's decode streams many
matrices, each a few MiB, where the op points stream one; on a Zen 5 the
two chose different prefetch distances, and the model's was the faster
for every model.

tuned.json holds each parameter's chosen value, its default, the point,
and every candidate's times. Exits 1 when a parameter could not be
tuned, 2 for a bad command line.

Flags:
`

const tuneExamples = `
Examples:

	opbench tune                                   (every parameter, results/<machine-id>/tuned.json)
	opbench tune -list
	opbench tune -param cpu.mulmat.gemv_rows -rounds 5 -time 500ms
	opbench tune -model /tmp/kernbench-llama-models/100m-q4_K_M.gguf   (the decode parameters on a model's tokens)
	opbench tune -out /tmp/tuned && KERNBENCH_TUNED=/tmp/tuned/tuned.json go run ./cmd/run -m model.gguf -bench
`

// A tuneSpec says how tune measures a parameter: on its op point (a
// sweep entry at the sizes where the parameter matters), with the
// point's weights marked as a model's (weights: bench.Runner.Weights,
// for the repacked decode path), and whether it is a decode parameter,
// measured on -model's token generation instead when -model is given
// (tune_model.go).
type tuneSpec struct {
	point   bench.Entry
	weights bool
	decode  bool
}

// tuneSpecs are the tunable parameters' specs, by name.
var tuneSpecs = map[string]tuneSpec{
	cpu.GemvRows.Name: {
		point:  bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"q4_0"}, Dims: map[string][]int64{"m": {4096}, "n": {1}, "k": {4096}}},
		decode: true,
	},
	cpu.SgemmRows.Name: {
		point: bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"f16"}, Dims: map[string][]int64{"m": {4096}, "n": {512}, "k": {4096}}},
	},
	// The decode path's DRAM stream: repacked weights of 72 MiB, twice a
	// 32 MiB L3.
	cpu.X8Prefetch.Name: {
		point:   bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"q4_K"}, Dims: map[string][]int64{"m": {16384}, "n": {1}, "k": {8192}}},
		weights: true,
		decode:  true,
	},
	// An f16 matrix in its plain layout (not marked as weights) of 112
	// MiB, from DRAM: there the two kinds differ most (14-38% on a Zen
	// 4; in L3 the integer formats' 15%, which op timings blur).
	cpu.Gemv512.Name: {
		point: bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"f16"}, Dims: map[string][]int64{"m": {4096}, "n": {1}, "k": {14336}}},
	},
	// An f32 matrix in its plain layout of 32 MiB, a Zen 4's or Zen 5's
	// L3, read over and over (partly from L3, partly from DRAM): under
	// tune's timing on a Zen 4 the next-rows prefetch was 1.47x faster
	// there, 5% slower at 16 MiB (held in L3) and 2% faster at 64 MiB.
	cpu.GemvPrefetch.Name: {
		point: bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"f32"}, Dims: map[string][]int64{"m": {4096}, "n": {1}, "k": {2048}}},
	},
	// q4_K from 512 activation rows (the panel path), m=k=4096: on a
	// Zen 4 the AVX2 kernels were 8-29% faster there (alternated call
	// by call), on a Zen 5 the VNNI ones. A call takes 40-55 ms: give it
	// -time 1s (the default 300ms is about five calls a candidate).
	cpu.KTileVNNI.Name: {
		point: bench.Entry{Ops: []string{"mul_mat"}, Types: []string{"q4_K"}, Dims: map[string][]int64{"m": {4096}, "n": {512}, "k": {4096}}},
	},
	// Mamba-2's scan (scalar A) over 64 tokens of 48 heads of 64 rows
	// by 128 states, the tiled kernel's case (a 1.5 MiB state); small
	// enough for the float64 reference to check every candidate.
	cpu.SSMTile512.Name: {
		point: bench.Entry{Ops: []string{"ssm_scan"}, Types: []string{"f32"}, Dims: map[string][]int64{"d_state": {128}, "d_inner": {3072}, "head_dim": {64}, "n": {64}}},
	},
	// Three streams of 8 MiB: past two 1 MiB L2s, within a 32 MiB L3.
	cpu.EltL3Bytes.Name: {
		point: bench.Entry{Ops: []string{"add"}, Types: []string{"f32"}, Dims: map[string][]int64{"k": {4096}, "n": {512}}},
	},
}

// tuneConfig is the parsed command line of tune.
type tuneConfig struct {
	params  []tuning.Param
	threads int
	rounds  int
	time    time.Duration
	m, k    int64 // overrides of the points' sizes (0: as listed)
	// model, when set, is the GGUF file the decode parameters
	// (tuneSpec.decode) are measured on, tokens tokens a candidate and
	// round.
	model   string
	tokens  int
	out     string
	list    bool
	command string
}

// newTuneFlagSet returns tune's flags, filling cfg, and the -param value.
func newTuneFlagSet(cfg *tuneConfig) (*flag.FlagSet, *string) {
	fs := newFlagSet("tune")
	param := fs.String("param", "", "comma-separated `names` of the parameters to tune (default every one; -list shows them)")
	fs.IntVar(&cfg.threads, "t", runtime.NumCPU(), "threads")
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds over the candidates")
	fs.DurationVar(&cfg.time, "time", 300*time.Millisecond, "time to measure a candidate per round")
	fs.Int64Var(&cfg.m, "m", 0, "the points' m instead of their listed one (0: as listed; a point without an m keeps its sizes)")
	fs.Int64Var(&cfg.k, "k", 0, "the points' k instead of their listed one (0: as listed)")
	fs.StringVar(&cfg.out, "out", "", "`directory` for tuned.json (default results/<machine-id>)")
	fs.BoolVar(&cfg.list, "list", false, "list the parameters, their candidates and points, and exit")
	fs.StringVar(&cfg.model, "model", "", "GGUF `files` (comma-separated) whose token generation (the geometric mean of the time per token) measures the decode parameters (cpu.mulmat.gemv_rows, cpu.mulmat.x8_prefetch) instead of their op points; each candidate's logits must equal the defaults' bit for bit")
	fs.IntVar(&cfg.tokens, "tokens", 64, "tokens generated per candidate and round with -model")
	return fs, param
}

func parseTune(args []string) (cfg tuneConfig, help bool, err error) {
	fs, param := newTuneFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, true, nil
		}
		return cfg, false, flagError(err)
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.command = "opbench tune " + strings.Join(args, " ")
	all := cpu.Tunables()
	if *param == "" {
		cfg.params = all
	} else {
		for _, name := range strings.Split(*param, ",") {
			name = strings.TrimSpace(name)
			found := false
			for _, p := range all {
				if p.Name == name {
					cfg.params, found = append(cfg.params, p), true
				}
			}
			if !found {
				names := make([]string, len(all))
				for i, p := range all {
					names[i] = p.Name
				}
				return cfg, false, fmt.Errorf("-param: unknown parameter %q (known: %s)", name, strings.Join(names, ", "))
			}
		}
	}
	switch {
	case cfg.threads < 1 || cfg.threads > 1024:
		return cfg, false, fmt.Errorf("-t: %d is not in 1..1024", cfg.threads)
	case cfg.rounds < 1 || cfg.rounds > 100:
		return cfg, false, fmt.Errorf("-rounds: %d is not in 1..100", cfg.rounds)
	case cfg.time <= 0:
		return cfg, false, fmt.Errorf("-time: %v is not positive", cfg.time)
	case cfg.m < 0 || cfg.k < 0:
		return cfg, false, errors.New("-m, -k: sizes must be positive (0: as listed)")
	case cfg.tokens < 1 || cfg.tokens > 4096:
		return cfg, false, fmt.Errorf("-tokens: %d is not in 1..4096", cfg.tokens)
	}
	return cfg, false, nil
}

func tuneUsage(w io.Writer) {
	fmt.Fprint(w, tuneHelp)
	var c tuneConfig
	fs, _ := newTuneFlagSet(&c)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, tuneExamples)
}

// tunePoint returns the point p is measured on, with the size overrides.
func tunePoint(cfg tuneConfig, p tuning.Param) (bench.PlannedPoint, error) {
	spec, ok := tuneSpecs[p.Name]
	if !ok {
		return bench.PlannedPoint{}, fmt.Errorf("%s has no point to measure it on", p.Name)
	}
	e := spec.point
	dims := map[string][]int64{}
	for k, v := range e.Dims {
		dims[k] = v
	}
	// A point without the size (ADD has no m) keeps its own.
	for name, v := range map[string]int64{"m": cfg.m, "k": cfg.k} {
		if _, has := dims[name]; has && v > 0 {
			dims[name] = []int64{v}
		}
	}
	e.Dims = dims
	pts, _, err := e.Expand()
	if err != nil {
		return bench.PlannedPoint{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if len(pts) != 1 {
		return bench.PlannedPoint{}, fmt.Errorf("%s: %d points, want 1", p.Name, len(pts))
	}
	return pts[0], nil
}

// runTune is "opbench tune".
func runTune(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseTune(args)
	if help {
		tuneUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "tune", err)
	}
	if cfg.list {
		rows := [][]string{}
		for _, p := range cfg.params {
			pt := "-"
			if pp, err := tunePoint(cfg, p); err == nil {
				pt = fmt.Sprintf("%v %v %s", pp.Op, pp.Type, pp.Shape())
			}
			rows = append(rows, []string{p.Name, strconv.Itoa(p.Default), fmt.Sprint(p.Candidates), pt, p.Doc})
		}
		if err := renderTable(stdout, []string{"parameter", "default", "candidates", "point", "what"}, rows); err != nil {
			fmt.Fprintf(stderr, "opbench tune: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	id := machineid.Here()
	out := cfg.out
	if out == "" {
		out = filepath.Join("results", id)
	}
	if err := cli.CheckFolder("out", out); err != nil {
		return usageError(stderr, "tune", err)
	}
	points := make([]bench.PlannedPoint, len(cfg.params))
	for i, p := range cfg.params {
		if points[i], err = tunePoint(cfg, p); err != nil {
			return usageError(stderr, "tune", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prov := bench.DetectProvenance(cfg.command)
	file := &tuning.File{Machine: id, Date: prov.Date, Commit: prov.Commit, Command: cfg.command}
	// Parameters not searched keep their values from the file there.
	if old, err := tuning.ReadFile(filepath.Join(out, tuning.FileName)); err == nil && old.Machine == id {
		for _, r := range old.Params {
			searched := false
			for _, p := range cfg.params {
				searched = searched || p.Name == r.Name
			}
			if !searched {
				file.Params = append(file.Params, r)
			}
		}
	}
	var dec *decodeTuner
	if cfg.model != "" {
		if dec, err = newDecodeTuner(strings.Split(cfg.model, ","), cfg.tokens, cfg.threads); err != nil {
			fmt.Fprintf(stderr, "opbench tune: %v\n", err)
			return exitFailure
		}
		defer dec.Close()
	}
	code := exitOK
	for i, p := range cfg.params {
		pt := points[i]
		desc := fmt.Sprintf("%v %v %s, %d threads", pt.Op, pt.Type, pt.Shape(), cfg.threads)
		measure := func(v int) (float64, error) { return tuneMeasure(cfg, p, v, pt) }
		if dec != nil && tuneSpecs[p.Name].decode {
			desc = fmt.Sprintf("%s, %d threads", dec.point(), cfg.threads)
			measure = func(v int) (float64, error) { return dec.measure(p, v) }
		}
		fmt.Fprintf(stderr, "tuning %s on %s: %d candidates x %d rounds\n", p.Name, desc, len(p.Candidates), cfg.rounds)
		res, err := tuning.Search(p, cfg.rounds, func(v int) (float64, error) {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return measure(v)
		})
		res.Point = desc
		writeTuneTable(stdout, p, res)
		if err != nil {
			fmt.Fprintf(stderr, "opbench tune: %v\n", err)
			code = exitFailure
			continue
		}
		file.Params = append(file.Params, res)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "opbench tune: interrupted; nothing written")
		return exitFailure
	}
	if len(file.Params) == 0 {
		return exitFailure
	}
	path := filepath.Join(out, tuning.FileName)
	if err := tuning.WriteFile(path, file); err != nil {
		fmt.Fprintf(stderr, "opbench tune: %v\n", err)
		return exitFailure
	}
	if cfg.out == "" {
		fmt.Fprintf(stdout, "wrote %s: the CPU backend loads it when run from this folder (%s=off for the defaults)\n", path, tuning.Env)
	} else {
		fmt.Fprintf(stdout, "wrote %s: %s=%s makes the CPU backend load it\n", path, tuning.Env, path)
	}
	return code
}

// tuneMeasure opens a CPU backend with p = v, validates and times pt on
// it, and returns the median time.
func tuneMeasure(cfg tuneConfig, p tuning.Param, v int, pt bench.PlannedPoint) (float64, error) {
	be, err := cpu.NewWithOptions(cpu.Options{Threads: cfg.threads, Tuned: tuning.Values{p.Name: v}})
	if err != nil {
		return 0, err
	}
	defer be.Close()
	ru := &bench.Runner{
		Backends: []bench.Backend{{Name: "cpu-" + be.Tier().Name, Threads: be.Threads(), Backend: be}},
		Protocol: bench.Protocol{Time: cfg.time},
		Weights:  tuneSpecs[p.Name].weights,
	}
	recs := ru.Run([]bench.PlannedPoint{pt})
	if len(recs) != 1 {
		return 0, fmt.Errorf("%d records", len(recs))
	}
	r := recs[0]
	switch {
	case r.Validation == bench.ValidFail || r.Validation == bench.ValidError || r.Validation == bench.ValidUnsupported:
		msg := r.Validation
		if r.Error != "" {
			msg += ": " + r.Error
		}
		return 0, fmt.Errorf("%s = %d: %s", p.Name, v, msg)
	case !r.Timed():
		return 0, fmt.Errorf("%s = %d: not timed", p.Name, v)
	}
	return r.Median, nil
}

// writeTuneTable prints a search's candidates: median time, time over
// the chosen one's, and errors.
func writeTuneTable(w io.Writer, p tuning.Param, res tuning.Result) {
	var best float64
	for _, c := range res.Candidates {
		if c.Value == res.Value && c.Error == "" {
			best = c.Median
		}
	}
	rows := [][]string{}
	for _, c := range res.Candidates {
		mark := ""
		switch {
		case c.Value == res.Value && c.Error == "":
			mark = "chosen"
		case c.Value == p.Default:
			mark = "default"
		}
		if c.Value == res.Value && c.Value == p.Default && c.Error == "" {
			mark = "chosen, default"
		}
		rel, med := "-", "-"
		if c.Error == "" {
			med = seconds(c.Median)
			if best > 0 {
				rel = fmt.Sprintf("%.3f", c.Median/best)
			}
		}
		rows = append(rows, []string{strconv.Itoa(c.Value), med, rel, mark, c.Error})
	}
	fmt.Fprintf(w, "%s on %s\n", p.Name, res.Point)
	if err := renderTable(w, []string{"value", "median", "/chosen", "", "error"}, rows); err != nil {
		fmt.Fprintf(w, "%v\n", err)
	}
}
