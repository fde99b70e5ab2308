package cli

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops/registry"
)

// The commands' shared flag vocabulary. Every command that takes one of
// these concepts declares it through this file, so that it has one
// spelling, one meaning and one check everywhere:
//
//	-t N          worker threads; 0 (the default) means one per CPU.
//	              opbench sweep and roofline take a list (-t 1,2).
//	-backend NAME a registered backend or one of its variants (cpu,
//	              cpu-avx2, cuda-emu); opbench validate and sweep take a
//	              list, and all.
//	-tier NAME    the CPU's kernel tier (generic, avx2, ...); validate and
//	              sweep take a list, and all.
//	-kv-type T    the KV cache type, f16, f32 or q8_0; -ctk and -ctv set K
//	              and V apart, as llama.cpp's tools do, and must agree.
//	-m FILE       the model (also -model).
//	-o FILE       the output file; -out DIR the output folder.
//
// Outputs, whatever their flag, are checked before any work
// (CheckOutputs: never one of the command's inputs) and written through
// an AtomicFile.

// MaxThreads is the most worker threads a command takes.
const MaxThreads = 4096

// threadsValue is the flag.Value of -t: a count in [0, MaxThreads].
type threadsValue struct{ p *int }

func (v threadsValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v threadsValue) Set(s string) error {
	n, err := parseThreads(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

// parseThreads parses one thread count.
func parseThreads(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a thread count, not %q", s)
	}
	if n < 0 || n > MaxThreads {
		return 0, fmt.Errorf("want 0 (one per CPU) to %d threads, not %d", MaxThreads, n)
	}
	return n, nil
}

// ThreadsVar defines -t on fs: the worker threads, stored in p, 0 (the
// default) for one per CPU (see Threads). what says what the threads do,
// for the help text ("" for the generic text).
func ThreadsVar(fs *flag.FlagSet, p *int, what string) {
	if what == "" {
		what = "worker threads"
	}
	*p = 0
	fs.Var(threadsValue{p}, "t", fmt.Sprintf("%s (0: one per CPU, %d here)", what, runtime.NumCPU()))
}

// ResolveThreads returns the worker count -t n stands for: n, or one per
// CPU for 0.
func ResolveThreads(n int) int {
	if n <= 0 {
		return runtime.NumCPU()
	}
	return n
}

// threadListValue is the flag.Value of a -t list.
type threadListValue struct{ p *[]int }

func (v threadListValue) String() string {
	if v.p == nil {
		return ""
	}
	s := make([]string, len(*v.p))
	for i, n := range *v.p {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (v threadListValue) Set(s string) error {
	l, err := ParseThreadList(s)
	if err != nil {
		return err
	}
	*v.p = l
	return nil
}

// ParseThreadList parses a comma-separated list of thread counts, each as
// -t takes it (0: one per CPU), resolved and without repeats.
func ParseThreadList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	var out []int
	for item := range strings.SplitSeq(s, ",") {
		n, err := parseThreads(item)
		if err != nil {
			return nil, err
		}
		n = ResolveThreads(n)
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func contains(l []int, n int) bool {
	for _, x := range l {
		if x == n {
			return true
		}
	}
	return false
}

// ThreadListVar defines -t on fs as a list of thread counts (-t 1,2),
// each as ThreadsVar takes it, stored in p (nil when not given, for the
// caller's default, which def describes).
func ThreadListVar(fs *flag.FlagSet, p *[]int, def string) {
	fs.Var(threadListValue{p}, "t", fmt.Sprintf("comma-separated thread `counts`, each 0 (one per CPU, %d here) or more (default %s)", runtime.NumCPU(), def))
}

// ModelVar defines -m and its long form -model on fs: the model file,
// stored in p. more, when not empty, is added to the help text.
func ModelVar(fs *flag.FlagSet, p *string, more string) {
	usage := "GGUF model `file`"
	if more != "" {
		usage += "; " + more
	}
	fs.StringVar(p, "m", "", usage)
	fs.StringVar(p, "model", "", "same as -m")
}

// BackendFlags are -backend and -tier.
type BackendFlags struct {
	Name, Tier string
}

// Register defines -backend and -tier on fs for a command that runs on
// one backend.
func (b *BackendFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&b.Name, "backend", DefaultBackend, BackendUsage())
	fs.StringVar(&b.Tier, "tier", "", "CPU kernel `tier` ("+TierNames()+"; default: $KERNBENCH_CPU, else the fastest this CPU supports)")
}

// RegisterLists defines -backend and -tier on fs for a command that runs
// on several backends (opbench validate and sweep): each takes a
// comma-separated list, and all. tierDefault is -tier's default.
func (b *BackendFlags) RegisterLists(fs *flag.FlagSet, tierDefault string) {
	fs.StringVar(&b.Name, "backend", DefaultBackend, "comma-separated `backends`: "+BackendNames()+", a variant such as cpu-avx2, or all (every one that can open here; see opbench backends)")
	def := "$KERNBENCH_CPU, else the fastest"
	if tierDefault == "all" {
		def = "every tier this CPU supports"
	}
	fs.StringVar(&b.Tier, "tier", tierDefault, "comma-separated CPU `tiers`, each a backend of its own (cpu-generic, cpu-avx2, ...), or all (default: "+def+")")
}

// Target resolves the flags to one backend that can open here. Its error
// is a *UsageError naming the flag at fault: -tier when the tier is
// unknown or cannot run here, else -backend.
func (b *BackendFlags) Target() (registry.Target, error) {
	name := b.Name
	if strings.TrimSpace(name) == "" {
		name = DefaultBackend
	}
	if _, err := registry.Resolve(name, ""); err != nil {
		// An unknown name is -backend's fault; an entry whose default
		// variant cannot open may still open the variant -tier names.
		var ue *registry.UnavailableError
		if b.Tier == "" || !errors.As(err, &ue) {
			return registry.Target{}, Usagef("backend", "%v", err)
		}
	}
	t, err := ResolveBackend(BackendOptions{Name: name, Tier: b.Tier})
	if err != nil {
		flagName := "backend"
		if b.Tier != "" {
			flagName = "tier"
		}
		return t, Usagef(flagName, "%v", err)
	}
	return t, nil
}

// F32 returns x as the float64 with the same shortest decimal form, so
// that a float32 default prints as 0.05 in a help text, not as
// 0.05000000074505806.
func F32(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

// aliasValue is a deprecated spelling of another flag: setting it sets
// that flag.
type aliasValue struct {
	fs   *flag.FlagSet
	name string // the flag it stands for
	used bool
}

func (a *aliasValue) String() string { return "" }

func (a *aliasValue) Set(s string) error {
	a.used = true
	return a.fs.Set(a.name, s)
}

// IsBoolFlag makes an alias of a boolean flag boolean too.
func (a *aliasValue) IsBoolFlag() bool {
	if a.fs == nil {
		return false
	}
	f := a.fs.Lookup(a.name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Deprecated defines old on fs as a deprecated spelling of the flag
// name, already defined: setting old sets name, and Warnings reports the
// use.
func Deprecated(fs *flag.FlagSet, old, name string) {
	if fs.Lookup(name) == nil {
		panic("cli: Deprecated: no flag -" + name)
	}
	fs.Var(&aliasValue{fs: fs, name: name}, old, "deprecated spelling of -"+name)
}

// Warnings returns a line for each deprecated spelling used on fs's
// command line, such as "-threads is deprecated: use -t".
func Warnings(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if a, ok := f.Value.(*aliasValue); ok && a.used {
			out = append(out, fmt.Sprintf("-%s is deprecated: use -%s", f.Name, a.name))
		}
	})
	return out
}
