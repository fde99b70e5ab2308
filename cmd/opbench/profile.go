package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/internal/shard"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/simt"
	"github.com/kernbench/kernbench/simt/roofline"
)

const profileHelp = `Usage: opbench profile [flags]

Runs each point once on an emulated GPU backend (cuda-emu, metal-emu)
with the SIMT emulator's profiler on, and prints, per kernel launch, what
it asks of the memory system the way an NVIDIA GPU serves it:

  global    load and store requests (one per warp-level instruction), 32-byte
            sectors per request (4 for 32 lanes reading consecutive floats,
            32 for lanes 128 bytes apart), the share of the moved bytes the
            lanes asked for, and the unique sectors of each buffer (a lower
            bound of the DRAM traffic)
  shared    requests, wavefronts under 32 banks of 4 bytes, bank conflicts
            (wavefronts beyond the ideal)
  warps     active lanes per memory instruction (divergence), barriers,
            collectives, atomics and same-address atomics
  tensor    matrix products by shape and their share of the op's FLOPs
  geometry  grid, block, shared memory and theoretical occupancy on -gpu
            (registers are not known to the emulator: -regs is assumed)

and an estimate for each -gpu: the lower bound of the launch's time from
its unique DRAM bytes over the memory bandwidth, tensor-core and FP32
FLOPs over their peaks (the op's FLOPs that no counted matrix product
does are charged to its launch with the most global sectors), and shared
wavefronts over the shared-memory bandwidth, with the limiting resource.
An estimate is computed from published peaks: it is never a time.

A launch of more than -sample blocks runs only a deterministic sample of
about that many (the grid's corners and blocks spread evenly over it) and
its counters are extrapolated to the grid, as the output says; the op's
result is then not computed and is not validated. -sample 0 runs every
block (slow for model-sized shapes).

Writes the table to stdout and, with -json or -csv, the records.

Flags:
`

const profileExamples = `
Examples:

	opbench profile -backend cuda-emu -op mul_mat -type q4_0 -m 4096 -k 4096 -n 1,512
	opbench profile -backend metal-emu -op mul_mat -type q4_0 -m 4096 -k 4096 -n 1
	opbench profile -backend cuda-emu -op soft_max,rms_norm -gpu h100,l4 -json prof.json
	opbench profile -backend cuda-emu -preset llama-7b -n 1 -csv llama.csv
`

// ProfileSchema names the format of profile records.
const ProfileSchema = "kernbench-gpu-profile/1"

// profileSet is the JSON record of one opbench profile run.
type profileSet struct {
	Schema     string           `json:"schema"`
	Provenance bench.Provenance `json:"provenance"`
	// Note says what the numbers are.
	Note string `json:"note"`
	// Sweep, when present, says which shard of which sweep the points
	// are (-shard), or that they are a merge of all of them.
	Sweep  *bench.SweepShard `json:"sweep,omitempty"`
	Points []profilePoint    `json:"points"`
}

// profilePoint is one point on one backend.
type profilePoint struct {
	Op      string `json:"op"`
	Type    string `json:"type"`
	Shape   string `json:"shape"`
	Label   string `json:"label,omitempty"`
	Backend string `json:"backend"`
	// Flops is the op's FLOPs by its cost model.
	Flops   int64           `json:"flops"`
	Error   string          `json:"error,omitempty"`
	Kernels []profileKernel `json:"kernels"`
}

// profileKernel is one launch: its counters, extrapolated to the grid
// where a sample of the blocks ran, with occupancy and estimates.
type profileKernel struct {
	simt.KernelProfile
	Dialect string `json:"dialect"`
	// FP32Flops is the op's FLOPs outside matrix products charged to this
	// launch (the emulator does not count arithmetic).
	FP32Flops float64 `json:"fp32_flops_charged"`
	// TensorShare is the launch's matrix-product FLOPs over the op's as
	// executed (executedFlops).
	TensorShare float64             `json:"tensor_share"`
	Occupancy   []profileOccupancy  `json:"occupancy,omitempty"`
	Estimates   []roofline.Estimate `json:"estimates"`
}

type profileOccupancy struct {
	GPU string `json:"gpu"`
	roofline.Occupancy
	// RegistersAssumed is the registers per thread assumed (the emulator
	// does not know the compiler's allocation).
	RegistersAssumed int `json:"registers_assumed"`
}

