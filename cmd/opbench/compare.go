package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/bench"
)

const compareHelp = `Usage: opbench compare [flags] A.json B.json

Joins two record sets (JSON or CSV, as opbench sweep writes them) on their
parameters (op, type, shape, backend, threads) and prints, per point, both
medians, the speed of B relative to A (A's median time over B's: 2.00x
means B takes half the time) and a verdict:

  faster / SLOWER   a two-sided Mann-Whitney U test of the two sets of
                    samples rejects "same distribution" at -alpha, the
                    shift is larger than the spread (each median lies
                    outside the other side's min..max), and B's median is
                    lower / higher;
  ~ within noise    otherwise: the difference is within the samples'
                    spread;
  ? too few samples with so few samples no difference could be shown at
                    -alpha (4 or more on each side are needed at 0.05);
  - emulated        a side ran on an emulator (a record marked emulated,
                    or of a backend named *-emu): its times are not a
                    device's, so no verdict, and no part in the geomean.

Records are judged by their samples: a record whose stored median, min,
max or throughput disagrees with its samples was edited or damaged, and
is refused with its name, as are two records of one point in a set.

The test uses the samples' ranks and the spread check their range, so a
change is judged against the samples' own spread rather than by a fixed
percentage; the test is exact for up to 50 samples a side without ties.
The spread check is there because one run's samples are taken back to
back and do not see the drift between runs on a shared machine. A summary
gives the geometric mean of the speeds and the count of each verdict.

A key field that takes one value in each set but different values between
them (threads 2 in A, 1 in B; backend cpu-generic against cpu-avx2) is left
out of the join automatically, so that such A/B runs pair up; -ignore
leaves out more.

Given two opbench profile record files instead, it joins their kernels
(op, type, shape, backend, kernel and launch number) and lists each
counter that differs by more than 1%: bytes used (the share of the
moved global bytes the lanes asked for), global requests, shared
wavefronts, bank conflicts, warp efficiency, DRAM bytes, tensor share and
the first GPU's estimate, marked better or WORSE, and sectors per request,
marked neutral (wider loads raise it while cutting the requests);
-fail-on-regression exits 1 when one is worse.

Sets from two different machines (machine IDs, as in results/<id>/) are
labelled cross-machine: the speeds are shown, but no point gets a
faster/slower verdict, since they compare two machines rather than two
versions of the code (-fail-on-regression then exits 2).

Exits 1 when -fail-on-regression is set and a point is slower, 2 for a bad
command line or unreadable files.

Flags:
`

const compareExamples = `
Examples:

	opbench compare results/m/base.json results/m/new.json
	opbench compare -fail-on-regression base.json new.json
	opbench compare -alpha 0.01 -ignore backend a.csv b.csv
`

// compareConfig is the parsed command line of compare.
type compareConfig struct {
	a, b       string
	opts       bench.CompareOptions
	failOnRegr bool
}

func newCompareFlagSet() (*flag.FlagSet, *float64, *string, *bool) {
	fs := newFlagSet("compare")
	alpha := fs.Float64("alpha", bench.DefaultAlpha, "significance level of the test, in (0, 1)")
	ignore := fs.String("ignore", "", "comma-separated key `fields` to leave out of the join: "+strings.Join(bench.KeyFields, ", "))
	fail := fs.Bool("fail-on-regression", false, "exit 1 when a point is slower beyond noise")
	return fs, alpha, ignore, fail
}

func parseCompare(args []string) (cfg compareConfig, help bool, err error) {
	fs, alpha, ignore, fail := newCompareFlagSet()
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) != 2 {
		return cfg, false, fmt.Errorf("want two record files A and B, got %d argument(s)", len(pos))
	}
	if !(*alpha > 0 && *alpha < 1) {
		return cfg, false, fmt.Errorf("-alpha: %v is not in (0, 1)", *alpha)
	}
	for _, f := range splitList(*ignore) {
		found := false
		for _, k := range bench.KeyFields {
			found = found || k == f
		}
		if !found {
			return cfg, false, fmt.Errorf("-ignore: unknown field %q (fields: %s)", f, strings.Join(bench.KeyFields, ", "))
		}
		cfg.opts.Ignore = append(cfg.opts.Ignore, f)
	}
	cfg.a, cfg.b = pos[0], pos[1]
	cfg.opts.Alpha, cfg.failOnRegr = *alpha, *fail
	return cfg, false, nil
}

func compareUsage(w io.Writer) {
	fmt.Fprint(w, compareHelp)
	fs, _, _, _ := newCompareFlagSet()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, compareExamples)
}

