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
	"slices"
	"strings"
	"time"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/chart"
	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/shard"
	"github.com/kernbench/kernbench/ops/registry"
)

const sweepHelp = `Usage: opbench sweep [flags]

Measures ops x types x sizes x backends x threads. Each point is built as a
harness case (inputs drawn once with a fixed seed), computed once and
validated against the float64 reference (or, where the reference would
take too long, checked for memory safety and, for MUL_MAT and
FLASH_ATTN_EXT, validated on a sample of its outputs and recorded
"sampled", else "unvalidated"),
then timed: warm-up, then batches of runs until -time (or a -cost target),
at least -min-samples samples; median, min, max, mean and standard
deviation, and GFLOP/s and GB/s from the op's cost model. Inputs stay the
same across repetitions (cache-warm, as ggml's perf mode).

Points come from flags (-op with -type and sizes), from -preset (model
layer shapes), or from a sweep file (-f). Sizes take comma-separated
values; lo..hi doubles from lo to hi (1..512 is 1,2,4,...,512).

The "% roof" column is the point's GFLOP/s over its roofline bound and the
ceiling that sets it: compute (the f32 FMA peak), int8 (the integer dot
product peak, for the quantized matrix products), cache or dram (read
bandwidth times the point's FLOP per byte).

Writes a table to stdout, a progress line per point to stderr (a bar on a
terminal), and NAME.json and NAME.csv under -out with the machine (cpuid
model and flags, cores, memory), Go version, commit, date, protocol,
roofline and every parameter. Exits 1 if a point failed validation or
could not be measured, 2 for a bad command line.

Sweep file (-f), JSON:

	{
	  "time": "500ms",                 optional, like -time
	  "threads": [1, 2],               optional, like -t
	  "tiers": ["generic", "avx2"],    optional, like -tier
	  "sweeps": [                      cross products, run in order
	    {"ops": ["mul_mat"], "types": ["q4_0", "q8_0"],
	     "dims": {"m": [4096], "n": [1, 8, 32], "k": [4096, 14336]}},
	    {"preset": "llama-3-8b", "types": ["q4_K"], "dims": {"n": [1, 512]}}
	  ]
	}

An entry with "ops" crosses every op with the types it takes (an op that
takes none of them uses its default) and the listed sizes (others take the
op's defaults). An entry with "preset" takes the model's layer shapes
(filtered by "ops" if given), varying only n (tokens, default 1 and 512)
and kv (KV length, default max(512, n)); its types set the matrix
products' weights (default q4_0). Flags -time, -t and -tier override
the file.

On an emulated GPU backend (cuda-emu, metal-emu) a point is validated,
never timed. With -profile (emulated backends only), each point instead
runs once under the SIMT emulator's profiler, as opbench profile runs it:
the table of each kernel launch's counters and its roofline estimate on
-gpu goes to stdout, and the records (opbench profile -json's schema) to
NAME.profile.json and NAME.profile.csv under -out. A sampled launch's
result is not computed, so a profiled point is not validated.

The records are named NAME.json and NAME.csv under -out. Without -name,
NAME is sweep-DATE-TIME, with -2, -3, ... added when a file of that name
exists (two sweeps started in the same second into one folder), so a
default name never overwrites records; -name NAME replaces NAME's files.
Outputs are checked before any point runs (the folder takes files, and
no output is the -f or -roofline file) and written atomically.

Flags:
`

const sweepExamples = `
Presets: %s.

Sizes by op:
%s
Examples:

	opbench sweep -op mul_mat -type q4_0,q8_0,q4_K -m 4096 -n 1,8,32,512 -k 4096,14336 -t 1,2
	opbench sweep -op mul_mat -type q4_0 -n 1..512 -tier generic,avx2 -time 500ms
	opbench sweep -preset llama-7b -n 1,32 -type q4_0,q8_0
	opbench sweep -preset mixtral -op mul_mat_id -n 1
	opbench sweep -op flash_attn_ext -type f16,q8_0 -kv 512,4096 -n 1
	opbench sweep -f sweeps/mine.json -out /tmp/results -name try1 -plot
	opbench sweep -op rms_norm,rope -n 1,512 -list
	opbench sweep -backend cuda-emu -profile -op mul_mat -type q4_0,q8_0 -m 4096 -k 4096 -n 1,512 -gpu h100,l4
	opbench sweep -op mul_mat -type q4_K -n 1 -cpuprofile /tmp/prof    (then go tool pprof -top /tmp/prof/MUL_MAT-q4_K-*.pprof)
`

