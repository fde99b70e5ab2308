// Command trace runs a model forward pass (or a single op) and writes what
// it executed: a Graphviz dump of the graph, a Chrome/Perfetto trace, a
// pprof profile and a summary table of time by op and by layer.
//
// Usage:
//
//	trace -m model.gguf [-p prompt] [-n tokens] [outputs] [filters] [options]
//	trace -op mul_mat -type q4_0 -m M -n N -k K [-r reps] [outputs]
//
// Outputs:
//
//	-dot FILE      Graphviz dot of the prompt's graph (timed), rendered
//	               to FILE's name with .svg (see -render) when dot is installed
//	-chrome FILE   Chrome/Perfetto trace JSON: one track per backend, one
//	               slice per node
//	-pprof FILE    pprof profile (gzipped protobuf) of node times under
//	               stacks forward;layer.N;attn;MUL_MAT(q4_0)
//	-summary       tables of time by op and by layer with GFLOP/s and GB/s
//	-counters      with an emulated GPU backend (cuda-emu, metal-emu): the
//	               SIMT emulator's counters per node of the prompt's graph
//	               (of the first traced run in -op mode): kernels launched,
//	               global sectors per request, unique DRAM bytes, bank
//	               conflicts, tensor-core share and a roofline estimate on
//	               -gpu (h100 for cuda-emu, m2max for metal-emu), as
//	               opbench profile counts them; the graph then runs a node
//	               at a time
//	-metal-capture FILE.gputrace
//	               a Metal GPU capture (MTLCaptureManager, GPU trace
//	               document) of the prompt's forward, or of the first
//	               traced run in -op mode, one debug group per node named
//	               as in the dot dump; macOS with -backend metal only (and
//	               METAL_CAPTURE_ENABLED=1 in the environment); elsewhere
//	               the flag is an error that says why
//
// Filters of the dot dump: -layer N, -layers A-B, -match REGEX (node names
// and op labels such as "MUL_MAT(q4_0)").
//
// The prompt runs as one micro-batch; -n generates that many tokens
// greedily after it (an end-of-sequence token does not stop it), each
// traced. Records of every graph go to -chrome, -pprof and -summary; the
// dot dump shows the prompt's graph. The records are kept compactly (the
// node's description once, 12 bytes of times per record; store.go), not
// with the graphs they come from, so memory grows by about 1.2 KB per
// token of stories260K and -n 5000 takes under twice run's.
//
// Output files are checked before any work (none may be the model, by
// file identity, or another output) and written atomically. Logits that
// come out NaN or infinite are an error naming the first node of the
// graph whose output is not finite.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kernbench/kernbench/graphs/dot"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/simt/roofline"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	model  string // -m: model file, or M in single-op mode
	prompt string
	n      int
	k      int
	op     string
	typ    quant.Type
	reps   int

	threads int
	be      cli.BackendFlags
	target  registry.Target // resolved from be
	fb      cli.FallbackFlag
	// fbTarget, when useFB (-fallback), computes the nodes target does
	// not support.
	fbTarget registry.Target
	useFB    bool
	flash    bool
	kvType   quant.Type
	nCtx     int
	// warnings are the deprecated spellings used.
	warnings []string

	dotFile, chromeFile, pprofFile string
	summary                        bool
	counters                       bool
	gpu                            roofline.GPU // -gpu: estimates of -counters
	render                         []string
	filter                         dot.Filter
	metalCapture                   string

	// m is M in single-op mode.
	m int
}

const usageText = `usage:
  trace -m model.gguf [-p prompt] [-n tokens] [outputs] [filters] [options]
  trace -op mul_mat -type q4_0 -m M -n N -k K [-r reps] [outputs]

Runs a model's forward pass on a backend (-backend, the CPU by default;
the prompt as one batch, then -n greedy tokens) or a single op, and writes
what it executed.

Examples:
  trace -m stories260K.gguf -p "Once upon a time" -dot g.dot -chrome t.json -pprof p.pb.gz -summary
  trace -m model.gguf -n 16 -summary -fa off
  trace -m model.gguf -n 64 -t 2 -kv-type q8_0 -tier generic -chrome t.json
  trace -m model.gguf -dot layer3.dot -layer 3 -render svg,png
  trace -m model.gguf -dot attn.dot -layers 0-1 -match 'attn|kq|fattn'
  trace -op mul_mat -type q4_0 -m 4096 -n 1 -k 4096 -chrome mm.json -summary
  trace -m stories260K.gguf -p "Once upon" -backend cuda-emu -counters -gpu h100
  go tool pprof -top p.pb.gz; go tool pprof -http=: p.pb.gz

Flags:
`