// profileOptions are the profiler's settings, shared by opbench profile
// and opbench sweep -profile.
type profileOptions struct {
	gpus   []roofline.GPU // estimate on these (none: each backend's default)
	sample int            // blocks to sample of a larger launch; 0 every block
	regs   int            // registers per thread assumed for occupancy
}

// profileFlags registers the profiler's flags -gpu, -sample and -regs on
// fs; parse turns their values into options once fs is parsed.
func profileFlags(fs *flag.FlagSet) (parse func() (profileOptions, error)) {
	gpus := fs.String("gpu", "", "comma-separated `GPUs` to estimate for: "+gpuNames()+" (default h100 for cuda-emu, m2max for metal-emu)")
	sample := fs.Int("sample", 16, "run about `N` blocks of a larger launch and extrapolate its counters; 0 every block")
	regs := fs.Int("regs", 32, "registers per thread `assumed` for occupancy")
	return func() (profileOptions, error) {
		o := profileOptions{sample: *sample, regs: *regs}
		for _, g := range splitList(*gpus) {
			gpu, err := roofline.Lookup(g)
			if err != nil {
				return o, fmt.Errorf("-gpu: %w", err)
			}
			o.gpus = append(o.gpus, gpu)
		}
		if o.sample < 0 {
			return o, fmt.Errorf("-sample: %d is negative", o.sample)
		}
		if o.regs < 1 || o.regs > 255 {
			return o, fmt.Errorf("-regs: %d is not 1 to 255", o.regs)
		}
		return o, nil
	}
}

// checkEmulated returns an error naming flag unless every target is an
// emulated GPU backend: only the emulator counts.
func checkEmulated(flag string, targets []registry.Target) error {
	for _, t := range targets {
		if !bench.EmulatedBackend(t.Name()) {
			return fmt.Errorf("%s: %s is not an emulated backend (cuda-emu, metal-emu): only the emulator counts", flag, t.Name())
		}
	}
	return nil
}

// profileConfig is the parsed command line of profile.
type profileConfig struct {
	profileOptions
	entries   []bench.Entry
	targets   []registry.Target
	json, csv string
	command   string
	fs        *flag.FlagSet
	// shard is the shard of the points to profile (zero: all), and
	// shardFrom the environment variables it came from, if any.
	shard     shard.Spec
	shardFrom string
}

func parseProfile(args []string) (cfg profileConfig, help bool, err error) {
	fs := newFlagSet("profile")
	cfg.fs = fs
	var be cli.BackendFlags
	var opsFlag, types, presets string
	fs.StringVar(&opsFlag, "op", "", "comma-separated `ops`, such as mul_mat,flash_attn_ext")
	fs.StringVar(&types, "type", "", "comma-separated `types` (as opbench sweep)")
	fs.StringVar(&presets, "preset", "", "comma-separated model `presets` whose layer shapes to profile")
	fs.StringVar(&be.Name, "backend", "cuda-emu", "comma-separated emulated `backends`: cuda-emu, metal-emu")
	parseOpts := profileFlags(fs)
	fs.StringVar(&cfg.json, "json", "", "write the records as JSON to `file` (- for stdout)")
	fs.StringVar(&cfg.csv, "csv", "", "write one row per kernel as CSV to `file`")
	shardF := registerShardFlags(fs)
	dims := map[string]*string{}
	for _, d := range dimNames() {
		dims[d] = fs.String(d, "", "comma-separated `values` of size "+d)
	}
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return cfg, help, flagErr(err)
	}
	if len(pos) > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	cfg.command = "opbench profile " + strings.Join(args, " ")
	dv := map[string][]int64{}
	for name, v := range dims {
		if !set[name] {
			continue
		}
		vals, err := parseInts(*v)
		if err != nil {
			return cfg, false, fmt.Errorf("-%s: %w", name, err)
		}
		dv[name] = vals
	}
	switch {
	case presets != "":
		for _, p := range splitList(presets) {
			cfg.entries = append(cfg.entries, bench.Entry{Preset: p, Ops: splitList(opsFlag), Types: splitList(types), Dims: dv})
		}
	case opsFlag != "":
		cfg.entries = []bench.Entry{{Ops: splitList(opsFlag), Types: splitList(types), Dims: dv}}
	default:
		return cfg, false, errors.New("-op: name the ops to profile (or -preset)")
	}
	for i, e := range cfg.entries {
		if _, _, err := e.Expand(); err != nil {
			return cfg, false, entryError("", len(cfg.entries), i, err)
		}
	}
	if cfg.targets, err = selectTargets(splitList(be.Name), nil); err != nil {
		return cfg, false, err
	}
	if err := checkEmulated("-backend", cfg.targets); err != nil {
		return cfg, false, err
	}
	if cfg.profileOptions, err = parseOpts(); err != nil {
		return cfg, false, err
	}
	cfg.shard, cfg.shardFrom, err = shardF.parse()
	return cfg, false, err
}