// sweepFlags holds sweep's raw flag values.
type sweepFlags struct {
	ops, types, presets, file                          string
	be                                                 cli.BackendFlags
	threads                                            []int
	costFlops, costBytes, refBudget, maxMem, out, name string
	roofline, cpuprofile                               string
	time                                               time.Duration
	minSamples                                         int
	plot, list, weights                                bool
	dims                                               map[string]*string
	shard                                              *shardFlags
	// profile and profileOpts are sweep's own (-profile, -gpu, -sample,
	// -regs); commands built on sweep's flags leave them unset.
	profile     bool
	profileOpts func() (profileOptions, error)
}

// dimNames lists every size a benchmark op has, in op order.
func dimNames() []string {
	var out []string
	for _, o := range harness.OpDefs() {
		for _, d := range o.Dims {
			if !slices.Contains(out, d.Name) {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

func newSweepFlagSet() (*flag.FlagSet, *sweepFlags) {
	fs := newFlagSet("sweep")
	f := &sweepFlags{dims: map[string]*string{}}
	fs.StringVar(&f.ops, "op", "", "comma-separated `ops` to sweep, such as mul_mat,flash_attn_ext")
	fs.StringVar(&f.types, "type", "", "comma-separated `types`: weights of matrix products, K/V of flash attention, destination of cpy (default: each op's)")
	fs.StringVar(&f.presets, "preset", "", "comma-separated model `presets` whose layer shapes to sweep (see below)")
	fs.StringVar(&f.file, "f", "", "sweep `file` (JSON, see above) instead of -op/-preset")
	f.be.RegisterLists(fs, "")
	cli.ThreadListVar(fs, &f.threads, "one per CPU")
	cli.Deprecated(fs, "threads", "t")
	fs.DurationVar(&f.time, "time", bench.DefaultTime, "measured time to aim for per point and backend")
	fs.StringVar(&f.costFlops, "cost-flops", "", "stop a point once its timed runs did this many `FLOPs` (such as 1e11), even before -time")
	fs.StringVar(&f.costBytes, "cost-bytes", "", "stop a point once its timed runs moved this many `bytes` (such as 1e11), even before -time")
	fs.IntVar(&f.minSamples, "min-samples", bench.DefaultMinSamples, "fewest samples per point (at least 3)")
	fs.StringVar(&f.refBudget, "ref-budget", fmt.Sprintf("%g", float64(harness.DefaultRefBudget)), "validate a point against the float64 reference only when its reference work (FLOPs + elements) is at most `N`; -1 never")
	fs.StringVar(&f.maxMem, "max-mem", "", "refuse points whose inputs need more host `memory` than this, such as 8G (default half the machine's)")
	fs.StringVar(&f.out, "out", "", "`directory` for the records (default results/<machine-id>)")
	fs.StringVar(&f.name, "name", "", "base `name` of the files, replaced if they exist (default sweep-<date>-<time>, made unique)")
	fs.StringVar(&f.roofline, "roofline", "auto", "`auto`: use DIR/roofline.json when it matches the machine and threads, else measure one (a few seconds) and save it; off; or a roofline.json file")
	fs.BoolVar(&f.plot, "plot", false, "also write the charts (as opbench plot does)")
	fs.BoolVar(&f.weights, "weights", false, "mark the weight operand of MUL_MAT and MUL_MAT_ID as a model's weights, so the CPU backend runs its repacked x8 decode kernels for n < 4 as it does for a GGUF file (records say \"weights\": true); without it the plain layout's kernels run")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of each point's timed runs (not its set-up or validation) into `directory`, one file per point and backend: go tool pprof -top DIR/FILE")
	fs.BoolVar(&f.list, "list", false, "list the points without measuring")
	f.shard = registerShardFlags(fs)
	for _, d := range dimNames() {
		f.dims[d] = fs.String(d, "", "comma-separated `values` of size "+d+" (lo..hi doubles; see Sizes by op)")
	}
	return fs, f
}

// newSweepOnlyFlagSet is sweep's flag set with the flags only sweep has:
// -profile and the profiler's settings.
func newSweepOnlyFlagSet() (*flag.FlagSet, *sweepFlags) {
	fs, f := newSweepFlagSet()
	fs.BoolVar(&f.profile, "profile", false, "on an emulated backend (cuda-emu, metal-emu): run each point once under the emulator's profiler instead, print its kernels' counters and estimates (as opbench profile does) and write NAME.profile.json and NAME.profile.csv")
	f.profileOpts = profileFlags(fs)
	return fs, f
}

// sweepConfig is the parsed command line of sweep.
type sweepConfig struct {
	entries    []bench.Entry
	targets    []registry.Target
	threads    []int
	protocol   bench.Protocol
	refBudget  int64
	maxMem     int64
	out, name  string
	roofline   string
	profileDir string
	plot, list bool
	// weights marks MUL_MAT weights as a model's (bench.Runner.Weights).
	weights bool
	// profile, when set, profiles the points instead of measuring them.
	profile *profileOptions
	command string
	// shard is the shard of the points to run (zero: all), and
	// shardFrom the environment variables it came from, if any.
	shard     shard.Spec
	shardFrom string
	inputs    []cli.Input // the sweep and roofline files read
	warnings  []string    // deprecated spellings used
}

// parseSweep parses sweep's command line into a config; err is one line
// naming the flag at fault.
func parseSweep(args []string) (cfg sweepConfig, help bool, err error) {
	fs, f := newSweepOnlyFlagSet()
	return parseSweepFlags(fs, f, "opbench sweep", args)
}

// parseSweepFlags parses args with sweep's flag set fs (to which a
// command built on sweep, such as ggml, may have added flags of its own).
func parseSweepFlags(fs *flag.FlagSet, f *sweepFlags, command string, args []string) (cfg sweepConfig, help bool, err error) {
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	cfg.command = command + " " + strings.Join(args, " ")

	var spec bench.Spec
	if f.file != "" {
		if f.ops != "" || f.presets != "" || f.types != "" {
			return cfg, false, errors.New("-f: give points in the file or with -op/-preset/-type, not both")
		}
		for name := range f.dims {
			if set[name] {
				return cfg, false, fmt.Errorf("-%s: sizes go in the sweep file when -f is given", name)
			}
		}
		r, err := os.Open(f.file)
		if err != nil {
			return cfg, false, fmt.Errorf("-f: %w", err)
		}
		spec, err = bench.ParseSpec(r)
		r.Close()
		if err != nil {
			return cfg, false, fmt.Errorf("-f %s: %w", f.file, err)
		}
	} else {
		dims := map[string][]int64{}
		for name, v := range f.dims {
			if !set[name] {
				continue
			}
			vals, err := parseInts(*v)
			if err != nil {
				return cfg, false, fmt.Errorf("-%s: %w", name, err)
			}
			if len(vals) == 0 {
				return cfg, false, fmt.Errorf("-%s: no values", name)
			}
			dims[name] = vals
		}
		ops, types, presets := splitList(f.ops), splitList(f.types), splitList(f.presets)
		switch {
		case len(presets) > 0:
			for _, p := range presets {
				spec.Sweeps = append(spec.Sweeps, bench.Entry{Preset: p, Ops: ops, Types: types, Dims: dims})
			}
		case len(ops) > 0:
			spec.Sweeps = []bench.Entry{{Ops: ops, Types: types, Dims: dims}}
		default:
			return cfg, false, errors.New("-op: name the ops to sweep (or -preset, or -f)")
		}
	}
	for i, e := range spec.Sweeps {
		if _, _, err := e.Expand(); err != nil {
			return cfg, false, entryError(f.file, len(spec.Sweeps), i, err)
		}
	}
	cfg.entries = spec.Sweeps

	tiers := splitList(f.be.Tier)
	if !set["tier"] && len(spec.Tiers) > 0 {
		tiers = spec.Tiers
	}
	if cfg.targets, err = selectTargets(splitList(f.be.Name), tiers); err != nil {
		return cfg, false, err
	}
	switch {
	case !set["t"] && len(spec.Threads) > 0:
		cfg.threads = slices.Compact(slices.Clone(spec.Threads))
	case f.threads == nil:
		cfg.threads = []int{runtime.NumCPU()}
	default:
		cfg.threads = f.threads
	}

	cfg.protocol.Time = f.time
	if !set["time"] && spec.Time != "" {
		cfg.protocol.Time, _ = time.ParseDuration(spec.Time) // checked by ParseSpec
	}
	if cfg.protocol.Time <= 0 {
		return cfg, false, fmt.Errorf("-time: %v is not a positive duration", f.time)
	}
	if f.costFlops != "" {
		if cfg.protocol.CostFlops, err = parseCount(f.costFlops); err != nil {
			return cfg, false, fmt.Errorf("-cost-flops: %w", err)
		}
	}
	if f.costBytes != "" {
		if cfg.protocol.CostBytes, err = parseCount(f.costBytes); err != nil {
			return cfg, false, fmt.Errorf("-cost-bytes: %w", err)
		}
	}
	if f.minSamples < bench.MinSamplesFloor {
		return cfg, false, fmt.Errorf("-min-samples: %d is below %d", f.minSamples, bench.MinSamplesFloor)
	}
	cfg.protocol.MinSamples = f.minSamples
	if strings.TrimSpace(f.refBudget) == "-1" {
		cfg.refBudget = -1
	} else if cfg.refBudget, err = parseCount(f.refBudget); err != nil {
		return cfg, false, fmt.Errorf("-ref-budget: %w (or -1)", err)
	} else if cfg.refBudget == 0 {
		cfg.refBudget = -1 // a budget of nothing validates nothing
	}
	if f.maxMem != "" {
		if cfg.maxMem, err = parseBytes(f.maxMem); err != nil {
			return cfg, false, fmt.Errorf("-max-mem: %w", err)
		}
	}
	if f.name != "" && (strings.ContainsAny(f.name, `/\`) || f.name == "." || f.name == "..") {
		return cfg, false, fmt.Errorf("-name: %q must be a file name, not a path", f.name)
	}
	cfg.out, cfg.name, cfg.roofline, cfg.plot, cfg.list = f.out, f.name, f.roofline, f.plot, f.list
	cfg.profileDir = f.cpuprofile
	cfg.weights = f.weights
	if cfg.roofline == "" {
		return cfg, false, errors.New("-roofline: want auto, off or a file")
	}
	cfg.inputs = []cli.Input{{Flag: "f", Path: f.file}}
	if cfg.roofline != "auto" && cfg.roofline != "off" {
		cfg.inputs = append(cfg.inputs, cli.Input{Flag: "roofline", Path: cfg.roofline})
	}
	if cfg.out != "" {
		if err := cli.CheckFolder("out", cfg.out); err != nil {
			return cfg, false, err
		}
	}
	if cfg.profileDir != "" {
		if err := cli.CheckFolder("cpuprofile", cfg.profileDir); err != nil {
			return cfg, false, err
		}
	}
	if err := parseSweepProfile(&cfg, f, set); err != nil {
		return cfg, false, err
	}
	if cfg.shard, cfg.shardFrom, err = f.shard.parse(); err != nil {
		return cfg, false, err
	}
	cfg.warnings = cli.Warnings(fs)
	return cfg, false, nil
}

// parseSweepProfile checks -profile and the profiler's flags (set holds
// the flags given) and fills cfg.profile.
func parseSweepProfile(cfg *sweepConfig, f *sweepFlags, set map[string]bool) error {
	if f.profileOpts == nil {
		return nil
	}
	opts, err := f.profileOpts()
	if err != nil {
		return err
	}
	if !f.profile {
		for _, name := range []string{"gpu", "sample", "regs"} {
			if set[name] {
				return fmt.Errorf("-%s: only with -profile", name)
			}
		}
		return nil
	}
	if err := checkEmulated("-profile", cfg.targets); err != nil {
		return err
	}
	switch {
	case cfg.plot:
		return errors.New("-plot: a profile has no timings to plot")
	case cfg.profileDir != "":
		return errors.New("-cpuprofile: a profile runs on the emulator: use one or the other")
	}
	cfg.profile = &opts
	return nil
}

// flagErr shortens a flag package error to one line; nil stays nil.
func flagErr(err error) error {
	if err == nil {
		return nil
	}
	return flagError(err)
}

// entryError names the flag or sweep entry an expansion error belongs to.
func entryError(file string, n, i int, err error) error {
	if file != "" {
		return fmt.Errorf("-f %s: sweep %d: %w", file, i+1, err)
	}
	msg := err.Error()
	// Expand's errors start with the field: "op: ...", "type: ...", "n: ...".
	if field, rest, ok := strings.Cut(msg, ": "); ok && !strings.Contains(field, " ") {
		switch field {
		case "op", "type", "preset":
			return fmt.Errorf("-%s: %s", field, rest)
		}
		if slices.Contains(dimNames(), field) {
			return fmt.Errorf("-%s: %s", field, rest)
		}
	}
	return errors.New(msg)
}

func sweepUsage(w io.Writer) {
	fmt.Fprint(w, sweepHelp)
	fs, _ := newSweepOnlyFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	var sizes strings.Builder
	for _, o := range harness.OpDefs() {
		fmt.Fprintf(&sizes, "\t%-15s", o.Name())
		for i, d := range o.Dims {
			if i > 0 {
				sizes.WriteString(", ")
			}
			fmt.Fprintf(&sizes, "%s=%d", d.Name, d.Default)
		}
		fmt.Fprintf(&sizes, " (type: %s, default %v)\n", o.TypeRole, o.DefaultType)
	}
	fmt.Fprintf(w, sweepExamples, strings.Join(bench.PresetNames(), ", "), sizes.String())
}

// runSweep is "opbench sweep".
func runSweep(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseSweep(args)
	if help {
		sweepUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "sweep", err)
	}
	warn(stderr, "sweep", cfg.warnings)
	points, notes, err := bench.ExpandAll(cfg.entries)
	if err != nil {
		return usageError(stderr, "sweep", err)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	points, sweepShard, err := shardSweep(cfg, "sweep", nil, points, stderr)
	if err != nil {
		return usageError(stderr, "sweep", err)
	}
	if cfg.list {
		if err := writePoints(stdout, points); err != nil {
			fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "%d points x %d backends x %d thread counts\n", len(points), len(cfg.targets), len(cfg.threads))
		return exitOK
	}

	machine := bench.DetectMachine()
	if cfg.maxMem == 0 && machine.MemoryBytes > 0 {
		cfg.maxMem = machine.MemoryBytes / 2
	}
	exts := []string{".json", ".csv"}
	if cfg.profile != nil {
		exts = []string{".profile.json", ".profile.csv"}
	}
	place, exit := placeSet(stderr, "sweep", cfg.out, cfg.name, "sweep", machine.ID, cfg.inputs, exts...)
	if exit >= 0 {
		return exit
	}
	out, name, unique := place.dir, place.name, place.unique
	if cfg.profile != nil {
		return runSweepProfile(cfg, points, sweepShard, out, name, unique, exts, stdout, stderr)
	}

	var backends []bench.Backend
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	for _, target := range cfg.targets {
		for _, t := range cfg.threads {
			be, err := openBackend(target, t)
			if err != nil {
				return usageError(stderr, "sweep", fmt.Errorf("-backend: %w", err))
			}
			backends = append(backends, be)
		}
	}

	roof, err := sweepRoofline(cfg, machine, out, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "opbench sweep: -roofline: %v\n", err)
		return exitUsage
	}
	set := &bench.Set{
		Schema: bench.Schema, Machine: machine, Provenance: bench.DetectProvenance(cfg.command),
		Protocol: bench.NewProtocolInfo(cfg.protocol, effectiveBudget(cfg.refBudget)), Roofline: roof,
		Sweep: sweepShard,
	}
	runner := &bench.Runner{
		Backends: backends, Protocol: cfg.protocol, RefBudget: cfg.refBudget, MaxMemory: cfg.maxMem,
		Roofline: roof, CacheBytes: cacheBytes(machine),
		Progress:   newProgress(stderr, time.Now()),
		ProfileDir: cfg.profileDir,
		Weights:    cfg.weights,
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "opbench sweep: -cpuprofile: %v\n", err)
			return exitFailure
		}
	}
	// An interrupt stops the sweep after the point in progress; what was
	// measured is still written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runner.Context = ctx
	set.Records = runner.Run(points)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		fmt.Fprintf(stderr, "\nopbench sweep: interrupted after %d of %d records; writing those\n", len(set.Records), len(points)*len(backends))
	}

	if err := writeSweepTable(stdout, set.Records); err != nil {
		fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
		return exitFailure
	}
	paths, name, err := writeSet(set, out, name, unique)
	if err != nil {
		fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
		return exitFailure
	}
	if cfg.plot {
		figs, err := chart.All(set, chart.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "opbench sweep: plot: %v\n", err)
		} else {
			ps, err := writeCharts(figs, out, name)
			paths = append(paths, ps...)
			if err != nil {
				fmt.Fprintf(stderr, "opbench sweep: plot: %v\n", err)
				return exitFailure
			}
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
		summary += fmt.Sprintf(", %d failed (see the valid column)", bad)
		code = exitFailure
	}
	if interrupted {
		summary += " (interrupted)"
		code = exitFailure
	}
	fmt.Fprintf(stdout, "%s; wrote %s\n", summary, strings.Join(paths, ", "))
	return code
}

// runSweepProfile is "opbench sweep -profile": each point runs once on
// each emulated backend under the profiler (opbench profile's code), its
// kernels' table goes to stdout, and the records to DIR/NAME.profile.json
// and .csv (opbench profile -json's schema).
func runSweepProfile(cfg sweepConfig, points []bench.PlannedPoint, sweepShard *bench.SweepShard, dir, name string, unique bool, exts []string, stdout, stderr io.Writer) int {
	set := newProfileSet(cfg.command)
	set.Sweep = sweepShard
	var code int
	set.Points, code = profileTargets("opbench sweep", cfg.targets, points, *cfg.profile, stdout, stderr)
	js, err := profileJSON(set)
	if err != nil {
		fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
		return exitFailure
	}
	cs, err := profileCSV(set)
	if err != nil {
		fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
		return exitFailure
	}
	paths, _, err := writeFiles(dir, name, unique, exts, map[string][]byte{exts[0]: js, exts[1]: cs})
	if err != nil {
		fmt.Fprintf(stderr, "opbench sweep: %v\n", err)
		return exitFailure
	}
	failed := 0
	for _, p := range set.Points {
		if p.Error != "" {
			failed++
		}
	}
	summary := fmt.Sprintf("%d profiled points", len(set.Points))
	if failed > 0 {
		summary += fmt.Sprintf(", %d failed", failed)
	}
	fmt.Fprintf(stdout, "%s (counters and estimates, never times); wrote %s\n", summary, strings.Join(paths, ", "))
	return code
}

// effectiveBudget is the reference budget a run uses.
func effectiveBudget(b int64) int64 {
	if b == 0 {
		return harness.DefaultRefBudget
	}
	return b
}

// cacheBytes is the working set below which points count as in cache:
// the last-level cache.
func cacheBytes(m bench.Machine) int64 {
	switch {
	case m.L3 > 0:
		return int64(m.L3)
	case m.L2 > 0:
		return int64(m.L2)
	}
	return 0
}

// openBackend opens one backend configuration of a sweep, named after
// its target ("cpu-avx2").
func openBackend(target registry.Target, threads int) (bench.Backend, error) {
	be, err := target.Open(threads)
	if err != nil {
		return bench.Backend{}, err
	}
	if n := cli.Threads(be); n > 0 {
		threads = n
	}
	return bench.Backend{Name: target.Name(), Threads: threads, Backend: be}, nil
}

// sweepRoofline returns the roofline for the records: none, a file's, or
// DIR/roofline.json when it matches, else a fresh quick measurement saved
// there.
func sweepRoofline(cfg sweepConfig, m bench.Machine, dir string, stderr io.Writer) (*bench.Roofline, error) {
	switch cfg.roofline {
	case "off":
		return nil, nil
	case "auto":
	default:
		rf, err := readRooflineFile(cfg.roofline)
		if err != nil {
			return nil, err
		}
		if rf.Machine.Kind() != m.Kind() {
			fmt.Fprintf(stderr, "note: roofline %s is of machine %s, this is %s\n", cfg.roofline, rf.Machine.Kind(), m.Kind())
		}
		return &rf.Roofline, nil
	}
	path := filepath.Join(dir, rooflineFile)
	if rf, err := readRooflineFile(path); err == nil && rf.Machine.Kind() == m.Kind() && coversThreads(rf.Roofline, cfg.threads) {
		fmt.Fprintf(stderr, "roofline: from %s (measured %s)\n", path, rf.Roofline.Date.Format(time.RFC3339))
		return &rf.Roofline, nil
	}
	start := time.Now()
	r, err := bench.MeasureRoofline(m, bench.RooflineOptions{Threads: cfg.threads, Time: 150 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	rf := rooflineFileOf(m, r, "opbench sweep (auto roofline)")
	if err := writeRooflineFile(path, rf); err != nil {
		fmt.Fprintf(stderr, "note: roofline not saved: %v\n", err)
	}
	fmt.Fprintf(stderr, "roofline: measured in %.1fs, saved to %s\n", time.Since(start).Seconds(), path)
	return &r, nil
}

func coversThreads(r bench.Roofline, threads []int) bool {
	have := r.Threads()
	for _, t := range threads {
		if _, ok := r.Compute(t); !ok || !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// now is the clock that names sweeps (tests set it).
var now = time.Now

// newProgress returns the runner's progress callback: a bar redrawn in
// place on a terminal, else a line per record.
func newProgress(w io.Writer, start time.Time) func(done, total int, r bench.Record, took time.Duration) {
	term := isTerminal(w)
	return func(done, total int, r bench.Record, took time.Duration) {
		elapsed := time.Since(start)
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done)).Round(time.Second)
		what := fmt.Sprintf("%s %s %s %s %dt", r.Op, r.Type, r.Shape, r.Backend, r.Threads)
		res := r.Validation
		if r.Timed() {
			res = fmt.Sprintf("%s, %s", rateString(r), r.Validation)
		}
		if term {
			const width = 24
			n := width * done / total
			fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d eta %v  %s: %s", strings.Repeat("#", n), strings.Repeat("-", width-n), done, total, eta, what, res)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintf(w, "[%d/%d] %s: %s (%.1fs, eta %v)\n", done, total, what, res, took.Seconds(), eta)
	}
}

// rateString is a record's throughput for progress lines.
func rateString(r bench.Record) string {
	if r.Flops > 0 {
		return fmt.Sprintf("%.2f GFLOP/s, %.2f GB/s", r.GFLOPS, r.GBPS)
	}
	return fmt.Sprintf("%.2f GB/s", r.GBPS)
}
