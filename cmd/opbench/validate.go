package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/shard"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
)

const validateHelp = `Usage: opbench validate [flags]

Runs the harness's case matrix (every op, type and edge shape) on a
backend and compares each output with the float64 reference: NMSE, max
absolute error, NaN/Inf mismatches and writes out of bounds, against the
tolerance table. Prints a table and "N passed, M failed"; exits 1 if any
case failed, 2 for a bad command line. With no flags it validates every
case on the CPU with all cores.

Flags:
`

const validateExamples = `
Examples:

	opbench validate
	opbench validate -op mul_mat,soft_max -type q4_0,f16
	opbench validate -op flash_attn_ext -case sinks -v
	opbench validate -backend cpu -t 1 -json results/validate.json
	opbench validate -tier generic -op mul_mat     # one CPU tier only (default: every tier this CPU supports)
	opbench validate -backend cpu-avx2 -op rope    # the same, by the variant's name
	opbench validate -backend all                  # every backend that can open here (opbench backends lists them)
	opbench validate -large -op mul_mat -type q4_K
	opbench validate -list -op rope
`

// validateConfig is the parsed command line of validate.
type validateConfig struct {
	filter   harness.Filter
	backends []registry.Target
	threads  int
	json     string
	verbose  bool
	large    bool
	list     bool
	warnings []string // deprecated spellings used
	// shard is the shard of the cases to run (zero: all), and shardFrom
	// the environment variables it came from, if any.
	shard     shard.Spec
	shardFrom string
}

// validateFlags holds validate's raw flag values.
type validateFlags struct {
	ops, types, caseSub, json string
	be                        cli.BackendFlags
	threads                   int
	verbose, large, list      bool
	shard                     *shardFlags
}

// newValidateFlagSet declares validate's flags on a new FlagSet.
func newValidateFlagSet(out io.Writer) (*flag.FlagSet, *validateFlags) {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(out) // for PrintDefaults; parse errors are reported by the caller
	fs.Usage = func() {}
	f := &validateFlags{}
	fs.StringVar(&f.ops, "op", "", "comma-separated `ops` to run, such as mul_mat,soft_max (default all)")
	fs.StringVar(&f.types, "type", "", "comma-separated `types`: keep cases exercising any of them, such as q4_0,f16 (default all)")
	f.be.RegisterLists(fs, "all")
	cli.ThreadsVar(fs, &f.threads, "worker threads of the CPU backend")
	cli.Deprecated(fs, "threads", "t")
	fs.StringVar(&f.caseSub, "case", "", "keep cases whose name contains this `substring`")
	fs.StringVar(&f.json, "json", "", "also write the results as a JSON array to `file` (- for stdout, instead of the table); checked before any case runs")
	fs.BoolVar(&f.verbose, "v", false, "show tolerances and times, the errors refused cases got, the inputs of failed cases, and progress on stderr")
	fs.BoolVar(&f.large, "large", false, "add the large (model-sized) cases")
	fs.BoolVar(&f.list, "list", false, "list the selected cases without running them")
	f.shard = registerShardFlags(fs)
	return fs, f
}

