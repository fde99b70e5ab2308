package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/bench/chart"
	"github.com/kernbench/kernbench/internal/cli"
)

const mergeHelp = `Usage: opbench merge [flags] OUT SHARD.json...

Joins the shards of a sharded sweep (opbench sweep, ggml or profile run
with -shard i/n, or in a job array) into one record set. Each shard's
records carry the sweep's ID and its whole point list with the shard each
point went to, so the merge is checked against the sweep's own list:

  - every shard 0..n-1 of the sweep must be given; a missing one is named
    with the points it holds;
  - every point of a shard must have its records (an interrupted shard is
    named with the points it lacks), and no record may be outside the
    sweep or in a shard other than its point's;
  - shards of different sweeps (another ID: any flag that changes a point
    changes it), the same shard twice, and a point measured twice are
    refused, with the files named.

Records are kept apart by machine (the machine ID of results/<id>/): the
shards of each machine are merged on their own into
OUT/<machine-id>/NAME.json and NAME.csv, so a fleet that ran the same
sweep on several kinds of machine gets one set per machine, and the
shards of one machine must all be there. opbench profile records (the
emulator's counters, the same on any machine) go to OUT/NAME.profile.json
and NAME.profile.csv.

Exits 1 when a check fails (nothing is written then), 2 for a bad command
line or unreadable files.

Flags:
`

const mergeExamples = `
Examples:

	opbench merge results shards/shard-0.json shards/shard-1.json shards/shard-2.json
	opbench merge -name llama-7b -plot results shards/*.json
`

// mergeConfig is the parsed command line of merge.
type mergeConfig struct {
	out, name string
	plot      bool
	inputs    []string
}