func gpuNames() string {
	var s []string
	for _, g := range roofline.GPUs {
		s = append(s, g.Name)
	}
	return strings.Join(s, ", ")
}

// runProfile is "opbench profile".
func runProfile(args []string, stdout, stderr io.Writer) int {
	cfg, help, err := parseProfile(args)
	if help {
		fmt.Fprint(stdout, profileHelp)
		cfg.fs.SetOutput(stdout)
		cfg.fs.PrintDefaults()
		fmt.Fprint(stdout, profileExamples)
		return exitOK
	}
	if err != nil {
		return usageError(stderr, "profile", err)
	}
	points, notes, err := bench.ExpandAll(cfg.entries)
	if err != nil {
		return usageError(stderr, "profile", err)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "opbench profile: %s\n", n)
	}
	set := newProfileSet(cfg.command)
	if points, set.Sweep, err = shardProfile(cfg, points, stderr); err != nil {
		return usageError(stderr, "profile", err)
	}
	var code int
	set.Points, code = profileTargets("opbench profile", cfg.targets, points, cfg.profileOptions, stdout, stderr)
	if err := writeProfileFiles(set, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "opbench profile: %v\n", err)
		return exitFailure
	}
	return code
}

// shardProfile keeps cfg's shard of points and returns them with the
// record of the split (nil when not sharded).
func shardProfile(cfg profileConfig, points []bench.PlannedPoint, stderr io.Writer) ([]bench.PlannedPoint, *bench.SweepShard, error) {
	if !cfg.shard.Sharded() {
		return points, nil, nil
	}
	costs := make([]float64, len(points))
	for i, p := range points {
		costs[i] = float64(len(cfg.targets)) * estimatePoint(p, bench.Protocol{}, -1, true, true)
	}
	def := sweepDef{Points: pointNames(points), Backends: targetNames(cfg.targets), Extra: profileExtra(cfg.profileOptions, nil)}
	idx, info, err := shardPlan("profile", def, def.Points, costs, cfg.shard)
	if err != nil {
		return nil, nil, err
	}
	mine := make([]bench.PlannedPoint, len(idx))
	for i, j := range idx {
		mine[i] = points[j]
	}
	reportShard(stderr, "opbench profile", info, cfg.shardFrom, len(mine), len(points), "points")
	return mine, info, nil
}

// newProfileSet returns an empty record set of the command.
func newProfileSet(command string) profileSet {
	return profileSet{
		Schema: ProfileSchema, Provenance: bench.DetectProvenance(command),
		Note: "emulator counters per kernel launch and roofline estimates (lower bounds from published peaks): never measured times",
	}
}

// profileTargets runs each point once on each emulated target under the
// profiler, prints each point's table to stdout as it completes, and
// returns the points' records and the exit code (exitFailure when a
// point failed); errors go to stderr after the command's name.
func profileTargets(command string, targets []registry.Target, points []bench.PlannedPoint, o profileOptions, stdout, stderr io.Writer) ([]profilePoint, int) {
	dev, err := simt.Open()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
		return nil, exitFailure
	}
	var out []profilePoint
	code := exitOK
	for _, t := range targets {
		be, err := openBackend(t, 1)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", command, t.Name(), err)
			code = exitFailure
			continue
		}
		if !ops.IsEmulated(be.Backend) {
			fmt.Fprintf(stderr, "%s: %s is not emulated\n", command, t.Name())
			be.Close()
			code = exitFailure
			continue
		}
		gpus := o.gpus
		if len(gpus) == 0 {
			gpus = []roofline.GPU{defaultGPU(t.Name())}
		}
		for _, p := range points {
			pp := profileOne(dev, be, p, o, gpus)
			if pp.Error != "" {
				code = exitFailure
			}
			out = append(out, pp)
			writeProfileText(stdout, pp)
		}
		be.Close()
	}
	return out, code
}