// parseValidate parses validate's flags. help reports -h; err is a
// one-line description of a bad flag or value.
func parseValidate(args []string) (cfg validateConfig, help bool, err error) {
	fs, f := newValidateFlagSet(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, true, nil
		}
		return cfg, false, err
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range splitList(f.ops) {
		o, err := ops.ParseOp(s)
		if err != nil {
			return cfg, false, fmt.Errorf("-op: %w", err)
		}
		if o == ops.OpNone || o.IsView() {
			return cfg, false, fmt.Errorf("-op: %v computes nothing and has no cases", o)
		}
		cfg.filter.Ops = append(cfg.filter.Ops, o)
	}
	for _, s := range splitList(f.types) {
		t, err := quant.ParseType(s)
		if err != nil {
			return cfg, false, fmt.Errorf("-type: %w", err)
		}
		cfg.filter.Types = append(cfg.filter.Types, t)
	}
	if cfg.backends, err = selectTargets(splitList(f.be.Name), splitList(f.be.Tier)); err != nil {
		return cfg, false, err
	}
	if f.json != "" && f.json != "-" {
		if err := cli.CheckOutputs(nil, cli.Output{Flag: "json", Path: f.json}); err != nil {
			return cfg, false, err
		}
	}
	if cfg.shard, cfg.shardFrom, err = f.shard.parse(); err != nil {
		return cfg, false, err
	}
	cfg.warnings = cli.Warnings(fs)
	cfg.filter.Name = f.caseSub
	cfg.threads, cfg.json, cfg.verbose, cfg.large, cfg.list = f.threads, f.json, f.verbose, f.large, f.list
	return cfg, false, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func validateUsage(w io.Writer) {
	fmt.Fprint(w, validateHelp)
	fs, _ := newValidateFlagSet(w)
	fs.PrintDefaults()
	fmt.Fprint(w, validateExamples)
}

// runValidate is "opbench validate".
func runValidate(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseValidate(args)
	if help {
		validateUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "opbench validate: %v\n", err)
		fmt.Fprintln(stderr, `run "opbench validate -h" for usage`)
		return exitUsage
	}
	warn(stderr, "validate", cfg.warnings)
	cases := harness.Cases()
	if cfg.large {
		cases = append(cases, harness.LargeCases()...)
	}
	cases = harness.Select(cases, cfg.filter)
	if len(cases) == 0 {
		fmt.Fprintln(stderr, "opbench validate: no case matches the -op, -type and -case filters")
		return exitUsage
	}
	cases, sweepShard, err := shardCases(cfg, cases, stderr)
	if err != nil {
		return usageError(stderr, "validate", err)
	}
	if cfg.list {
		if err := writeCases(stdout, cases); err != nil {
			fmt.Fprintf(stderr, "opbench validate: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "%d cases\n", len(cases))
		return exitOK
	}

	var results []harness.Result
	var lost error // a backend that lost its context and could not be reopened
	for _, target := range cfg.backends {
		// A session replaces the backend after a case that lost its
		// device context (a GPU's sticky fault), so that one faulting
		// kernel does not fail every later case.
		sess, err := harness.OpenSession(target.Name(), func() (ops.Backend, error) { return target.Open(cfg.threads) })
		if err != nil {
			fmt.Fprintf(stderr, "opbench validate: %v\n", err)
			return exitUsage
		}
		sess.Notice = func(line string) { fmt.Fprintf(stderr, "opbench validate: %s\n", line) }
		threads := cli.Threads(sess.Backend())
		for i, c := range cases {
			r, err := sess.Run(c)
			r.Threads = threads
			r.Backend = target.Name()
			if cfg.verbose {
				fmt.Fprintf(stderr, "[%d/%d] %s %s: %s\n", i+1, len(cases), target.Name(), c.ID(), r.Summary())
			}
			results = append(results, r)
			if err != nil {
				lost = err
				break
			}
		}
		if err := sess.Close(); err != nil {
			fmt.Fprintf(stderr, "opbench validate: closing backend %s: %v\n", target.Name(), err)
		}
		if lost != nil {
			break
		}
	}

	code := report(cfg, results, stdout, stderr)
	if lost != nil {
		fmt.Fprintf(stderr, "opbench validate: stopped: %v\n", lost)
		code = exitFailure
	}
	if cfg.json != "" {
		if err := writeJSON(cfg.json, results, sweepShard, stdout); err != nil {
			fmt.Fprintf(stderr, "opbench validate: %v\n", err)
			return exitFailure
		}
	}
	return code
}

// report prints the table (unless JSON goes to stdout), the details of
// failures and the summary line, and returns the exit code.
func report(cfg validateConfig, results []harness.Result, stdout, stderr io.Writer) int {
	out := stdout
	if cfg.json == "-" {
		out = stderr
	} else if err := writeResults(stdout, results, cfg.verbose); err != nil {
		fmt.Fprintf(stderr, "opbench validate: %v\n", err)
		return exitFailure
	}
	// A build or load failure is the backend's, not a kernel's: its cause
	// goes to stderr once, and the cases it failed point to it.
	buildErrs := map[string]bool{}
	for _, r := range results {
		if r.Reason == harness.KernelBuildReason && !buildErrs[r.Backend+"\x00"+r.Err] {
			buildErrs[r.Backend+"\x00"+r.Err] = true
			fmt.Fprintf(stderr, "opbench validate: %s: %s\n", r.Backend, r.Err)
		}
	}
	shown := map[string]bool{}
	for _, r := range results {
		if r.Passed() {
			// -v shows what a refused or rejected case was told, so the
			// error a user of the library would see is on record.
			if cfg.verbose && r.Err != "" {
				fmt.Fprintf(out, "%s %s/%s/%s\n\terror: %s\n", r.Status, r.OpName, r.Types, r.Case, r.Err)
			}
			continue
		}
		fmt.Fprintf(out, "%s %s/%s/%s: %s\n", r.Status, r.OpName, r.Types, r.Case, r.Summary())
		switch {
		case r.Reason == harness.KernelBuildReason && shown[r.Backend+"\x00"+r.Err]:
			fmt.Fprintf(out, "\terror: as above (see stderr)\n")
		case r.Err != "":
			shown[r.Backend+"\x00"+r.Err] = true
			fmt.Fprintf(out, "\terror: %s\n", r.Err)
		}
		if cfg.verbose {
			for _, in := range r.Inputs {
				fmt.Fprintf(out, "\tinput %s\n", in)
			}
		}
	}
	passed, failed, skipped := harness.Tally(results)
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped (unsupported by the backend)", skipped)
	}
	fmt.Fprintln(out, summary)
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// shardedResults is validate -json's record of a shard: which shard of
// which run of the case matrix, and its results.
type shardedResults struct {
	Sweep   *bench.SweepShard `json:"sweep"`
	Results []harness.Result  `json:"results"`
}

// shardCases keeps cfg's shard of cases and returns them with the record
// of the split (nil when not sharded).
func shardCases(cfg validateConfig, cases []harness.Case, stderr io.Writer) ([]harness.Case, *bench.SweepShard, error) {
	if !cfg.shard.Sharded() {
		return cases, nil, nil
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.ID()
	}
	def := sweepDef{Points: names, Backends: targetNames(cfg.backends), Threads: []int{cfg.threads}}
	idx, info, err := shardPlan("validate", def, names, caseCosts(cases), cfg.shard)
	if err != nil {
		return nil, nil, err
	}
	mine := make([]harness.Case, len(idx))
	for i, j := range idx {
		mine[i] = cases[j]
	}
	reportShard(stderr, "opbench validate", info, cfg.shardFrom, len(mine), len(cases), "cases")
	return mine, info, nil
}

// writeJSON writes results as an indented JSON array to path, or to stdout
// for "-"; the results of a shard (sweepShard not nil) are an object that
// says which shard they are, {"sweep": ..., "results": [...]}.
func writeJSON(path string, results []harness.Result, sweepShard *bench.SweepShard, stdout io.Writer) error {
	if results == nil {
		results = []harness.Result{}
	}
	var v any = results
	if sweepShard != nil {
		v = shardedResults{Sweep: sweepShard, Results: results}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return cli.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
