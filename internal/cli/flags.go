// Package cli holds what kernbench's commands share: the flag vocabulary
// (threads, backend, tier, KV cache types, model, outputs; vocab.go),
// flag parsing with one-line errors, flag values for llama.cpp-style
// options (on/off switches, comma-separated lists), backend selection,
// the checks and the atomic writer of output files (output.go), the
// logits' check (finite.go: a thin call to model.CheckLogits, which finds
// the first non-finite node of a model's graph), terminal detection and a
// progress bar.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/quant"
)

// Exit codes of the commands.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // bad command line
)

// Parse parses args into fs. It returns ok true when the command should go
// on. Otherwise code is the exit code: ExitOK after -h (the usage, written
// by fs.Usage, goes to stdout), ExitUsage after a bad flag or a stray
// argument, reported as one line on stderr ("NAME: MESSAGE") naming the
// flag, with a hint to run NAME -h. A deprecated spelling used (see
// Deprecated) is a line of warning on stderr.
func Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (ok bool, code int) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return false, ExitOK
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (flags come as -name value)", fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", fs.Name(), err, fs.Name())
		return false, ExitUsage
	}
	fs.SetOutput(stderr)
	for _, w := range Warnings(fs) {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), w)
	}
	return true, ExitOK
}

// UsageError is an error in the command line found after parsing, such as
// two flags that contradict each other. Commands report it like a flag
// error: one line and ExitUsage.
type UsageError struct {
	Flag string // the flag at fault, without the dash; "" for an argument
	Msg  string
}

func (e *UsageError) Error() string {
	if e.Flag == "" {
		return e.Msg
	}
	return "flag -" + e.Flag + ": " + e.Msg
}

// Usagef returns a *UsageError for flag name.
func Usagef(name, format string, args ...any) error {
	return &UsageError{Flag: name, Msg: fmt.Sprintf(format, args...)}
}

// Report writes err to stderr as one line prefixed with the command name and
// returns the exit code for it: ExitUsage for a *UsageError, else
// ExitFailure.
func Report(stderr io.Writer, name string, err error) int {
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", name, err, name)
		return ExitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitFailure
}

// Visited reports whether the flag called name was set on the command line.
func Visited(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}

// OnOff is a flag.Value for a switch given as a word: on, off or auto
// (llama.cpp's spelling for -fa), also 1/0, true/false, yes/no. Auto means
// the default, which is Default.
type OnOff struct {
	Value   bool
	Default bool
	set     string
}

// String returns the last value set, or "auto".
func (o *OnOff) String() string {
	if o == nil || o.set == "" {
		return "auto"
	}
	return o.set
}

// Set parses s.
func (o *OnOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "1", "true", "yes", "enabled":
		o.Value = true
	case "off", "0", "false", "no", "disabled":
		o.Value = false
	case "auto", "":
		o.Value = o.Default
	default:
		return fmt.Errorf("want on, off or auto, not %q", s)
	}
	o.set = strings.ToLower(s)
	return nil
}

// NewOnOff returns an OnOff with value and default def.
func NewOnOff(def bool) *OnOff { return &OnOff{Value: def, Default: def} }

// ParseIntList parses a comma-separated list of integers, each in [lo, hi],
// as llama-bench's -p 128,512. Empty items are errors.
func ParseIntList(s string, lo, hi int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty list")
	}
	var out []int
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		v, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", item)
		}
		if v < lo || v > hi {
			return nil, fmt.Errorf("%d is outside [%d, %d]", v, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// KVTypes lists the KV cache types the model runner supports, as -ctk,
// -ctv and -kv-type spell them.
var KVTypes = []quant.Type{quant.F16, quant.F32, quant.Q8_0}

// ParseKVType returns the KV cache element type named s (f16, f32 or q8_0,
// any case).
func ParseKVType(s string) (quant.Type, error) {
	t, err := quant.ParseType(s)
	if err == nil {
		for _, k := range KVTypes {
			if k == t {
				return t, nil
			}
		}
	}
	names := make([]string, len(KVTypes))
	for i, k := range KVTypes {
		names[i] = k.String()
	}
	return 0, fmt.Errorf("KV cache type %q is not one of %s", s, strings.Join(names, ", "))
}

// KVFlags are the KV cache type flags of llama.cpp's tools: -ctk and -ctv
// (cache-type-k, cache-type-v), plus kernbench's -kv-type for both. The
// runner keeps K and V in one type, so the flags must agree.
type KVFlags struct {
	K, V, Both string
}

// Register defines -ctk, -ctv and -kv-type (and the long spellings
// -cache-type-k and -cache-type-v) on fs.
func (k *KVFlags) Register(fs *flag.FlagSet) {
	k.K, k.V, k.Both = "", "", "f16"
	fs.StringVar(&k.Both, "kv-type", "f16", "element type of the KV cache: f16, f32 or q8_0 (sets K and V)")
	fs.StringVar(&k.K, "ctk", "", "KV cache type for K (f16, f32, q8_0); must equal -ctv: the cache has one type")
	fs.StringVar(&k.K, "cache-type-k", "", "same as -ctk")
	fs.StringVar(&k.V, "ctv", "", "KV cache type for V (f16, f32, q8_0); must equal -ctk")
	fs.StringVar(&k.V, "cache-type-v", "", "same as -ctv")
}

// Type resolves the flags to one type: -ctk and -ctv override -kv-type,
// and a K and V that differ are a *UsageError.
func (k *KVFlags) Type() (quant.Type, error) {
	pick := func(name, s string) (quant.Type, error) {
		t, err := ParseKVType(s)
		if err != nil {
			return 0, Usagef(name, "%v", err)
		}
		return t, nil
	}
	both, err := pick("kv-type", k.Both)
	if err != nil {
		return 0, err
	}
	tk, tv := both, both
	if k.K != "" {
		if tk, err = pick("ctk", k.K); err != nil {
			return 0, err
		}
	}
	if k.V != "" {
		if tv, err = pick("ctv", k.V); err != nil {
			return 0, err
		}
	}
	if k.K != "" && k.V == "" {
		tv = tk
	}
	if k.V != "" && k.K == "" {
		tk = tv
	}
	if tk != tv {
		return 0, Usagef("ctv", "K (%v) and V (%v) cache types differ; the runner keeps both in one type", tk, tv)
	}
	return tk, nil
}
