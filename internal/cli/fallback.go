package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

// FallbackFlag is the -fallback flag of the commands that run a model on
// one backend (run, perplexity, trace): the backend that computes the
// nodes the chosen one does not support. Empty, the default, means none,
// and a model with such a node is an error naming it.
type FallbackFlag struct {
	Name string
}

// Register defines -fallback on fs.
func (f *FallbackFlag) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Name, "fallback", "", "`backend` that computes the nodes -backend does not support (cpu, or a CPU tier such as cpu-generic; "+
		"a backend that declares itself complete); the nodes it computes are named on stderr. Default: none, and such a node is an error")
}

// Resolve returns the target -fallback names for a run on main, or ok
// false when the flag is empty. Its error is a *UsageError naming
// -fallback: an unknown backend, one that cannot open here, one that does
// not declare itself complete (it could lack the same nodes), or main
// itself.
func (f *FallbackFlag) Resolve(main registry.Target) (t registry.Target, ok bool, err error) {
	return f.resolve(registry.Default, main)
}

// resolve is Resolve with the backends of r.
func (f *FallbackFlag) resolve(r *registry.Registry, main registry.Target) (t registry.Target, ok bool, err error) {
	name := strings.TrimSpace(f.Name)
	if name == "" {
		return registry.Target{}, false, nil
	}
	if t, err = r.Resolve(name, ""); err != nil {
		return registry.Target{}, false, Usagef("fallback", "%v", err)
	}
	if err := t.Err(); err != nil {
		return registry.Target{}, false, Usagef("fallback", "%v", &registry.UnavailableError{Target: t.Name(), Err: err})
	}
	if !t.Entry.Complete {
		return registry.Target{}, false, Usagef("fallback", "backend %s does not declare itself complete, so it may lack the nodes %s lacks (name one that does, such as %s)", t.Name(), main.Name(), DefaultBackend)
	}
	if t.Name() == main.Name() {
		return registry.Target{}, false, Usagef("fallback", "%s is the backend itself", t.Name())
	}
	return t, true, nil
}

// OpenWithFallback opens target with threads workers and, when fb is set
// (-fallback), fb too, to compute the nodes target does not support
// (model.ContextParams.Fallback); fallback is nil when fb is not set. The
// caller closes both.
func OpenWithFallback(target registry.Target, fb registry.Target, useFallback bool, threads int) (be, fallback ops.Backend, err error) {
	be, err = target.Open(threads)
	if err != nil {
		return nil, nil, err
	}
	if !useFallback {
		return be, nil, nil
	}
	fallback, err = fb.Open(threads)
	if err != nil {
		be.Close()
		return nil, nil, fmt.Errorf("-fallback: %w", err)
	}
	return be, fallback, nil
}

// FallbackHint returns err, and when err is a node the backend does not
// support (a *graphs.UnsupportedError) and no fallback was asked for,
// err with a hint naming -fallback.
func FallbackHint(err error, useFallback bool) error {
	var ue *graphs.UnsupportedError
	if err == nil || useFallback || !errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%w (-fallback %s computes such nodes on the CPU)", err, DefaultBackend)
}

// FallbackNotes names, on a writer, the nodes a fallback backend computes:
// each node (label and op) once, the first time a graph computes it
// there. A nil *FallbackNotes notes nothing.
type FallbackNotes struct {
	w        io.Writer
	prefix   string // the command's name
	fallback ops.Backend
	seen     map[string]bool
	last     *graphs.Plan // the plan noted last, not walked again
}

// NewFallbackNotes returns the notes of the nodes fallback computes,
// written to w as lines starting with "prefix: "; nil when fallback is nil.
func NewFallbackNotes(w io.Writer, prefix string, fallback ops.Backend) *FallbackNotes {
	if fallback == nil {
		return nil
	}
	return &FallbackNotes{w: w, prefix: prefix, fallback: fallback, seen: map[string]bool{}}
}

// Note writes one line naming the nodes of g's plan that ran on the
// fallback and were not named before, or nothing when there are none.
func (n *FallbackNotes) Note(g *graphs.Graph) {
	if n == nil || g == nil || g.Plan() == nil || g.Plan() == n.last {
		return
	}
	n.last = g.Plan()
	var names []string
	for _, st := range g.Plan().Steps() {
		if st.Kind != graphs.KindCompute || st.Backend != n.fallback {
			continue
		}
		s := fmt.Sprintf("%s (%v)", st.Node.Label(), st.Node.Op)
		if !n.seen[s] {
			n.seen[s] = true
			names = append(names, s)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(n.w, "%s: %d nodes ran on %s (-fallback): %s\n", n.prefix, len(names), BackendDesc(n.fallback), strings.Join(names, ", "))
	}
}

// Len returns how many nodes have been named so far.
func (n *FallbackNotes) Len() int {
	if n == nil {
		return 0
	}
	return len(n.seen)
}
