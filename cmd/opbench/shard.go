package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/internal/shard"
	"github.com/kernbench/kernbench/ops/registry"
)

// getenv reads the job array's environment (tests replace it).
var getenv = os.Getenv

// shardFlags holds -shard and -shard-count, which validate, sweep, ggml
// and profile share.
type shardFlags struct {
	spec  string
	count int
}

// registerShardFlags declares -shard and -shard-count on fs.
func registerShardFlags(fs *flag.FlagSet) *shardFlags {
	f := &shardFlags{}
	fs.StringVar(&f.spec, "shard", "", "run only shard `i/n` of the points (i from 0 to n-1), split by estimated cost, the same on every machine; the records say which shard of which sweep they are (opbench merge joins them). Default: from $SLURM_ARRAY_TASK_ID and $SLURM_ARRAY_TASK_COUNT, or $JOB_COMPLETION_INDEX with -shard-count")
	fs.IntVar(&f.count, "shard-count", 0, "the shard `count` when the index comes from the environment: a Kubernetes Indexed Job's completions ($JOB_COMPLETION_INDEX), or to override $SLURM_ARRAY_TASK_COUNT")
	return f
}

// parse returns the shard asked for (the zero Spec for none) and, when it
// came from the environment, the variables it came from.
func (f *shardFlags) parse() (shard.Spec, string, error) {
	if f.count < 0 {
		return shard.Spec{}, "", fmt.Errorf("-shard-count: %d is negative", f.count)
	}
	if f.spec != "" {
		if f.count != 0 {
			return shard.Spec{}, "", errors.New("-shard-count: the count is in -shard i/n; give one or the other")
		}
		sp, err := shard.Parse(f.spec)
		if err != nil {
			return shard.Spec{}, "", fmt.Errorf("-shard: %w", err)
		}
		return sp, "", nil
	}
	sp, from, err := shard.FromEnv(getenv, f.count)
	if err != nil {
		return shard.Spec{}, "", fmt.Errorf("-shard: %w", err)
	}
	return sp, from, nil
}

// The rates a point's cost is estimated at, to balance shards. They are
// constants, not this machine's: every shard must split a sweep the same
// way wherever it runs. Only their ratios matter.
const (
	estFlopRate = 10e9  // FLOP/s of a timed run
	estByteRate = 10e9  // B/s of a timed run
	estPrepRate = 200e6 // bytes of inputs drawn, packed and written per second
	estRefRate  = 200e6 // float64 reference work per second
	estEmuRate  = 20e6  // FLOPs plus bytes per second on the SIMT emulator
	estFixed    = 0.05  // seconds of set-up any point takes
	// estSampled bounds a profiled point's emulator time: the profiler
	// runs a sample of about -sample blocks of a large launch, so its
	// work stops growing with the op's.
	estSampled = 2.0
)

// estimatePoint is the estimated seconds one configuration (a backend and
// thread count) takes on point p of a sweep measured by prot, validated
// within refBudget (0: the default; -1: never). An emulated backend
// validates and never times; profiled (opbench profile, sweep -profile)
// runs once under the profiler with a sample of each launch's blocks.
func estimatePoint(p bench.PlannedPoint, prot bench.Protocol, refBudget int64, emulated, profiled bool) float64 {
	pl := p.Plan
	work := float64(pl.Cost.Flops + pl.Cost.Bytes)
	prep := estFixed + float64(pl.Memory)/estPrepRate
	if profiled {
		// Sampled launches run a bounded number of blocks.
		return prep + min(work/estEmuRate, estSampled)
	}
	budget := effectiveBudget(refBudget)
	ref := 0.0
	if budget > 0 && pl.RefWork <= budget {
		ref = float64(pl.RefWork) / estRefRate
	}
	if emulated {
		return prep + ref + work/estEmuRate
	}
	prot = prot.WithDefaults()
	run := float64(pl.Cost.Flops)/estFlopRate + float64(pl.Cost.Bytes)/estByteRate
	timed := max(prot.Time.Seconds(), float64(prot.MinSamples)*run)
	return prep + ref + prot.Warmup.Seconds() + run + timed
}

// sweepCosts is the estimated cost of each point over every target and
// thread count of cfg.
func sweepCosts(cfg sweepConfig, points []bench.PlannedPoint) []float64 {
	costs := make([]float64, len(points))
	for i, p := range points {
		for _, t := range cfg.targets {
			emu := bench.EmulatedBackend(t.Name())
			costs[i] += float64(len(cfg.threads)) * estimatePoint(p, cfg.protocol, cfg.refBudget, emu, cfg.profile != nil)
		}
	}
	return costs
}