func parseMerge(args []string) (cfg mergeConfig, help bool, err error) {
	fs := newFlagSet("merge")
	fs.StringVar(&cfg.name, "name", "", "base `name` of the merged files (default the sweep's ID), replaced if they exist")
	fs.BoolVar(&cfg.plot, "plot", false, "also write the merged set's charts (as opbench plot does)")
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) < 2 {
		return cfg, false, fmt.Errorf("want OUT and at least one shard's record set, got %d argument(s)", len(pos))
	}
	if cfg.name != "" && (strings.ContainsAny(cfg.name, `/\`) || cfg.name == "." || cfg.name == "..") {
		return cfg, false, fmt.Errorf("-name: %q must be a file name, not a path", cfg.name)
	}
	cfg.out, cfg.inputs = pos[0], pos[1:]
	if err := cli.CheckFolder("OUT", cfg.out); err != nil {
		return cfg, false, err
	}
	return cfg, false, nil
}

// shardInput is one shard's record set as merge checks it.
type shardInput struct {
	path    string
	machine string // "" for profile records
	sweep   *bench.SweepShard
	points  []string // each record's point
	keys    []string // each record's key (point, backend, threads)
	commit  string
}

// mergeGroup is the shards of one machine: the merge of one set.
type mergeGroup struct {
	machine string
	members []int // indices into the inputs
}

// runMerge is "opbench merge".
func runMerge(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseMerge(args)
	if help {
		fmt.Fprint(stdout, mergeHelp)
		fs := newFlagSet("merge")
		fs.String("name", "", "base `name` of the merged files (default the sweep's ID), replaced if they exist")
		fs.Bool("plot", false, "also write the merged set's charts (as opbench plot does)")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fmt.Fprint(stdout, mergeExamples)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "merge", err)
	}
	var (
		ins      []shardInput
		benchs   []*bench.Set
		profiles []*profileSet
	)
	for _, path := range cfg.inputs {
		in := shardInput{path: path}
		ps, isProfile, err := readProfileSet(path)
		if err != nil {
			return usageError(stderr, "merge", err)
		}
		if isProfile {
			in.sweep, in.commit = ps.Sweep, ps.Provenance.Commit
			for _, p := range ps.Points {
				pt := p.Op + "/" + p.Type + "/" + p.Shape
				in.points = append(in.points, pt)
				in.keys = append(in.keys, pt+" backend="+p.Backend)
			}
			profiles = append(profiles, ps)
		} else {
			s, err := bench.ReadFile(path)
			if err != nil {
				return usageError(stderr, "merge", err)
			}
			in.machine, in.sweep, in.commit = s.Machine.Kind(), s.Sweep, s.Commit
			for _, r := range s.Records {
				in.points = append(in.points, r.Point())
				in.keys = append(in.keys, r.Key())
			}
			benchs = append(benchs, s)
		}
		if in.sweep == nil {
			return usageError(stderr, "merge", fmt.Errorf("%s is not a shard of a sweep (no \"sweep\" record: a .csv, or a set made without -shard): merge the .json files of a sharded run", path))
		}
		if in.sweep.Merged {
			return usageError(stderr, "merge", fmt.Errorf("%s is already a merge of all %d shards of %s", path, in.sweep.Shards, in.sweep.ID))
		}
		ins = append(ins, in)
	}
	if len(benchs) > 0 && len(profiles) > 0 {
		return usageError(stderr, "merge", errors.New("the inputs mix opbench profile records and sweep records: merge each kind on its own"))
	}

	groups := groupByMachine(ins)
	var problems []string
	for _, g := range groups {
		problems = append(problems, checkShards(ins, g)...)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "opbench merge: %s\n", p)
		}
		fmt.Fprintf(stderr, "opbench merge: nothing written (%d problem(s))\n", len(problems))
		return exitFailure
	}

	for _, g := range groups {
		first := ins[g.members[0]]
		name := cfg.name
		if name == "" {
			name = first.sweep.ID
		}
		var commits []string
		for _, m := range g.members {
			if !slices.Contains(commits, ins[m].commit) {
				commits = append(commits, ins[m].commit)
			}
		}
		if len(commits) > 1 {
			fmt.Fprintf(stderr, "opbench merge: note: the shards of %s were made at different commits (%s); the merged set names the first\n", first.sweep.ID, strings.Join(commits, ", "))
		}
		var paths []string
		var n int
		if profiles != nil {
			set := mergeProfiles(profiles, g, args)
			n = len(set.Points)
			paths, err = writeMergedProfile(set, cfg.out, name)
		} else {
			set := mergeBench(benchs, g, args)
			n = len(set.Records)
			paths, err = writeMergedBench(set, filepath.Join(cfg.out, g.machine), name, cfg.plot, stderr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "opbench merge: %v\n", err)
			return exitFailure
		}
		where := ""
		if g.machine != "" {
			where = " on " + g.machine
		}
		fmt.Fprintf(stdout, "merged %d shards of %s%s: %d records of %d points; wrote %s\n", first.sweep.Shards, first.sweep.ID, where, n, len(first.sweep.Points), strings.Join(paths, ", "))
	}
	return exitOK
}

// groupByMachine groups the inputs by machine, in order of first
// appearance.
func groupByMachine(ins []shardInput) []mergeGroup {
	var groups []mergeGroup
	at := map[string]int{}
	for i, in := range ins {
		j, ok := at[in.machine]
		if !ok {
			j = len(groups)
			at[in.machine] = j
			groups = append(groups, mergeGroup{machine: in.machine})
		}
		groups[j].members = append(groups[j].members, i)
	}
	return groups
}

// checkShards checks one machine's shards against their sweep's point
// list and returns each problem found, naming files, shards and points.
func checkShards(ins []shardInput, g mergeGroup) []string {
	var problems []string
	on := ""
	if g.machine != "" {
		on = " on machine " + g.machine
	}
	first := ins[g.members[0]]
	// One sweep: the same ID, count and point list in every shard.
	for _, m := range g.members[1:] {
		in := ins[m]
		if in.sweep.ID != first.sweep.ID {
			problems = append(problems, fmt.Sprintf("%s is shard %d/%d of sweep %s, but %s is shard %d/%d of sweep %s%s: shards of different sweeps (the flags that define their points differ)",
				first.path, first.sweep.Shard, first.sweep.Shards, first.sweep.ID, in.path, in.sweep.Shard, in.sweep.Shards, in.sweep.ID, on))
			continue
		}
		if in.sweep.Shards != first.sweep.Shards || !slices.Equal(pointList(in.sweep), pointList(first.sweep)) {
			problems = append(problems, fmt.Sprintf("%s and %s are both of sweep %s but split it differently (made by different versions of opbench?)", first.path, in.path, in.sweep.ID))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	sw := first.sweep
	shardOf := map[string]int{}
	for _, p := range sw.Points {
		shardOf[p.Point] = p.Shard
	}
	// Each shard once.
	byShard := map[int]int{}
	again := map[int]bool{} // inputs that repeat a shard
	for _, m := range g.members {
		in := ins[m]
		if prev, ok := byShard[in.sweep.Shard]; ok {
			problems = append(problems, fmt.Sprintf("%s and %s are both shard %d/%d of %s%s", ins[prev].path, in.path, in.sweep.Shard, sw.Shards, sw.ID, on))
			again[m] = true
			continue
		}
		byShard[in.sweep.Shard] = m
	}
	// Every shard there.
	for s := 0; s < sw.Shards; s++ {
		if _, ok := byShard[s]; ok {
			continue
		}
		var pts []string
		for _, p := range sw.Points {
			if p.Shard == s {
				pts = append(pts, p.Point)
			}
		}
		problems = append(problems, fmt.Sprintf("shard %d/%d of %s%s is missing: its %d point(s) %s", s, sw.Shards, sw.ID, on, len(pts), listSome(pts)))
	}
	// Every record in its shard, every point of a shard measured, no
	// point measured twice.
	seen := map[string]string{}
	for _, m := range g.members {
		if again[m] {
			continue
		}
		in := ins[m]
		have := map[string]bool{}
		for i, pt := range in.points {
			have[pt] = true
			s, ok := shardOf[pt]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: record %s is not a point of sweep %s", in.path, in.keys[i], sw.ID))
			case s != in.sweep.Shard:
				problems = append(problems, fmt.Sprintf("%s: record %s belongs to shard %d/%d, not to this file's shard %d", in.path, in.keys[i], s, sw.Shards, in.sweep.Shard))
			}
			if prev, dup := seen[in.keys[i]]; dup {
				where := "both " + prev + " and " + in.path
				if prev == in.path {
					where = in.path + " twice"
				}
				problems = append(problems, fmt.Sprintf("duplicated point %s: in %s", in.keys[i], where))
				continue
			}
			seen[in.keys[i]] = in.path
		}
		var lacking []string
		for _, p := range sw.Points {
			if p.Shard == in.sweep.Shard && !have[p.Point] {
				lacking = append(lacking, p.Point)
			}
		}
		if len(lacking) > 0 {
			problems = append(problems, fmt.Sprintf("%s (shard %d/%d of %s) lacks %d of its points (interrupted?): %s", in.path, in.sweep.Shard, sw.Shards, sw.ID, len(lacking), listSome(lacking)))
		}
	}
	return problems
}

// pointList is a split's points and their shards as text.
func pointList(s *bench.SweepShard) []string {
	out := make([]string, len(s.Points))
	for i, p := range s.Points {
		out[i] = fmt.Sprintf("%s@%d", p.Point, p.Shard)
	}
	return out
}

// listSome lists up to five items, and how many more.
func listSome(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// mergedSweep is the sweep record of a merge of all of sw's shards.
func mergedSweep(sw *bench.SweepShard) *bench.SweepShard {
	return &bench.SweepShard{ID: sw.ID, Shards: sw.Shards, Merged: true, Points: sw.Points}
}

// pointOrder returns a sort key putting points in the sweep's order.
func pointOrder(sw *bench.SweepShard) map[string]int {
	order := map[string]int{}
	for i, p := range sw.Points {
		order[p.Point] = i
	}
	return order
}

// mergeProvenance is the merged set's provenance: the first shard's, the
// latest date, dirty if any shard was, and the command of the merge.
func mergeProvenance(provs []bench.Provenance, args []string) bench.Provenance {
	p := provs[0]
	for _, q := range provs[1:] {
		if q.Date.After(p.Date) {
			p.Date = q.Date
		}
		p.Dirty = p.Dirty || q.Dirty
	}
	p.Command = fmt.Sprintf("opbench merge %s (shards made by: %s)", strings.Join(args, " "), provs[0].Command)
	return p
}

// mergeBench joins a machine's sweep record sets, records in sweep
// order.
func mergeBench(sets []*bench.Set, g mergeGroup, args []string) *bench.Set {
	ordered := make([]*bench.Set, 0, len(g.members))
	for _, m := range g.members {
		ordered = append(ordered, sets[m])
	}
	sort.SliceStable(ordered, func(a, b int) bool { return ordered[a].Sweep.Shard < ordered[b].Sweep.Shard })
	out := *ordered[0]
	var provs []bench.Provenance
	out.Records = nil
	for _, s := range ordered {
		provs = append(provs, s.Provenance)
		out.Records = append(out.Records, s.Records...)
	}
	order := pointOrder(ordered[0].Sweep)
	sort.SliceStable(out.Records, func(a, b int) bool { return order[out.Records[a].Point()] < order[out.Records[b].Point()] })
	out.Provenance = mergeProvenance(provs, args)
	out.Sweep = mergedSweep(ordered[0].Sweep)
	return &out
}

// mergeProfiles joins profile record sets (one group: no machine).
func mergeProfiles(sets []*profileSet, g mergeGroup, args []string) profileSet {
	ordered := make([]*profileSet, 0, len(g.members))
	for _, m := range g.members {
		ordered = append(ordered, sets[m])
	}
	sort.SliceStable(ordered, func(a, b int) bool { return ordered[a].Sweep.Shard < ordered[b].Sweep.Shard })
	out := *ordered[0]
	out.Points = nil
	var provs []bench.Provenance
	for _, s := range ordered {
		provs = append(provs, s.Provenance)
		out.Points = append(out.Points, s.Points...)
	}
	order := pointOrder(ordered[0].Sweep)
	key := func(p profilePoint) int { return order[p.Op+"/"+p.Type+"/"+p.Shape] }
	sort.SliceStable(out.Points, func(a, b int) bool { return key(out.Points[a]) < key(out.Points[b]) })
	out.Provenance = mergeProvenance(provs, args)
	out.Sweep = mergedSweep(ordered[0].Sweep)
	return out
}

// writeMergedBench writes a merged set (and its charts) as DIR/NAME.json
// and .csv.
func writeMergedBench(set *bench.Set, dir, name string, plot bool, stderr io.Writer) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths, name, err := writeSet(set, dir, name, false)
	if err != nil || !plot {
		return paths, err
	}
	figs, err := chart.All(set, chart.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "opbench merge: plot: %v\n", err)
		return paths, nil
	}
	ps, err := writeCharts(figs, dir, name)
	return append(paths, ps...), err
}

// writeMergedProfile writes merged profile records as
// DIR/NAME.profile.json and .csv.
func writeMergedProfile(set profileSet, dir, name string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	js, err := profileJSON(set)
	if err != nil {
		return nil, err
	}
	cs, err := profileCSV(set)
	if err != nil {
		return nil, err
	}
	exts := []string{".profile.json", ".profile.csv"}
	paths, _, err := writeFiles(dir, name, false, exts, map[string][]byte{exts[0]: js, exts[1]: cs})
	return paths, err
}