// runCompare is "opbench compare".
func runCompare(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseCompare(args)
	if help {
		compareUsage(stdout)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	if pa, ok, err := readProfileSet(cfg.a); ok || err != nil {
		pb, okb, errb := readProfileSet(cfg.b)
		switch {
		case err != nil:
			return usageError(stderr, "compare", err)
		case errb != nil:
			return usageError(stderr, "compare", errb)
		case !okb:
			return usageError(stderr, "compare", fmt.Errorf("%s holds opbench profile records, %s does not", cfg.a, cfg.b))
		}
		worse, err := compareProfiles(stdout, pa, pb, cfg.a, cfg.b)
		if err != nil {
			return usageError(stderr, "compare", err)
		}
		if cfg.failOnRegr && worse > 0 {
			fmt.Fprintf(stderr, "opbench compare: %d counter(s) worse\n", worse)
			return exitFailure
		}
		return exitOK
	}
	a, err := bench.ReadFile(cfg.a)
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	b, err := bench.ReadFile(cfg.b)
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	rep, err := bench.Compare(a, b, cfg.opts)
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	fmt.Fprintf(stdout, "A: %s (%s, commit %s, %s)\n", cfg.a, a.Machine.Kind(), a.ShortCommit(), a.Date.Format("2006-01-02 15:04"))
	fmt.Fprintf(stdout, "B: %s (%s, commit %s, %s)\n", cfg.b, b.Machine.Kind(), b.ShortCommit(), b.Date.Format("2006-01-02 15:04"))
	cross := a.Machine.Kind() != b.Machine.Kind()
	if cross {
		fmt.Fprintf(stdout, "cross-machine: A ran on %s, B on %s: the speeds compare two machines, not two versions of the code, so no point gets a faster/slower verdict\n", a.Machine.Kind(), b.Machine.Kind())
	}
	if len(rep.Ignored) > 0 {
		var parts []string
		for _, f := range rep.Ignored {
			parts = append(parts, fmt.Sprintf("%s (A: %s, B: %s)", f, values(a, f), values(b, f)))
		}
		fmt.Fprintf(stdout, "joined ignoring %s\n", strings.Join(parts, ", "))
	}
	if len(rep.Comparisons) == 0 {
		fmt.Fprintln(stderr, "opbench compare: no point is in both sets")
		return exitUsage
	}
	if err := writeCompareTable(stdout, rep, cross); err != nil {
		fmt.Fprintf(stderr, "opbench compare: %v\n", err)
		return exitFailure
	}
	for _, r := range rep.OnlyA {
		fmt.Fprintf(stdout, "only in A: %s\n", r.Key())
	}
	for _, r := range rep.OnlyB {
		fmt.Fprintf(stdout, "only in B: %s\n", r.Key())
	}
	if n := len(rep.Untimed); n > 0 {
		fmt.Fprintf(stdout, "%d record(s) without samples (failed or unsupported) left out\n", n)
	}
	if cross {
		fmt.Fprintf(stdout, "cross-machine (%s against %s): geomean speed B/A %.3fx over %d points; no verdict\n",
			b.Machine.Kind(), a.Machine.Kind(), rep.GeoMean, len(rep.Comparisons)-rep.Count(bench.Emulated))
		if cfg.failOnRegr {
			fmt.Fprintln(stderr, "opbench compare: -fail-on-regression: A and B ran on different machines; a cross-machine comparison has no verdict to fail on")
			return exitUsage
		}
		return exitOK
	}
	slower := rep.Count(bench.Slower)
	emulated := ""
	if n := rep.Count(bench.Emulated); n > 0 {
		emulated = fmt.Sprintf("; %d point(s) of an emulated backend (its times are not a device's) have no verdict and are left out", n)
	}
	fmt.Fprintf(stdout, "geomean speed B/A %.3fx over %d points: %d faster, %d slower, %d within noise, %d with too few samples (Mann-Whitney U, alpha %g)%s\n",
		rep.GeoMean, len(rep.Comparisons)-rep.Count(bench.Emulated), rep.Count(bench.Faster), slower, rep.Count(bench.WithinNoise), rep.Count(bench.TooFewSamples), rep.Alpha, emulated)
	if cfg.failOnRegr && slower > 0 {
		fmt.Fprintf(stderr, "opbench compare: %d point(s) slower beyond noise\n", slower)
		return exitFailure
	}
	return exitOK
}

// values lists the distinct values of a key field in a set.
func values(s *bench.Set, field string) string {
	var out []string
	for _, r := range s.Records {
		v := r.Field(field)
		found := false
		for _, o := range out {
			found = found || o == v
		}
		if !found {
			out = append(out, v)
		}
	}
	return strings.Join(out, ",")
}

// writeCompareTable prints the comparisons; cross (A and B of different
// machines) shows "cross-machine" instead of each speed verdict.
func writeCompareTable(w io.Writer, rep bench.Report, cross bool) error {
	header := []string{"op", "type", "shape", "backend", "threads", "A median", "B median", "speed B/A", "p", "verdict"}
	var rows [][]string
	for _, c := range rep.Comparisons {
		backend, threads := c.A.Backend, strconv.Itoa(c.A.Threads)
		if c.A.Backend != c.B.Backend {
			backend += " / " + c.B.Backend
		}
		if c.A.Threads != c.B.Threads {
			threads += " / " + strconv.Itoa(c.B.Threads)
		}
		verdict := c.Verdict.String()
		if cross && c.Verdict != bench.Emulated {
			verdict = "cross-machine"
		}
		rows = append(rows, []string{c.A.Op, c.A.Type, c.A.Shape, backend, threads,
			seconds(c.A.Median), seconds(c.B.Median), fmt.Sprintf("%.3fx", c.Speedup), fmt.Sprintf("%.3g", c.P), verdict})
	}
	if len(rows) == 0 {
		return errors.New("nothing to compare")
	}
	return renderTable(w, header, rows)
}
