// Command mkmodel writes a synthetic model of any size as GGUF: seeded
// random weights scaled so activations stay sane, and a valid
// SentencePiece-style tokenizer, so that it loads and runs like a real
// model. It is for speed tests at realistic sizes; its output is noise.
//
// Usage:
//
//	mkmodel -o out.gguf [-arch llama|mixtral|gpt-oss|mamba|mamba2] [-preset NAME]
//	        [-layers N -embd N -heads N -kv-heads N -ff N -vocab N -ctx N]
//	        [-experts N -experts-used N -head-dim N -swa N]
//	        [-d-state N -d-conv N -d-inner N -dt-rank N -groups N] [-type TYPE] [-seed N]
//
// -arch picks the architecture, written with llama.cpp's keys and tensor
// names: llama; mixtral (general.architecture llama with experts: -ff is
// each expert's width); gpt-oss (attention sinks, Q/K/V/O biases, the
// even layers with a sliding window of -swa, NeoX rope with YaRN, experts
// with biases); mamba (Mamba-1: -embd, -d-inner, -d-state, -d-conv,
// -dt-rank; the head and ff flags do not apply); mamba2 (Mamba-2: -dt-rank
// heads, B and C in -groups groups).
//
// Flags given explicitly override the preset's values. -type takes what
// quantize takes (a weight type such as f16 or q4_0, or a mix such as
// q4_K_M), and the same rules decide each tensor's type, fallbacks
// included; the mixes quantize makes only with an importance matrix
// (iq1_*, iq2_*, iq3_xxs, iq3_xs, q2_K_S) are refused.
//
// Weights: every matrix W[n_in, n_out] is drawn from N(0, 1/n_in) (so it
// maps an input of RMS 1 to outputs of RMS about 1: attention scores and
// logits come out with a standard deviation near 1), norm weights are 1.
// Each row has its own random stream, seeded by -seed, the tensor and the
// row, so the file does not depend on -t.
//
// Before writing, mkmodel prints the size of the file it is about to
// write, and refuses one larger than 4 GiB unless -force is given
// (llama-7b in f16 is 13.5 GB). The output is checked first (its folder
// must take new files) and written under a temporary name that becomes
// the file only when it is complete; an error, SIGINT or SIGTERM removes
// it.
//
// Exit status: 0 on success, 1 when writing fails, 2 for a bad command
// line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/quantize"
)

// maxSize is the largest file mkmodel writes without -force.
const maxSize = 4 << 30

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	out     string
	preset  string
	typ     string
	eps     float64
	base    float64
	verbose bool
	force   bool
	help    bool
	synth
}

// shapeFlags are the flags that set the shape, with their fields.
func shapeFlags(s *shape) []struct {
	name, usage string
	p           *int
} {
	return []struct {
		name, usage string
		p           *int
	}{
		{"layers", "number of layers (block_count)", &s.Layers},
		{"embd", "embedding width (embedding_length)", &s.Embd},
		{"heads", "attention heads", &s.Heads},
		{"kv-heads", "key/value heads (GQA; must divide -heads)", &s.KVHeads},
		{"ff", "feed-forward width (feed_forward_length)", &s.FF},
		{"vocab", "vocabulary size (at least 259)", &s.Vocab},
		{"ctx", "training context length (context_length)", &s.Ctx},
	}
}

