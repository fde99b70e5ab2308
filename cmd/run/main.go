// Command run generates text with a GGUF model, and with -bench measures
// prompt processing and generation speed the way llama-bench does.
//
// Usage:
//
//	run -m model.gguf -p "Once upon a time" -n 64 [sampling flags]
//	run -m model.gguf -bench [-p 512] [-n 128] [-r 5] [-o md|json|csv]
//
// Generation tokenizes the prompt (with BOS where the vocabulary asks for
// it), evaluates it in batches of -b tokens, then samples one token at a
// time with the chain llama.cpp's tools build from the sampling flags
// (-temp 0 is greedy decoding) and prints each token as it comes. It stops
// at the end-of-text token, after -n tokens, or when the context (-c) is
// full. At the end it reports on stderr the time and speed of prompt
// processing and of generation, like llama.cpp's timings.
//
// With -bench, -p and -n are comma-separated lists of token counts. Each
// prompt length N is a test "ppN": one batch of N tokens (random tokens
// after BOS, in pieces of -b) evaluated from an empty cache; each generation
// length N is a test "tgN": N single-token decodes from an empty cache.
// Each test runs once to warm up (the whole prompt for pp, one token for
// tg), then -r times; a sample is the wall time of one repetition, its speed
// the tokens over that time, and the report gives the mean and the sample
// standard deviation of the speeds, in a markdown table (-o md) or in
// llama-bench's JSON or CSV fields (-o json, -o csv).
//
// -cpuprofile FILE writes a CPU profile of the decoding, in either mode
// (go tool pprof -top FILE), for finding where a token's time goes.
//
// A backend that runs dry (cuda-emu with KERNBENCH_CUDA_EMU_EXEC=off: it
// launches but executes no kernel) is benchmarked too, so that -bench and
// -cpuprofile measure the host's path alone; run warns on stderr that its
// text is garbage and its speeds are not the device's.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/sample"
	"github.com/kernbench/kernbench/tokenizer"
)