// errUsage marks command-line errors (exit status 2).
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func usagef(format string, args ...any) error { return errUsage{fmt.Sprintf(format, args...)} }

// parse reads the command line. With -h it returns flag.ErrHelp after
// writing the usage to stdout.
func parse(args []string, stdout io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cli.ModelVar(fs, &c.model, "in single-op mode (-op), M: the rows of the weight")
	fs.StringVar(&c.prompt, "p", "Once upon a time", "prompt (BOS is added as the vocabulary says)")
	fs.IntVar(&c.n, "n", 0, "tokens to generate greedily after the prompt; in single-op mode, N (columns of the activations, default 1)")
	fs.IntVar(&c.k, "k", 0, "single-op mode: K (the dot product length)")
	fs.StringVar(&c.op, "op", "", "single-op mode: the op to trace (mul_mat)")
	typ := fs.String("type", "q4_0", "single-op mode: the weight type")
	fs.IntVar(&c.reps, "r", 10, "single-op mode: runs of the op, each traced")
	cli.ThreadsVar(fs, &c.threads, "CPU threads")
	c.be.Register(fs)
	c.fb.Register(fs)
	fa := cli.NewOnOff(true)
	fs.Var(fa, "fa", "flash attention: on (FLASH_ATTN_EXT) or off (MUL_MAT + SOFT_MAX + MUL_MAT); auto = on")
	var kv cli.KVFlags
	kv.Register(fs)
	cli.Deprecated(fs, "kv", "kv-type")
	fs.IntVar(&c.nCtx, "c", 0, "KV cache cells (0: the prompt and generated tokens, rounded up to 256)")
	fs.StringVar(&c.dotFile, "dot", "", "write the prompt graph as Graphviz dot to `FILE`")
	render := fs.String("render", "svg", "with -dot and the dot program installed, also render these formats (comma list of svg, png, pdf; none)")
	layer := fs.String("layer", "", "dot dump: keep only layer `N`")
	layers := fs.String("layers", "", "dot dump: keep only layers `A-B`")
	match := fs.String("match", "", "dot dump: keep only nodes whose name or op label matches `REGEX`")
	fs.StringVar(&c.chromeFile, "chrome", "", "write a Chrome/Perfetto trace JSON to `FILE`")
	fs.StringVar(&c.pprofFile, "pprof", "", "write a pprof profile to `FILE`")
	fs.BoolVar(&c.summary, "summary", false, "print time by op and by layer")
	fs.BoolVar(&c.counters, "counters", false, "with -backend cuda-emu or metal-emu: print the emulator's counters per node (kernels, sectors per request, DRAM bytes, bank conflicts, tensor share) and an estimate on -gpu")
	gpu := fs.String("gpu", "", "-counters: the `GPU` to estimate for: "+gpuNames()+" (default h100 for cuda-emu, m2max for metal-emu)")
	fs.StringVar(&c.metalCapture, "metal-capture", "", "record the prompt's forward (in -op mode the first traced run) in a Metal GPU capture written to `FILE.gputrace`, a debug group per node named as in -dot (macOS with -backend metal; run with METAL_CAPTURE_ENABLED=1)")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags come before nothing else; quote the prompt: -p \"...\")", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.warnings = cli.Warnings(fs)

	c.flash = fa.Value
	var err error
	if c.kvType, err = kv.Type(); err != nil {
		return nil, usagef("%v", err)
	}
	if c.kvType == quant.Q8_0 && !c.flash {
		return nil, usagef("-fa: a q8_0 KV cache needs flash attention (-fa on)")
	}
	switch {
	case c.nCtx < 0:
		return nil, usagef("-c %d: want 0 or more cells", c.nCtx)
	case c.n < 0:
		return nil, usagef("-n %d: want 0 or more", c.n)
	}
	for _, f := range strings.Split(*render, ",") {
		switch f = strings.TrimSpace(strings.ToLower(f)); f {
		case "none", "":
		case "svg", "png", "pdf":
			c.render = append(c.render, f)
		default:
			return nil, usagef("-render %q: want a comma list of svg, png, pdf, or none", *render)
		}
	}
	if set["layer"] && set["layers"] {
		return nil, usagef("-layer and -layers both given: use one")
	}
	for _, spec := range []string{*layer, *layers} {
		if spec == "" {
			continue
		}
		lr, err := dot.ParseLayers(spec)
		if err != nil {
			return nil, usagef("-layer(s) %q: %v", spec, strings.TrimPrefix(err.Error(), "dot: "))
		}
		c.filter.Layers = &lr
	}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			return nil, usagef("-match %q: %v", *match, err)
		}
		c.filter.Match = re
	}
	if (c.filter.Layers != nil || c.filter.Match != nil) && c.dotFile == "" {
		return nil, usagef("-layer, -layers and -match filter the dot dump: give -dot FILE too")
	}
	if c.target, err = c.be.Target(); err != nil {
		return nil, usagef("%v", err)
	}
	if strings.TrimSpace(c.fb.Name) != "" && c.op != "" {
		return nil, usagef("-fallback is for model mode (-m): -op runs one node, on -backend")
	}
	if c.fbTarget, c.useFB, err = c.fb.Resolve(c.target); err != nil {
		return nil, usagef("%v", err)
	}
	if c.metalCapture != "" {
		if err := metalCaptureError(c.target, c.metalCapture); err != nil {
			return nil, err
		}
	}
	if err := c.parseCounters(*gpu, set["gpu"]); err != nil {
		return nil, err
	}

	if c.op == "" {
		for _, f := range []string{"k", "type", "r"} {
			if set[f] {
				return nil, usagef("-%s is for single-op mode (-op)", f)
			}
		}
		if c.model == "" {
			return nil, usagef("no model: give -m model.gguf (or -op for single-op mode; -h for help)")
		}
		if strings.TrimSpace(c.prompt) == "" {
			return nil, usagef("-p: the prompt is empty")
		}
		if err := c.checkOutputs([]cli.Input{{Flag: "m", Path: c.model}}); err != nil {
			return nil, err
		}
		return c, nil
	}

	// Single-op mode.
	if !strings.EqualFold(c.op, "mul_mat") {
		return nil, usagef("-op %q: single-op mode traces mul_mat", c.op)
	}
	for _, f := range []string{"p", "fa", "kv", "kv-type", "ctk", "ctv", "cache-type-k", "cache-type-v", "c"} {
		if set[f] {
			return nil, usagef("-%s is for model mode, not -op", f)
		}
	}
	if c.typ, err = quant.ParseType(*typ); err != nil {
		return nil, usagef("-type %q: %v", *typ, err)
	}
	if !set["n"] {
		c.n = 1
	}
	if _, err := fmt.Sscan(c.model, &c.m); err != nil || c.model == "" || strings.ContainsAny(c.model, "./") {
		return nil, usagef("-m %q: in single-op mode -m is M, a number of rows", c.model)
	}
	const maxDim = 1 << 20
	for _, d := range []struct {
		name string
		v    int
	}{{"m", c.m}, {"n", c.n}, {"k", c.k}} {
		if d.v < 1 || d.v > maxDim {
			return nil, usagef("-%s %d: want 1 to %d", d.name, d.v, maxDim)
		}
	}
	if c.reps < 1 || c.reps > 10000 {
		return nil, usagef("-r %d: want 1 to 10000", c.reps)
	}
	if err := c.checkOutputs(nil); err != nil {
		return nil, err
	}
	return c, nil
}