// newFlags returns the flag set, filling c, with defaults from the tiny
// preset.
func newFlags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("mkmodel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tiny, _ := findPreset("tiny")
	def := shapeFlags(&tiny.shape)
	for i, f := range shapeFlags(&c.shape) {
		fs.IntVar(f.p, f.name, *def[i].p, f.usage)
	}
	fs.StringVar(&c.Arch, "arch", "llama", "architecture: "+strings.Join(archNames, ", "))
	for _, f := range archFlags(&c.archShape) {
		fs.IntVar(f.p, f.name, 0, f.usage)
	}
	fs.StringVar(&c.out, "o", "", "output file (required)")
	fs.StringVar(&c.preset, "preset", "", "start from a preset shape (see below)")
	fs.StringVar(&c.typ, "type", "f16", "weight type or mix, as quantize takes")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
	fs.BoolVar(&c.Tied, "tied", false, "no output.weight: the output reuses token_embd")
	fs.Float64Var(&c.eps, "eps", 1e-5, "RMS norm epsilon")
	fs.Float64Var(&c.base, "rope-base", 10000, "RoPE frequency base")
	fs.StringVar(&c.Name, "name", "", "general.name (default: a description of the model)")
	cli.ThreadsVar(fs, &c.Params.Threads, "threads generating rows")
	fs.BoolVar(&c.Params.Pure, "pure", false, "no output or layer rules: every matrix gets -type's default type")
	fs.Var(&quantize.TypeFlag{}, "output-type", "type of output.weight (overrides the rules)")
	fs.Var(&quantize.TypeFlag{}, "token-embd-type", "type of token_embd.weight")
	fs.BoolVar(&c.verbose, "v", false, "print every tensor, not only fallbacks")
	fs.BoolVar(&c.force, "force", false, fmt.Sprintf("write a file larger than %d GiB", maxSize>>30))
	return fs
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// parse reads the command line.
func parse(args []string) (config, error) {
	var c config
	fs := newFlags(&c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help = true
			return c, nil
		}
		return c, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected argument %q (the output file goes after -o)", fs.Arg(0))
	}
	if c.preset != "" {
		p, ok := findPreset(c.preset)
		if !ok {
			return c, usagef("-preset: unknown preset %q (mkmodel -h lists them)", c.preset)
		}
		// The preset's values, except where a flag was given.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		given := c.shape
		c.shape = p.shape
		src, dst := shapeFlags(&given), shapeFlags(&c.shape)
		for i, f := range dst {
			if set[f.name] {
				*f.p = *src[i].p
			}
		}
		if !set["tied"] {
			c.Tied = p.tied
		}
		// An architecture preset sets -arch and its sizes, except where
		// given; a llama preset takes any -arch (its shape is the base).
		if p.arch.Arch != "" {
			if set["arch"] && c.Arch != p.arch.Arch {
				return c, usagef("-arch: preset %s is a %s model, not %s", p.name, p.arch.Arch, c.Arch)
			}
			c.Arch = p.arch.Arch
			psrc, pdst := archFlags(&p.arch), archFlags(&c.archShape)
			for i, f := range pdst {
				if !set[f.name] {
					*f.p = *psrc[i].p
				}
			}
		}
	}
	if c.out == "" {
		return c, usagef("-o: no output file given")
	}
	c.archShape.defaults(c.shape)
	if err := c.synth.validate(); err != nil {
		return c, usageError{err.Error()}
	}
	s, err := quantize.ParseScheme(c.typ)
	if err != nil {
		return c, usagef("-type: unknown type %q (quantize -rules lists them)", c.typ)
	}
	if s.NeedsImatrix {
		return c, usagef("-type: %s needs an importance matrix: write f32 and run quantize -imatrix", s.Name)
	}
	c.Params.Scheme = s
	c.Params.OutputType = fs.Lookup("output-type").Value.(*quantize.TypeFlag).T
	c.Params.TokenEmbdType = fs.Lookup("token-embd-type").Value.(*quantize.TypeFlag).T
	if !(c.eps >= 0 && c.eps < 1) {
		return c, usagef("-eps: %v is not in [0, 1)", c.eps)
	}
	if !(c.base > 0 && c.base < 1e30) {
		return c, usagef("-rope-base: %v is not a positive number", c.base)
	}
	c.Eps, c.RopeBase = float32(c.eps), float32(c.base)
	if err := cli.CheckOutputs(nil, cli.Output{Flag: "o", Path: c.out}); err != nil {
		return c, usageError{strings.TrimPrefix(err.Error(), "flag ")}
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "mkmodel: %v (mkmodel -h for usage)\n", err)
		return exitUsage
	}
	if c.help {
		usage(stdout)
		return exitOK
	}
	params, bytes := c.size()
	if bytes > maxSize && !c.force {
		fmt.Fprintf(stderr, "mkmodel: %s would be %s (%s parameters as %s), more than %d GiB: give -force to write it, or pick a smaller -type (mkmodel -h)\n",
			c.out, sizeString(bytes), paramString(params), c.Params.Scheme.Name, maxSize>>30)
		return exitUsage
	}
	fmt.Fprintf(stdout, "mkmodel: writing %s: %s parameters as %s, %s\n", c.out, paramString(params), c.Params.Scheme.Name, sizeString(bytes))
	start := time.Now()
	out, err := cli.CreateAtomic(c.out)
	if err != nil {
		fmt.Fprintf(stderr, "mkmodel: %v\n", err)
		return exitFailure
	}
	defer out.Abort()
	res, err := c.synth.write(out.File, stdout, c.verbose)
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		fmt.Fprintf(stderr, "mkmodel: %v\n", err)
		return exitFailure
	}
	s, a := c.shape, c.archShape
	fmt.Fprintf(stdout, "mkmodel: wrote %s in %.1f s\n", c.out, time.Since(start).Seconds())
	switch a.Arch {
	case "mamba":
		fmt.Fprintf(stdout, "  shape: mamba, %d layers, embd %d, d_inner %d, d_state %d, d_conv %d, dt_rank %d, vocab %d, ctx %d, tied output %v\n",
			s.Layers, s.Embd, a.DInner, a.DState, a.DConv, a.DtRank, s.Vocab, s.Ctx, c.Tied)
	case "mamba2":
		fmt.Fprintf(stdout, "  shape: mamba2, %d layers, embd %d, d_inner %d in %d heads, d_state %d in %d groups, d_conv %d, vocab %d, ctx %d, tied output %v\n",
			s.Layers, s.Embd, a.DInner, a.DtRank, a.DState, a.Groups, a.DConv, s.Vocab, s.Ctx, c.Tied)
	default:
		hd := s.headDim()
		if a.Arch == "gpt-oss" {
			hd = a.HeadDim
		}
		fmt.Fprintf(stdout, "  shape: %s, %d layers, embd %d, %d heads (%d kv, head size %d), ff %d, vocab %d, ctx %d, tied output %v\n",
			a.Arch, s.Layers, s.Embd, s.Heads, s.KVHeads, hd, s.FF, s.Vocab, s.Ctx, c.Tied)
		if a.Experts > 0 {
			fmt.Fprintf(stdout, "  experts: %d, %d used per token, each ff %d", a.Experts, a.ExpertsUsed, s.FF)
			if a.Arch == "gpt-oss" {
				fmt.Fprintf(stdout, "; sliding window %d on the even layers", a.SWA)
			}
			fmt.Fprintln(stdout)
		}
	}
	fmt.Fprintf(stdout, "  %s parameters (%d), type %s (file_type %d), %.2f bits per weight, file %.2f MiB (%d bytes), seed %d\n",
		paramString(res.Params), res.Params, c.Params.Scheme.Name, c.Params.Scheme.FileType,
		8*float64(res.Bytes)/float64(res.Params), float64(res.FileSize)/(1<<20), res.FileSize, c.Seed)
	if res.Fallback > 0 {
		fmt.Fprintf(stdout, "  %d tensors fell back to another type (listed above)\n", res.Fallback)
	}
	return exitOK
}

// size returns the parameters of the model c describes and the bytes of
// its tensor data (the file is that and its metadata, a vocabulary's
// worth).
func (c config) size() (params, bytes int64) {
	for _, d := range c.synth.plan() {
		params += d.Elements()
		bytes += d.Bytes(d.To)
	}
	return params, bytes
}

// sizeString formats a byte count: "13.5 GB (12.6 GiB)", "63.2 MB".
func sizeString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB (%.1f GiB)", float64(n)/1e9, float64(n)/(1<<30))
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1e3)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `mkmodel writes a synthetic GGUF model (llama, mixtral, gpt-oss, mamba or mamba2):
seeded random weights and a SentencePiece-style vocabulary, so it loads and
runs like a real model.

Usage:

	mkmodel -o out.gguf [-arch ARCH] [-preset NAME] [shape flags] [-type TYPE] [-seed N]

Flags (explicit shape flags override the preset's values):
`)
	var c config
	fs := newFlags(&c)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, "\nPresets:\n")
	for _, p := range presets {
		m := p.synth()
		n, _ := m.paramCount()
		switch m.Arch {
		case "mamba", "mamba2":
			fmt.Fprintf(w, "  %-16s %-6s %s: layers %d, embd %d, vocab %d, ctx %d: %s\n",
				p.name, paramString(n), m.Arch, p.Layers, p.Embd, p.Vocab, p.Ctx, p.about)
		default:
			fmt.Fprintf(w, "  %-16s %-6s %s: layers %d, embd %d, heads %d/%d, ff %d, vocab %d, ctx %d: %s\n",
				p.name, paramString(n), m.Arch, p.Layers, p.Embd, p.Heads, p.KVHeads, p.FF, p.Vocab, p.Ctx, p.about)
		}
	}
	fmt.Fprint(w, `
Weights: each matrix W[n_in, n_out] ~ N(0, 1/n_in), norm weights 1, so
activations keep an RMS near 1 and the logits a standard deviation near 1.
Biases and attention sinks are 0; Mamba's A is -1..-d_state per channel and
its dt bias the inverse softplus of a step in [1e-3, 1e-1].
The vocabulary: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then
"▁", ASCII characters and lowercase letter strings with descending scores.

Examples:

	mkmodel -o tiny.gguf
	mkmodel -o m100.gguf -preset 100m -type q4_0
	mkmodel -o llama-7b.gguf -preset llama-7b -type q4_0 -force    # 3.8 GB
	mkmodel -o x.gguf -layers 12 -embd 768 -heads 12 -kv-heads 4 -ff 2048 -vocab 32000 -ctx 2048 -type q4_K_M -seed 1
	mkmodel -o moe.gguf -arch mixtral -preset 100m -ff 512 -experts 8 -experts-used 2 -type q4_K_M
	mkmodel -o oss.gguf -arch gpt-oss -embd 256 -heads 8 -kv-heads 2 -head-dim 64 -ff 256 -swa 64 -type q8_0
	mkmodel -o mamba.gguf -arch mamba -layers 8 -embd 512 -vocab 32000 -type q4_0
`)
}