func main() {
	cx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := runContext(cx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed command line.
type config struct {
	modelPath  string
	prompt     string // -p: the prompt, or the pp list with -bench
	promptFile string
	nPredict   string // -n: the token count, or the tg list with -bench
	n          int    // -n resolved in generation mode (-1: no limit)

	threads int
	nCtx    int
	nBatch  int
	nUBatch int
	kv      cli.KVFlags
	fa      *cli.OnOff
	be      cli.BackendFlags
	kvType  quant.Type      // resolved from kv
	flash   bool            // resolved from fa
	target  registry.Target // resolved from backend and tier
	fb      cli.FallbackFlag
	// fbTarget, when useFB (-fallback), is the backend that computes
	// the nodes target does not support.
	fbTarget registry.Target
	useFB    bool
	fallback ops.Backend        // fbTarget opened
	notes    *cli.FallbackNotes // names the nodes fallback computes

	// sampling
	temp, topP, minP, typical, tfs       float64
	topK, minKeep, repeatLastN, mirostat int
	repeatPenalty, freqPenalty, presPen  float64
	mirostatEta, mirostatTau             float64
	seed                                 int64
	ignoreEOS                            bool

	start      time.Time // when loading began, for the load time
	cpuProfile string    // -cpuprofile: where the CPU profile goes

	// bench
	ppList   []int // -p with -bench
	tgList   []int // -n with -bench
	bench    bool
	reps     int
	output   string
	noWarmup bool
}

// newFlags defines the command's flags on a new FlagSet filling c.
func newFlags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	d := sample.DefaultParams()
	cli.ModelVar(fs, &c.modelPath, "required")
	fs.StringVar(&c.prompt, "p", "", "prompt text; with -bench, prompt lengths to test (comma-separated, default 512)")
	fs.StringVar(&c.promptFile, "f", "", "read the prompt from this file")
	fs.StringVar(&c.nPredict, "n", "", "tokens to generate (default -1: until end of text or a full context); with -bench, generation lengths to test (default 128)")
	cli.ThreadsVar(fs, &c.threads, "")
	fs.IntVar(&c.nCtx, "c", 0, "context size in tokens (0: the model's training context, at most 4096; -bench ignores it: a test's context is its own token count)")
	fs.IntVar(&c.nBatch, "b", 2048, "most tokens one decode takes (clamped to -c)")
	fs.IntVar(&c.nUBatch, "ub", 512, "most tokens one graph computes (clamped to -b)")
	c.kv.Register(fs)
	c.fa = cli.NewOnOff(true)
	fs.Var(c.fa, "fa", "flash attention: on (FLASH_ATTN_EXT) or off (MUL_MAT + SOFT_MAX + MUL_MAT); auto = on")
	c.be.Register(fs)
	c.fb.Register(fs)

	fs.Float64Var(&c.temp, "temp", cli.F32(d.Temp), "temperature; 0 or less is greedy decoding")
	fs.IntVar(&c.topK, "top-k", d.TopK, "keep the k most likely tokens (0: off)")
	fs.Float64Var(&c.topP, "top-p", cli.F32(d.TopP), "nucleus sampling threshold (1: off)")
	fs.Float64Var(&c.minP, "min-p", cli.F32(d.MinP), "keep tokens at least this fraction as likely as the best (0: off)")
	fs.Float64Var(&c.typical, "typical", cli.F32(d.Typical), "locally typical sampling mass (1: off)")
	fs.Float64Var(&c.tfs, "tfs", cli.F32(d.TFSZ), "tail-free sampling z (1: off)")
	fs.IntVar(&c.minKeep, "min-keep", d.MinKeep, "fewest candidates the filters leave")
	fs.IntVar(&c.repeatLastN, "repeat-last-n", d.RepeatLastN, "penalty window in tokens (0: off, -1: the context size)")
	fs.Float64Var(&c.repeatPenalty, "repeat-penalty", cli.F32(d.RepeatPenalty), "repetition penalty (1: off)")
	fs.Float64Var(&c.freqPenalty, "frequency-penalty", cli.F32(d.FreqPenalty), "frequency penalty (0: off)")
	fs.Float64Var(&c.presPen, "presence-penalty", cli.F32(d.PresentPenalty), "presence penalty (0: off)")
	fs.IntVar(&c.mirostat, "mirostat", d.Mirostat, "mirostat version: 0 (off), 1 or 2")
	fs.Float64Var(&c.mirostatEta, "mirostat-lr", cli.F32(d.MirostatEta), "mirostat learning rate (eta)")
	fs.Float64Var(&c.mirostatTau, "mirostat-ent", cli.F32(d.MirostatTau), "mirostat target entropy (tau)")
	fs.Int64Var(&c.seed, "seed", -1, "sampling seed (-1: a random one, printed)")
	fs.BoolVar(&c.ignoreEOS, "ignore-eos", false, "keep generating past the end-of-text token")

	fs.BoolVar(&c.bench, "bench", false, "measure prompt processing (pp) and generation (tg) speed like llama-bench")
	fs.IntVar(&c.reps, "r", 5, "bench: repetitions of each test")
	fs.StringVar(&c.output, "o", "md", "bench: output format: md, json or csv")
	fs.BoolVar(&c.noWarmup, "no-warmup", false, "bench: skip the warm-up run")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the decoding (every bench test, warm-ups included; or prompt and generation) to `file`: go tool pprof -top FILE")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `run generates text with a GGUF model, or measures its speed.

Usage:
	run -m model.gguf -p "prompt" [-n 64] [flags]
	run -m model.gguf -bench [-p 512,1024] [-n 128] [-r 5] [-o md|json|csv]

Tokens are printed as they are generated; timings go to stderr.

Flags (each also takes two dashes, e.g. --top-k):
`)
		fs.PrintDefaults()
		fmt.Fprint(w, `
Examples:
	run -m stories260K.gguf -p "Once upon a time" -n 64 -temp 0
	run -m model.gguf -f prompt.txt -n 256 -temp 0.8 -top-k 40 -seed 1
	run -m model.gguf -p "Hello" -t 4 -backend cpu -tier generic -kv-type q8_0
	run -m model.gguf -bench -p 128,512 -n 32,128 -r 3 -o json
`)
	}
	return fs
}

// run is the command without interruption: see runContext.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is the command: it parses args, writes the text to stdout and
// reports to stderr, and returns the exit code. When cx is done (Ctrl-C),
// generation stops after the current token and reports its timings; a
// benchmark stops with an error.
func runContext(cx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := newFlags(&c)
	if ok, code := cli.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := c.check(fs); err != nil {
		return cli.Report(stderr, "run", err)
	}
	c.start = time.Now()
	m, err := model.Load(c.modelPath)
	if err != nil {
		return cli.Report(stderr, "run", err)
	}
	defer m.Close()
	be, fallback, err := cli.OpenWithFallback(c.target, c.fbTarget, c.useFB, cli.ResolveThreads(c.threads))
	if err != nil {
		return cli.Report(stderr, "run", cli.Usagef("backend", "%v", err))
	}
	defer be.Close()
	dry := ops.IsDryRun(be)
	if dry {
		fmt.Fprintf(stderr, "run: WARNING: %s runs dry: no kernel is executed, the text is garbage, and times are the host's work alone (launching, capturing), not the device's\n", be.Name())
	}
	if c.bench && ops.IsEmulated(be) && !dry {
		return cli.Report(stderr, "run", cli.Usagef("backend", "%s is emulated: -bench measures speed, and an emulator's times are not the device's performance (run without -bench to check its text)", c.target.Name()))
	}
	if fallback != nil {
		defer fallback.Close()
		c.fallback = fallback
		c.notes = cli.NewFallbackNotes(stderr, "run", fallback)
	}
	var prof *cli.AtomicFile
	if c.cpuProfile != "" {
		if prof, err = cli.CreateAtomic(c.cpuProfile); err != nil {
			return cli.Report(stderr, "run", fmt.Errorf("-cpuprofile: %w", err))
		}
		defer prof.Abort()
		if err := pprof.StartCPUProfile(prof); err != nil {
			return cli.Report(stderr, "run", fmt.Errorf("-cpuprofile: %w", err))
		}
	}
	if c.bench {
		err = benchmark(cx, &c, m, be, stdout, stderr)
		if dry {
			fmt.Fprintf(stderr, "run: WARNING: %s ran dry: these speeds are the host path's alone (no kernel ran), never the device's\n", be.Name())
		}
	} else {
		err = generate(cx, &c, m, be, stdout, stderr)
	}
	if prof != nil {
		pprof.StopCPUProfile()
		if err == nil {
			err = prof.Commit()
		}
	}
	if err != nil {
		return cli.Report(stderr, "run", cli.FallbackHint(err, c.useFB))
	}
	return cli.ExitOK
}

// check validates the flags against each other and resolves the derived
// fields; its errors are *cli.UsageError.
func (c *config) check(fs *flag.FlagSet) error {
	if c.modelPath == "" {
		return cli.Usagef("m", "a model file is required")
	}
	var err error
	if c.kvType, err = c.kv.Type(); err != nil {
		return err
	}
	c.flash = c.fa.Value
	if c.kvType == quant.Q8_0 && !c.flash {
		return cli.Usagef("fa", "a q8_0 KV cache needs flash attention (-fa on)")
	}
	switch {
	case c.nCtx < 0:
		return cli.Usagef("c", "want a context size >= 0, not %d", c.nCtx)
	case c.nBatch < 1:
		return cli.Usagef("b", "want a batch size >= 1, not %d", c.nBatch)
	case c.nUBatch < 1:
		return cli.Usagef("ub", "want a micro-batch size >= 1, not %d", c.nUBatch)
	}
	if c.target, err = c.be.Target(); err != nil {
		return err
	}
	if c.fbTarget, c.useFB, err = c.fb.Resolve(c.target); err != nil {
		return err
	}
	if c.cpuProfile != "" {
		ins := []cli.Input{{Flag: "m", Path: c.modelPath}, {Flag: "f", Path: c.promptFile}}
		if err := cli.CheckOutputs(ins, cli.Output{Flag: "cpuprofile", Path: c.cpuProfile}); err != nil {
			return err
		}
	}
	if c.bench {
		if cli.Visited(fs, "f") {
			return cli.Usagef("f", "a prompt file makes no sense with -bench")
		}
		switch c.output {
		case "md", "json", "csv":
		default:
			return cli.Usagef("o", "output format %q is not md, json or csv", c.output)
		}
		if c.reps < 1 {
			return cli.Usagef("r", "want at least 1 repetition, not %d", c.reps)
		}
		c.ppList, c.tgList = []int{512}, []int{128}
		if c.prompt != "" {
			if c.ppList, err = cli.ParseIntList(c.prompt, 0, 1<<20); err != nil {
				return cli.Usagef("p", "with -bench, want prompt lengths such as 512 or 128,512: %v", err)
			}
		}
		if c.nPredict != "" {
			if c.tgList, err = cli.ParseIntList(c.nPredict, 0, 1<<20); err != nil {
				return cli.Usagef("n", "with -bench, want generation lengths such as 128 or 32,128: %v", err)
			}
		}
		if slices.Max(c.ppList) == 0 && slices.Max(c.tgList) == 0 {
			return cli.Usagef("p", "no test to run: every -p and -n length is 0")
		}
		return nil
	}
	if cli.Visited(fs, "p") && c.promptFile != "" {
		return cli.Usagef("f", "give the prompt with -p or -f, not both")
	}
	if c.nPredict == "" {
		c.nPredict = "-1"
	}
	if c.n, err = parseCount(c.nPredict); err != nil {
		return cli.Usagef("n", "%v", err)
	}
	return c.checkSampling()
}

// parseCount parses -n in generation mode: a count >= -1.
func parseCount(s string) (int, error) {
	l, err := cli.ParseIntList(s, -1, 1<<30)
	if err != nil {
		return 0, err
	}
	if len(l) != 1 {
		return 0, fmt.Errorf("want one token count, not a list (lists are for -bench)")
	}
	return l[0], nil
}

// checkSampling checks each sampling flag, naming the flag at fault.
func (c *config) checkSampling() error {
	unit := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return cli.Usagef(name, "want a number in [0, 1], not %v", v)
		}
		return nil
	}
	finite := func(name string, v float64) error {
		if v != v || v > 1e30 || v < -1e30 {
			return cli.Usagef(name, "want a finite number, not %v", v)
		}
		return nil
	}
	checks := []error{
		finite("temp", c.temp),
		unit("top-p", c.topP), unit("min-p", c.minP), unit("typical", c.typical), unit("tfs", c.tfs),
		finite("frequency-penalty", c.freqPenalty), finite("presence-penalty", c.presPen),
		finite("repeat-penalty", c.repeatPenalty),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	switch {
	case c.topK < 0:
		return cli.Usagef("top-k", "want >= 0 (0 disables it), not %d", c.topK)
	case c.minKeep < 0:
		return cli.Usagef("min-keep", "want >= 0, not %d", c.minKeep)
	case c.repeatLastN < -1:
		return cli.Usagef("repeat-last-n", "want >= -1 (-1: the context size), not %d", c.repeatLastN)
	case c.repeatPenalty <= 0:
		return cli.Usagef("repeat-penalty", "want > 0 (1 disables it), not %v", c.repeatPenalty)
	case c.mirostat < 0 || c.mirostat > 2:
		return cli.Usagef("mirostat", "want 0 (off), 1 or 2, not %d", c.mirostat)
	case !(c.mirostatEta >= 0 && c.mirostatEta < 1e30):
		return cli.Usagef("mirostat-lr", "want a finite number >= 0, not %v", c.mirostatEta)
	case !(c.mirostatTau >= 0 && c.mirostatTau < 1e30):
		return cli.Usagef("mirostat-ent", "want a finite number >= 0, not %v", c.mirostatTau)
	case c.seed < -1:
		return cli.Usagef("seed", "want a seed >= 0, or -1 for a random one, not %d", c.seed)
	}
	return nil
}

// contextParams returns the context parameters for a context of nCtx cells
// (0: the model's default), with llama.cpp's clamping: the batch is at most
// the context, the micro-batch at most the batch.
func (c *config) contextParams(m *model.Model, nCtx int) model.ContextParams {
	if nCtx == 0 {
		nCtx = min(m.Hparams.NCtxTrain, 4096)
	}
	nb := min(c.nBatch, nCtx)
	return model.ContextParams{
		NCtx:      nCtx,
		NBatch:    nb,
		NUBatch:   min(c.nUBatch, nb),
		KVType:    c.kvType,
		FlashAttn: c.flash,
		NSeqMax:   1,
		Fallback:  c.fallback,
	}
}

// loadTokenizer builds the tokenizer of m's file.
func loadTokenizer(m *model.Model) (tokenizer.Tokenizer, error) {
	v, err := tokenizer.VocabFromGGUF(m.File())
	if err != nil {
		return nil, err
	}
	if v.NumTokens() != m.Hparams.NVocab {
		return nil, fmt.Errorf("the vocabulary has %d tokens but the model's output has %d", v.NumTokens(), m.Hparams.NVocab)
	}
	return tokenizer.New(v)
}
