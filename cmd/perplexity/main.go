package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
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
	modelPath string
	textPath  string
	nCtx      int
	nBatch    int
	nUBatch   int
	nChunks   int
	threads   int
	lf        bool
	kldBase   string
	kld       string
	kldFormat string
	imatrix   string // -imatrix-out
	imatFmt   string // -imatrix-format
	imatOut   bool   // -process-output
	kv        cli.KVFlags
	fa        *cli.OnOff
	be        cli.BackendFlags
	progress  bool

	kvType quant.Type
	ctxSet bool            // -c given
	target registry.Target // resolved from backend and tier
	fb     cli.FallbackFlag
	// fbTarget, when useFB (-fallback), computes the nodes target does
	// not support.
	fbTarget registry.Target
	useFB    bool
}

// newFlags defines the flags on a new FlagSet filling c.
func newFlags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("perplexity", flag.ContinueOnError)
	cli.ModelVar(fs, &c.modelPath, "required")
	fs.StringVar(&c.textPath, "f", "", "text file to measure (required, except with -kld)")
	fs.IntVar(&c.nCtx, "c", 512, fmt.Sprintf("chunk length in tokens (context size), at least %d: a chunk scores its second half", minCtx))
	fs.IntVar(&c.nBatch, "b", 0, "most tokens per batch (0: the chunk length); a batch of several chunks (b >= 2c) evaluates them as parallel sequences, as llama-perplexity's default of 2048 does")
	fs.IntVar(&c.nUBatch, "ub", 512, "most tokens one graph computes")
	fs.IntVar(&c.nChunks, "chunks", -1, "evaluate only the first N chunks (-1: all)")
	cli.ThreadsVar(fs, &c.threads, "")
	fs.BoolVar(&c.lf, "lf", false, "turn CRLF line endings of the text into LF before tokenizing (by default the text is used byte for byte)")
	fs.StringVar(&c.kldBase, "kld-base", "", "save the model's log-probabilities at every scored position to `FILE`, as the base of a later -kld run (never -m's or -f's file)")
	fs.StringVar(&c.kldFormat, "kld-format", "kernbench", "the format -kld-base writes: kernbench, or llama (llama-perplexity's --kl-divergence-base file, magic _logits_)")
	fs.StringVar(&c.kld, "kld", "", "compare the model with the base log-probabilities in FILE (written by -kld-base, or llama-perplexity's --kl-divergence-base file): KL divergence, PPL ratio, same top token")
	fs.StringVar(&c.imatrix, "imatrix-out", "", "also compute an importance matrix over the chunks, as llama-imatrix does, and write it to `FILE` (quantize -imatrix and llama-quantize --imatrix read it)")
	fs.StringVar(&c.imatFmt, "imatrix-format", "gguf", "the format -imatrix-out writes: gguf (llama-imatrix's default) or dat (its legacy format)")
	fs.BoolVar(&c.imatOut, "process-output", false, "with -imatrix-out, collect output.weight's activations too (llama-imatrix's --process-output)")
	c.kv.Register(fs)
	c.fa = cli.NewOnOff(true)
	fs.Var(c.fa, "fa", "flash attention: on (FLASH_ATTN_EXT) or off (MUL_MAT + SOFT_MAX + MUL_MAT); auto = on")
	c.be.Register(fs)
	c.fb.Register(fs)
	fs.BoolVar(&c.progress, "progress", true, "show progress on stderr (-progress=false: none)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `perplexity measures a model's perplexity on a text the way llama-perplexity
does, and compares two models by KL divergence.

Usage:
	perplexity -m model.gguf -f text.txt [-c 512] [--chunks N]
	perplexity -m base.gguf -f text.txt -kld-base base.kld
	perplexity -m other.gguf -kld base.kld

The text is split into chunks of -c tokens, each evaluated from an empty
cache with BOS at its start, and the second half of each chunk is scored.
The running perplexity is printed after each chunk as [k]PPL, then the
final estimate with its standard error. Run "go doc ./cmd/perplexity" for
the formulas and the KLD file format.

The text is used byte for byte unless -lf is given, which turns CRLF line
endings into LF first: the wiki.test.raw in shared/testdata has CRLF
endings, the copy llama.cpp's scripts download has LF, and the two
tokenize differently.

Flags (each also takes two dashes, e.g. --chunks):
`)
		fs.PrintDefaults()
		fmt.Fprint(w, `
Examples:
	perplexity -m stories260K.gguf -f wiki.test.raw -c 128 --chunks 40
	perplexity -m model-f16.gguf -f wiki.test.raw -kld-base f16.kld
	perplexity -m model-q4_0.gguf -kld f16.kld -t 4
	perplexity -m model.gguf -f text.txt -lf -b 2048 -kv-type q8_0
	perplexity -m model-f16.gguf -f calibration.txt -c 512 -imatrix-out imatrix.gguf
`)
	}
	return fs
}

// run is the command without interruption: see runContext.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext parses args, runs the measurement (stopping when cx is done)
// and returns the exit code. Results go to stdout, progress and
// information to stderr.
func runContext(cx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := newFlags(&c)
	if ok, code := cli.Parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := c.check(fs); err != nil {
		return cli.Report(stderr, "perplexity", err)
	}
	if err := execute(cx, &c, stdout, stderr); err != nil {
		return cli.Report(stderr, "perplexity", cli.FallbackHint(err, c.useFB))
	}
	return cli.ExitOK
}

// check validates the flags; its errors are *cli.UsageError.
func (c *config) check(fs *flag.FlagSet) error {
	if c.modelPath == "" {
		return cli.Usagef("m", "a model file is required")
	}
	if c.kld != "" && c.kldBase != "" {
		return cli.Usagef("kld", "give -kld or -kld-base, not both")
	}
	if c.kldFormat != "kernbench" && c.kldFormat != "llama" {
		return cli.Usagef("kld-format", "want kernbench or llama, not %q", c.kldFormat)
	}
	if cli.Visited(fs, "kld-format") && c.kldBase == "" {
		return cli.Usagef("kld-format", "only -kld-base writes a file (-kld reads either format)")
	}
	if c.textPath == "" && c.kld == "" {
		return cli.Usagef("f", "a text file is required")
	}
	if c.imatFmt != "gguf" && c.imatFmt != "dat" {
		return cli.Usagef("imatrix-format", "want gguf or dat, not %q", c.imatFmt)
	}
	if c.imatrix == "" && (cli.Visited(fs, "imatrix-format") || c.imatOut) {
		return cli.Usagef("imatrix-out", "-imatrix-format and -process-output go with -imatrix-out")
	}
	if c.imatrix != "" {
		if c.kld != "" {
			return cli.Usagef("imatrix-out", "an importance matrix is computed in the perplexity mode, not with -kld")
		}
		inputs := []cli.Input{{Flag: "m", Path: c.modelPath}, {Flag: "f", Path: c.textPath}}
		outputs := []cli.Output{{Flag: "imatrix-out", Path: c.imatrix}}
		if c.kldBase != "" {
			outputs = append(outputs, cli.Output{Flag: "kld-base", Path: c.kldBase})
		}
		if err := cli.CheckOutputs(inputs, outputs...); err != nil {
			return err
		}
	}
	c.ctxSet = cli.Visited(fs, "c")
	switch {
	case c.nCtx < minCtx || c.nCtx > maxKLDCtx:
		return cli.Usagef("c", "want a chunk length in [%d, %d], not %d: a chunk scores positions c/2 to c-2, which for -c %d is none", minCtx, maxKLDCtx, c.nCtx, c.nCtx)
	case c.nBatch < 0:
		return cli.Usagef("b", "want a batch size >= 1 (0: the chunk length), not %d", c.nBatch)
	case c.nUBatch < 1:
		return cli.Usagef("ub", "want a micro-batch size >= 1, not %d", c.nUBatch)
	case c.nChunks == 0 || c.nChunks < -1:
		return cli.Usagef("chunks", "want a chunk count >= 1, or -1 for all, not %d", c.nChunks)
	}
	var err error
	if c.kvType, err = c.kv.Type(); err != nil {
		return err
	}
	if c.kvType == quant.Q8_0 && !c.fa.Value {
		return cli.Usagef("fa", "a q8_0 KV cache needs flash attention (-fa on)")
	}
	if c.target, err = c.be.Target(); err != nil {
		return err
	}
	if c.fbTarget, c.useFB, err = c.fb.Resolve(c.target); err != nil {
		return err
	}
	if c.kldBase != "" {
		inputs := []cli.Input{{Flag: "m", Path: c.modelPath}, {Flag: "f", Path: c.textPath}}
		if err := cli.CheckOutputs(inputs, cli.Output{Flag: "kld-base", Path: c.kldBase}); err != nil {
			return err
		}
	}
	return nil
}

// minCtx is the shortest chunk: one that scores one position.
const minCtx = 3

// session is what one run works with.
type session struct {
	c      *config
	m      *model.Model
	tok    tokenizer.Tokenizer
	stdout io.Writer
	stderr io.Writer
	notes  *cli.FallbackNotes // names the nodes -fallback computes
}

// execute loads the model and the text and runs the mode the flags select.
func execute(cx context.Context, c *config, stdout, stderr io.Writer) error {
	m, err := model.Load(c.modelPath)
	if err != nil {
		return err
	}
	defer m.Close()
	v, err := tokenizer.VocabFromGGUF(m.File())
	if err != nil {
		return err
	}
	if v.NumTokens() != m.Hparams.NVocab {
		return fmt.Errorf("the vocabulary has %d tokens but the model's output has %d", v.NumTokens(), m.Hparams.NVocab)
	}
	if v.AddEOS {
		return fmt.Errorf("the vocabulary adds EOS after every text; llama-perplexity's method assumes it does not")
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return err
	}
	be, fallback, err := cli.OpenWithFallback(c.target, c.fbTarget, c.useFB, cli.ResolveThreads(c.threads))
	if err != nil {
		return cli.Usagef("backend", "%v", err)
	}
	defer be.Close()
	if fallback != nil {
		defer fallback.Close()
	}
	s := &session{c: c, m: m, tok: tok, stdout: stdout, stderr: stderr, notes: cli.NewFallbackNotes(stderr, "perplexity", fallback)}
	fmt.Fprintf(stderr, "perplexity: model %s (%s, %d tokens vocabulary); backend %s; KV cache %v, flash attention %s\n",
		c.modelPath, m.Hparams.Arch, m.Hparams.NVocab, cli.BackendDesc(be), c.kvType, onOff(c.fa.Value))
	if c.ctxSet && c.nCtx > m.Hparams.NCtxTrain {
		fmt.Fprintf(stderr, "perplexity: warning: the model was trained on %d tokens of context, -c is %d\n", m.Hparams.NCtxTrain, c.nCtx)
	}
	base := model.ContextParams{KVType: c.kvType, FlashAttn: c.fa.Value, Fallback: fallback}
	if c.kld != "" {
		return s.compare(cx, be, base)
	}
	return s.perplexity(cx, be, base)
}

// onOff writes a switch.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// readTokens reads and tokenizes the text file, with BOS in front where the
// vocabulary adds it.
func (s *session) readTokens() ([]int32, error) {
	b, err := os.ReadFile(s.c.textPath)
	if err != nil {
		return nil, err
	}
	text := string(b)
	if s.c.lf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	toks, err := s.tok.Encode(text, true)
	if err != nil {
		return nil, fmt.Errorf("tokenizing %s: %w", s.c.textPath, err)
	}
	return toks, nil
}

// chunkTokens returns the tokens of the first n chunks of length nCtx, as
// evaluated: chunk k is tokens[k*nCtx : (k+1)*nCtx] with its first token
// replaced by BOS when the vocabulary adds BOS.
func (s *session) chunkTokens(tokens []int32, nCtx, n int) []int32 {
	out := make([]int32, n*nCtx)
	copy(out, tokens[:n*nCtx])
	v := s.tok.Vocab()
	if v.AddBOS && v.BOS >= 0 {
		for k := range n {
			out[k*nCtx] = v.BOS
		}
	}
	return out
}