// sweepDef is what a sweep's ID is derived from: everything that decides
// its points and how each is measured, and nothing else (not the output,
// the charts, the roofline or the shard).
type sweepDef struct {
	Points    []string          `json:"points"`
	Backends  []string          `json:"backends"`
	Threads   []int             `json:"threads,omitempty"`
	Protocol  bench.Protocol    `json:"protocol"`
	RefBudget int64             `json:"ref_budget"`
	MaxMem    int64             `json:"max_mem"`
	Extra     map[string]string `json:"extra,omitempty"`
}

// targetNames returns the targets' names.
func targetNames(ts []registry.Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// pointNames lists the points as PlannedPoint.String names them.
func pointNames(points []bench.PlannedPoint) []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = p.String()
	}
	return out
}

// shardPlan splits items (named by names, with costs) of the sweep kind
// defined by def into sp.Count shards, and returns the indices of shard
// sp.Index's items in list order and the record of the split. With sp
// not sharded it returns every index and no record.
func shardPlan(kind string, def any, names []string, costs []float64, sp shard.Spec) ([]int, *bench.SweepShard, error) {
	if !sp.Sharded() {
		idx := make([]int, len(names))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil, nil
	}
	id, err := shard.ID(kind, def)
	if err != nil {
		return nil, nil, err
	}
	assign, err := shard.Split(costs, sp.Count)
	if err != nil {
		return nil, nil, err
	}
	info := &bench.SweepShard{ID: id, Shard: sp.Index, Shards: sp.Count}
	var mine []int
	for i, s := range assign {
		info.Points = append(info.Points, bench.ShardPoint{Point: names[i], Shard: s, Cost: costs[i]})
		if s == sp.Index {
			mine = append(mine, i)
		}
	}
	return mine, info, nil
}

// shardSweep keeps cfg's shard of points and returns them with the
// record of the split (nil when not sharded); kind is the command
// ("sweep", "ggml") and extra the settings of its own that change a
// point. It reports the shard on stderr.
func shardSweep(cfg sweepConfig, kind string, extra map[string]string, points []bench.PlannedPoint, stderr io.Writer) ([]bench.PlannedPoint, *bench.SweepShard, error) {
	if !cfg.shard.Sharded() {
		return points, nil, nil
	}
	if cfg.profile != nil {
		kind += "-profile"
		extra = profileExtra(*cfg.profile, extra)
	}
	def := sweepDef{Points: pointNames(points), Backends: targetNames(cfg.targets), Threads: cfg.threads,
		Protocol: cfg.protocol, RefBudget: cfg.refBudget, MaxMem: cfg.maxMem, Extra: extra}
	idx, info, err := shardPlan(kind, def, def.Points, sweepCosts(cfg, points), cfg.shard)
	if err != nil {
		return nil, nil, err
	}
	mine := make([]bench.PlannedPoint, len(idx))
	for i, j := range idx {
		mine[i] = points[j]
	}
	reportShard(stderr, "opbench "+kind, info, cfg.shardFrom, len(mine), len(points), "points")
	return mine, info, nil
}

// profileExtra adds the profiler's settings to a sweep definition's
// extra fields.
func profileExtra(o profileOptions, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range extra {
		out[k] = v
	}
	var gpus []string
	for _, g := range o.gpus {
		gpus = append(gpus, g.Name)
	}
	out["gpu"] = strings.Join(gpus, ",")
	out["sample"] = fmt.Sprint(o.sample)
	out["regs"] = fmt.Sprint(o.regs)
	return out
}

// reportShard says on stderr which shard runs and its share of the
// estimated cost.
func reportShard(w io.Writer, cmd string, info *bench.SweepShard, from string, n, total int, what string) {
	var mine, all float64
	for _, p := range info.Points {
		all += p.Cost
		if p.Shard == info.Shard {
			mine += p.Cost
		}
	}
	src := ""
	if from != "" {
		src = " (from " + from + ")"
	}
	share := 0.0
	if all > 0 {
		share = 100 * mine / all
	}
	fmt.Fprintf(w, "%s: shard %d/%d%s of %s: %d of %d %s, %.1f%% of the estimated cost\n", cmd, info.Shard, info.Shards, src, info.ID, n, total, what, share)
}

// caseCosts estimates each validate case's cost: preparing its inputs
// and the float64 reference.
func caseCosts(cases []harness.Case) []float64 {
	out := make([]float64, len(cases))
	for i, c := range cases {
		pl, err := c.Plan()
		if err != nil {
			out[i] = estFixed
			continue
		}
		out[i] = estFixed + float64(pl.Memory)/estPrepRate + float64(pl.RefWork)/estRefRate + float64(pl.Cost.Flops+pl.Cost.Bytes)/estFlopRate
	}
	return out
}