// defaultGPU is the GPU an emulated backend's estimates are for when none
// is named: an Apple M2 Max for Metal, else an H100.
func defaultGPU(backend string) roofline.GPU {
	name := "h100"
	if strings.HasPrefix(backend, "metal") {
		name = "m2max"
	}
	g, _ := roofline.Lookup(name) // the table lists both
	return g
}

// profileOne runs point p once on be under the profiler.
func profileOne(dev *simt.Device, be bench.Backend, p bench.PlannedPoint, o profileOptions, gpus []roofline.GPU) profilePoint {
	pp := profilePoint{Op: p.Op.String(), Type: p.Type.String(), Shape: p.Shape(), Label: p.Label, Backend: be.Name, Flops: p.Plan.Cost.Flops}
	c, err := p.Case()
	if err != nil {
		pp.Error = err.Error()
		return pp
	}
	if err := dev.StartProfile(simt.ProfileOptions{SampleBlocks: o.sample}); err != nil {
		pp.Error = err.Error()
		return pp
	}
	// The profiled run is not validated: with sampling, most blocks of a
	// launch never run.
	prep, res := harness.Prepare(be.Backend, c, harness.PrepareOptions{RefBudget: -1})
	profs := dev.StopProfile()
	if prep == nil {
		pp.Error = res.Summary()
		if res.Err != "" {
			pp.Error += ": " + res.Err
		}
	}
	var matrix float64
	if prep != nil {
		matrix = float64(matrixFlops(prep.Node))
	}
	pp.Kernels = profileKernels(profs, float64(pp.Flops), matrix, o.regs, gpus)
	return pp
}

// matrixFlops is the part of t's FLOPs (ops.CostOf) in matrix products:
// all of MUL_MAT's and MUL_MAT_ID's, FLASH_ATTN_EXT's q·k and weights·v
// (not its softmax), none of the other ops'.
func matrixFlops(t *ops.Tensor) int64 {
	switch t.Op {
	case ops.OpMulMat, ops.OpMulMatID:
		return ops.CostOf(t).Flops
	case ops.OpFlashAttnExt:
		q, k, v := t.Src[ops.FAQ], t.Src[ops.FAK], t.Src[ops.FAV]
		return 2 * q.Ne[1] * q.Ne[2] * q.Ne[3] * k.Ne[1] * (q.Ne[0] + v.Ne[0])
	}
	return 0
}

// executedFlops is the op's FLOPs as its launches did them, from its cost
// model's opFlops of which matrix are in matrix products and the counted
// matrix products' tensor: where those do only part of the matrix work (a
// kernel that skips the tiles every row masks, as causal flash attention
// does), the rest of the op (the softmax) is taken in the same proportion;
// otherwise all of opFlops (the emulator does not count other arithmetic).
func executedFlops(opFlops, matrix, tensor float64) float64 {
	if tensor <= 0 || matrix <= 0 || tensor >= matrix || matrix > opFlops {
		return opFlops
	}
	return tensor + (opFlops-matrix)*tensor/matrix
}

// profileKernels extrapolates each launch's counters and estimates it:
// the op's FLOPs as executed (executedFlops; opFlops by the cost model,
// matrix of them in matrix products) that no counted matrix product does
// are charged, as FP32 work, to the launch with the most global sectors
// (roofline.ChargeFP32), and a launch's tensor share is its matrix-product
// FLOPs over the executed ones.
func profileKernels(profs []simt.KernelProfile, opFlops, matrix float64, regs int, gpus []roofline.GPU) []profileKernel {
	ks := make([]profileKernel, len(profs))
	ext := make([]simt.KernelProfile, len(profs))
	var tensor float64
	for i, p := range profs {
		ext[i] = p.Extrapolate()
		ks[i].KernelProfile = ext[i]
		ks[i].Dialect = p.Dialect.String()
		tensor += ext[i].TensorFLOPs()
	}
	exec := executedFlops(opFlops, matrix, tensor)
	charged := roofline.ChargeFP32(ext, exec)
	for i := range ks {
		k := &ks[i]
		k.FP32Flops = charged[i]
		if exec > 0 {
			k.TensorShare = k.TensorFLOPs() / exec
		}
		threads := int(k.Block.X * k.Block.Y * k.Block.Z)
		for _, g := range gpus {
			if o, err := g.TheoreticalOccupancy(threads, regs, int(k.StaticShared+k.DynShared)); err == nil {
				k.Occupancy = append(k.Occupancy, profileOccupancy{GPU: g.Name, Occupancy: o, RegistersAssumed: regs})
			}
			k.Estimates = append(k.Estimates, g.Estimate(roofline.FromProfile(k.KernelProfile, k.FP32Flops)))
		}
	}
	return ks
}