// parseCounters checks -counters and -gpu.
func (c *config) parseCounters(gpu string, gpuSet bool) error {
	name := c.target.Name()
	if !c.counters {
		if gpuSet {
			return usagef("-gpu is for -counters")
		}
		return nil
	}
	if !strings.HasSuffix(name, "-emu") {
		return usagef("-counters: %s is not an emulated backend (cuda-emu, metal-emu): only the emulator counts", name)
	}
	if gpu == "" {
		gpu = "h100"
		if strings.HasPrefix(name, "metal") {
			gpu = "m2max"
		}
	}
	g, err := roofline.Lookup(gpu)
	if err != nil {
		return usagef("-gpu: %v", err)
	}
	c.gpu = g
	return nil
}

// gpuNames lists the GPUs -gpu knows.
func gpuNames() string {
	var s []string
	for _, g := range roofline.GPUs {
		s = append(s, g.Name)
	}
	return strings.Join(s, ", ")
}

// checkOutputs checks the files the outputs write before any work: none
// may be one of inputs or another output, and each folder must take new
// files.
func (c *config) checkOutputs(inputs []cli.Input) error {
	var outs []cli.Output
	if c.dotFile != "" {
		outs = append(outs, cli.Output{Flag: "dot", Path: c.dotFile})
		for _, p := range c.renderPaths() {
			outs = append(outs, cli.Output{Flag: "render", Path: p})
		}
	}
	if c.chromeFile != "" {
		outs = append(outs, cli.Output{Flag: "chrome", Path: c.chromeFile})
	}
	if c.pprofFile != "" {
		outs = append(outs, cli.Output{Flag: "pprof", Path: c.pprofFile})
	}
	if err := cli.CheckOutputs(inputs, outs...); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// renderPaths returns the files -render draws the dot dump into: its
// name with each format's extension, except the dot file's own.
func (c *config) renderPaths() []string {
	var out []string
	for _, f := range c.render {
		p := strings.TrimSuffix(c.dotFile, filepath.Ext(c.dotFile)) + "." + f
		if p != c.dotFile {
			out = append(out, p)
		}
	}
	return out
}

// metalCaptureError says why -metal-capture cannot run with target and
// path, or returns nil when it can: on macOS, with the Metal backend's GPU,
// into a new FILE.gputrace.
func metalCaptureError(target registry.Target, path string) error {
	gpu, err := registry.Resolve("metal", "gpu")
	if err != nil {
		return usagef("-metal-capture needs macOS and the Metal backend, which this build lacks")
	}
	if why := gpu.Err(); why != nil {
		return usagef("-metal-capture needs macOS and the Metal backend, which cannot open here: %v", why)
	}
	if target.Name() != gpu.Name() {
		return usagef("-metal-capture needs -backend %s (or metal), not %s", gpu.Name(), target.Name())
	}
	if !strings.HasSuffix(path, ".gputrace") {
		return usagef("-metal-capture %q: the file must be named FILE.gputrace", path)
	}
	if _, err := os.Stat(path); err == nil {
		return usagef("-metal-capture %q exists: a GPU trace document must be new", path)
	}
	return nil
}

// A capturer is a backend that records its work in a GPU capture (the
// Metal backend on a Mac's GPU, through MTLCaptureManager).
type capturer interface {
	StartCapture(path string) (stop func() error, err error)
}

// capture runs f inside a GPU capture of b into path, when path is set.
func capture(b any, path string, f func() error) error {
	if path == "" {
		return f()
	}
	c, ok := b.(capturer)
	if !ok {
		return fmt.Errorf("-metal-capture: the backend (%T) cannot make a GPU capture", b)
	}
	stop, err := c.StartCapture(path)
	if err != nil {
		return err
	}
	ferr := f()
	if err := stop(); err != nil {
		return err
	}
	return ferr
}

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue errUsage
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "trace: %s (see trace -h)\n", oneLine(err.Error()))
		return 2
	}
	for _, w := range c.warnings {
		fmt.Fprintf(stderr, "trace: %s\n", w)
	}
	var res *result
	if c.op != "" {
		res, err = traceOp(ctx, c, stdout)
	} else {
		res, err = traceModel(ctx, c, stdout, stderr)
		err = cli.FallbackHint(err, c.useFB)
	}
	if err == nil {
		err = writeOutputs(ctx, c, res, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "trace: %s\n", oneLine(err.Error()))
		return 1
	}
	return 0
}

// oneLine joins the lines of a message.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }
