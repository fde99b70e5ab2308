// Command quantize rewrites a GGUF model into another tensor type or one
// of llama.cpp's mixes, as llama.cpp's llama-quantize does.
//
// Usage:
//
//	quantize [flags] in.gguf out.gguf TYPE
//
// TYPE is a weight type (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1,
// q2_K, q6_K, iq4_nl, iq4_xs, iq3_s, iq3_xxs, iq2_xs, iq2_xxs, iq1_s,
// iq1_m, tq1_0, tq2_0) or a mix (q2_K_S, q3_K_S, q3_K_M, q3_K_L, q4_K_S,
// q4_K_M, q5_K_S, q5_K_M, iq3_m, iq3_xs, iq2_s, iq2_m, mxfp4_moe; q3_K,
// q4_K and q5_K are aliases of the _M mixes); each applies llama-quantize's
// per-tensor rules for it. "quantize -rules" prints what each does.
// Flags may come before or after the arguments.
//
// -imatrix FILE reads an importance matrix (llama-imatrix's GGUF or
// legacy .dat format, or the imatrix command's) and quantizes as
// llama-quantize does with it: the types that take importance weights use
// ggml's weighted search, and the rules that depend on having one apply;
// the output records quantize.imatrix.* as llama-quantize's does. The
// file types llama-quantize makes only with one (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS, IQ3_XS, Q2_K_S) are refused without it,
// by name.
//
// It prints a line per tensor (name, shape, old and new type, sizes, the
// rule that chose the type, and any fallback to another type where the
// rows do not fit the type's block) and the total size and bits per weight
// at the end.
//
// The input must be a model the runner (package model) takes: its
// architecture, hyperparameters and tensors are read and checked as run
// and perplexity check them (model.FromGGUF, which maps the weights
// without reading them), and a model they would refuse is refused here,
// with their message, before anything is written.
//
// The output is checked before any work: it must not be the input (by
// file identity: another spelling of the path, a link), and its folder
// must take new files. It is written under a temporary name that
// replaces out.gguf only when the whole file is written; an error,
// SIGINT or SIGTERM removes it. Exit status: 0 on success, 1 when
// quantizing fails, 2 for a bad command line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/quantize"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a bad command line: run prints it as one line and
// exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// config is the parsed command line.
type config struct {
	in, out string
	imatrix string
	params  quantize.Params
	rules   bool
	help    bool
}

// newFlags returns the flag set, filling c.
func newFlags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cli.ThreadsVar(fs, &c.params.Threads, "threads converting rows")
	fs.BoolVar(&c.params.Pure, "pure", false, "give every quantized tensor TYPE's default type: no output or layer rules")
	fs.BoolVar(&c.params.LeaveOutput, "leave-output", false, "copy output.weight unchanged")
	fs.Var(&quantize.TypeFlag{}, "output-type", "type of output.weight (overrides the output rule)")
	fs.Var(&quantize.TypeFlag{}, "token-embd-type", "type of token_embd.weight")
	fs.StringVar(&c.imatrix, "imatrix", "", "importance matrix `file` (llama-imatrix's GGUF or legacy .dat, or imatrix's): its weights go to the quantizers that take them, as in llama-quantize")
	fs.BoolVar(&c.rules, "rules", false, "print the rule table and exit")
	return fs
}

// parse reads the command line. Flags may be mixed with the three
// arguments.
func parse(args []string) (config, error) {
	var c config
	fs := newFlags(&c)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.help = true
				return c, nil
			}
			return c, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	c.params.OutputType = fs.Lookup("output-type").Value.(*quantize.TypeFlag).T
	c.params.TokenEmbdType = fs.Lookup("token-embd-type").Value.(*quantize.TypeFlag).T
	if c.rules {
		return c, nil
	}
	if len(pos) != 3 {
		return c, usagef("want 3 arguments (in.gguf out.gguf TYPE), got %d", len(pos))
	}
	c.in, c.out = pos[0], pos[1]
	if err := quantize.CheckImatrix(pos[2], c.imatrix != ""); err != nil {
		return c, usagef("TYPE: %v", strings.TrimPrefix(err.Error(), "quantize: "))
	}
	s, err := quantize.ParseScheme(pos[2])
	if err != nil {
		if strings.Contains(err.Error(), "cannot write yet") {
			return c, usagef("TYPE: %v", strings.TrimPrefix(err.Error(), "quantize: "))
		}
		return c, usagef("TYPE: unknown type %q (quantize -rules lists them)", pos[2])
	}
	c.params.Scheme = s
	if err := cli.CheckOutputs([]cli.Input{{Path: c.in}}, cli.Output{Path: c.out}); err != nil {
		return c, usageError{"out.gguf: " + err.Error()}
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "quantize: %v (quantize -h for usage)\n", err)
		return exitUsage
	}
	if c.help {
		usage(stdout)
		return exitOK
	}
	if c.rules {
		if err := quantize.WriteRules(stdout); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if c.imatrix != "" {
		m, err := imatrix.Read(c.imatrix)
		if err != nil {
			fmt.Fprintf(stderr, "quantize: %v\n", err)
			return exitFailure
		}
		c.params.Imatrix, c.params.ImatrixFile = m, c.imatrix
	}
	in, err := gguf.Open(c.in)
	if err != nil {
		fmt.Fprintf(stderr, "quantize: %v\n", err)
		return exitFailure
	}
	defer in.Close()
	// The architecture's settings and tensors are checked as the runner
	// checks them, before anything is written: a model run would refuse
	// is refused here, not quantized into another file run refuses.
	if _, err := model.FromGGUF(in); err != nil {
		fmt.Fprintf(stderr, "quantize: %s: %v\n", c.in, err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "quantize: %s -> %s\n", c.in, c.out)
	out, err := cli.CreateAtomic(c.out)
	if err != nil {
		fmt.Fprintf(stderr, "quantize: %v\n", err)
		return exitFailure
	}
	defer out.Abort()
	if _, err := quantize.QuantizeTo(in, out.File, c.params, stdout); err != nil {
		fmt.Fprintf(stderr, "quantize: %v\n", strings.TrimPrefix(err.Error(), "quantize: "))
		return exitFailure
	}
	if err := out.Commit(); err != nil {
		fmt.Fprintf(stderr, "quantize: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func usage(w io.Writer) {
	fmt.Fprint(w, `quantize rewrites a GGUF model into another tensor type or mix.

Usage:

	quantize [flags] in.gguf out.gguf TYPE

Flags:
`)
	var c config
	fs := newFlags(&c)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Examples:

	quantize model-f32.gguf model-q8_0.gguf q8_0
	quantize -t 8 model-f16.gguf model-q4_K_M.gguf q4_K_M
	quantize -rules                                       # what each TYPE does
	quantize -pure -output-type q8_0 model.gguf model-q4_0.gguf q4_0
	quantize -imatrix imatrix.gguf model-f32.gguf model-iq4_xs.gguf iq4_xs

`)
	quantize.WriteRules(w)
}