// writeProfileText prints one point's kernels.
func writeProfileText(w io.Writer, pp profilePoint) {
	fmt.Fprintf(w, "%s %s %s on %s", pp.Op, pp.Type, pp.Shape, pp.Backend)
	if pp.Label != "" {
		fmt.Fprintf(w, " (%s)", pp.Label)
	}
	fmt.Fprintf(w, ": %d kernel launches, %s FLOPs by the op's cost model\n", len(pp.Kernels), si(float64(pp.Flops)))
	if pp.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", pp.Error)
	}
	for _, k := range pp.Kernels {
		fmt.Fprintf(w, "  kernel %s (%s): grid %v, block %v, shared %d B static + %d B dynamic\n", k.Kernel, k.Dialect, k.Grid, k.Block, k.StaticShared, k.DynShared)
		if k.Extrapolated {
			fmt.Fprintf(w, "    counters of a sample of the blocks, extrapolated to all %d\n", k.Blocks)
		}
		if !k.Instrumented {
			fmt.Fprintf(w, "    module built fast (not instrumented): no memory counters\n")
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "    \trequests\tsectors/req\tbytes used\tlanes/req\t\n")
		for _, r := range []struct {
			name string
			g    simt.GlobalCounters
		}{{"global loads", k.GlobalLoads}, {"global stores", k.GlobalStores}} {
			fmt.Fprintf(tw, "    %s\t%d\t%.2f\t%.0f%%\t%.1f\t\n", r.name, r.g.Requests, r.g.SectorsPerRequest(), 100*r.g.Efficiency(), ratioF(r.g.Lanes, r.g.Requests))
		}
		fmt.Fprintf(tw, "    \trequests\twavefronts\tconflicts\tlanes/req\t\n")
		for _, r := range []struct {
			name string
			s    simt.SharedCounters
		}{{"shared loads", k.SharedLoads}, {"shared stores", k.SharedStores}} {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%d\t%.1f\t\n", r.name, r.s.Requests, r.s.Wavefronts, r.s.BankConflicts(), ratioF(r.s.Lanes, r.s.Requests))
		}
		tw.Flush()
		fmt.Fprintf(w, "    warp efficiency %.1f%% (active lanes per memory request), %d barriers, %d collectives, %d atomic requests (%d same-address lanes)\n",
			100*k.WarpEfficiency(), k.Barriers, k.Collectives, k.Atomics.Requests+k.SharedAtomics.Requests, k.Atomics.SameAddress)
		var mma []string
		for _, m := range k.MMA {
			mma = append(mma, fmt.Sprintf("%d %s", m.Products, m.Kind))
		}
		if len(mma) == 0 {
			mma = []string{"none"}
		}
		fmt.Fprintf(w, "    matrix products: %s; %s tensor FLOPs = %.1f%% of the op's as executed\n", strings.Join(mma, ", "), si(k.TensorFLOPs()), 100*k.TensorShare)
		fmt.Fprintf(w, "    unique DRAM bytes (lower bound): %s", siB(k.DRAMBytes()))
		var bufs []string
		for _, b := range k.Buffers {
			name := b.Label
			if name == "" {
				name = fmt.Sprintf("%s buffer", siB(float64(b.Size)))
			}
			bufs = append(bufs, fmt.Sprintf("%s read %s written %s", name, siB(32*float64(b.ReadSectors)), siB(32*float64(b.WriteSectors))))
		}
		if len(bufs) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(bufs, "; "))
		}
		fmt.Fprintln(w)
		for _, o := range k.Occupancy {
			fmt.Fprintf(w, "    occupancy on %s: %.0f%% (%d blocks/SM, limited by %s; %d registers/thread assumed)\n", o.GPU, 100*o.Fraction, o.BlocksPerSM, o.Limiter, o.RegistersAssumed)
		}
		for _, e := range k.Estimates {
			var parts []string
			for _, b := range e.Bounds {
				parts = append(parts, fmt.Sprintf("%s %s", b.Resource, dur(b.Seconds)))
			}
			fmt.Fprintf(w, "    estimate on %s (a lower bound, not a time): %s, limited by %s [%s]", e.GPU, dur(e.Seconds), e.Limiter, strings.Join(parts, ", "))
			if k.FP32Flops > 0 {
				fmt.Fprintf(w, " (charged the op's %s non-tensor FLOPs)", si(k.FP32Flops))
			}
			if r := roofline.FromProfile(k.KernelProfile, 0).Int8Results; r > 0 {
				fmt.Fprintf(w, " (fp32: the int8 products' %s results at %d instructions each)", si(r), roofline.Int8ResultInstructions)
			}
			if len(e.Unpriced) > 0 {
				fmt.Fprintf(w, "; not priced: %s", strings.Join(e.Unpriced, ", "))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
}

func ratioF(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// si formats a count with an SI prefix.
func si(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.f {
			return strconv.FormatFloat(v/u.f, 'f', 2, 64) + u.s
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func siB(v float64) string { return si(v) + "B" }

// dur formats seconds for estimates, which are short.
func dur(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		return strconv.FormatFloat(s*1e6, 'f', 2, 64) + " µs"
	case s < 1:
		return strconv.FormatFloat(s*1e3, 'f', 3, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', 3, 64) + " s"
}

// profileCSVHeader is the CSV's columns, one row per kernel launch.
var profileCSVHeader = []string{
	"op", "type", "shape", "backend", "kernel", "grid", "block", "static_shared", "dyn_shared", "blocks", "blocks_run", "extrapolated",
	"gld_requests", "gld_sectors", "gld_bytes", "gst_requests", "gst_sectors", "gst_bytes",
	"shld_requests", "shld_wavefronts", "shld_conflicts", "shst_requests", "shst_wavefronts", "shst_conflicts",
	"warp_efficiency", "barriers", "collectives", "atomic_requests", "atomic_same_address",
	"tensor_flops", "tensor_share", "dram_bytes", "gpu", "estimate_seconds", "limiter",
}

// writeProfileFiles writes the JSON and CSV records cfg asks for.
func writeProfileFiles(set profileSet, cfg profileConfig, stdout io.Writer) error {
	if cfg.json != "" {
		b, err := profileJSON(set)
		if err != nil {
			return err
		}
		if cfg.json == "-" {
			if _, err := stdout.Write(b); err != nil {
				return err
			}
		} else if err := os.WriteFile(cfg.json, b, 0o644); err != nil {
			return fmt.Errorf("-json: %w", err)
		}
	}
	if cfg.csv != "" {
		b, err := profileCSV(set)
		if err != nil {
			return fmt.Errorf("-csv: %w", err)
		}
		if err := os.WriteFile(cfg.csv, b, 0o644); err != nil {
			return fmt.Errorf("-csv: %w", err)
		}
	}
	return nil
}

// profileJSON encodes the records as indented JSON.
func profileJSON(set profileSet) ([]byte, error) {
	b, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// profileCSV encodes the records as CSV, one row per kernel launch and
// GPU estimated.
func profileCSV(set profileSet) ([]byte, error) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write(profileCSVHeader)
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	fl := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, p := range set.Points {
		for _, k := range p.Kernels {
			for _, e := range k.Estimates {
				cw.Write([]string{p.Op, p.Type, p.Shape, p.Backend, k.Kernel, k.Grid.String(), k.Block.String(),
					strconv.FormatInt(k.StaticShared, 10), strconv.FormatInt(k.DynShared, 10), u(k.Blocks), u(k.BlocksRun), strconv.FormatBool(k.Extrapolated),
					u(k.GlobalLoads.Requests), u(k.GlobalLoads.Sectors), u(k.GlobalLoads.Bytes),
					u(k.GlobalStores.Requests), u(k.GlobalStores.Sectors), u(k.GlobalStores.Bytes),
					u(k.SharedLoads.Requests), u(k.SharedLoads.Wavefronts), u(k.SharedLoads.BankConflicts()),
					u(k.SharedStores.Requests), u(k.SharedStores.Wavefronts), u(k.SharedStores.BankConflicts()),
					fl(k.WarpEfficiency()), u(k.Barriers), u(k.Collectives), u(k.Atomics.Requests), u(k.Atomics.SameAddress),
					fl(k.TensorFLOPs()), fl(k.TensorShare), fl(k.DRAMBytes()), e.GPU, fl(e.Seconds), e.Limiter})
			}
		}
	}
	cw.Flush()
	return buf.Bytes(), cw.Error()
}
