// Package registry is where backends register themselves and where
// commands and tests find them: by name, or all of them.
//
// A backend package registers an Entry in its init function: a name, a
// description, an availability check that says why the backend cannot open
// on this machine ("no libcuda.so.1 found", "not darwin"), an open
// function and, for a backend that comes in several configurations worth
// validating apart (the CPU's kernel tiers), its variants. Package
// ops/backends imports every backend, so that one blank import gives a
// command or a test all of them.
//
// What opens is a Target: an entry and, for an entry with variants, one
// variant, named "entry-variant" ("cpu-avx2"). Targets lists every target,
// available or not, with the reason; Available lists those that can open
// here, which is what the harness's tests validate and what "-backend all"
// means. A backend added to the registry is thus validated and measured
// with no command or test naming it.
//
// Backends never import each other; a backend package imports this one
// and ops only.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// An Entry is a backend as it registers itself.
type Entry struct {
	// Name is what commands and tests call the backend, such as "cpu"
	// or "cuda": lower-case letters, digits and underscores, not "all".
	Name string
	// Description says in a line what the backend is.
	Description string
	// Available returns nil when the backend can open on this machine,
	// else the reason it cannot. A nil Available means always.
	Available func() error
	// Open opens the backend configured by c. Open is called only when
	// Available returns nil, and for an entry with variants with
	// c.Variant set to one of them whose Err is nil.
	Open func(c Config) (ops.Backend, error)
	// Variants, when not nil, lists the backend's variants in order:
	// configurations that validation and sweeps treat as backends of
	// their own, such as the CPU's kernel tiers. Every variant is
	// listed, with why it cannot run here where it cannot.
	Variants func() []Variant
	// DefaultVariant, when not nil, returns the variant to open when
	// none is named, or an error saying why there is none (a bad
	// environment variable). When nil, the default is the first
	// variant that can run here.
	DefaultVariant func() (string, error)
	// Tiers declares that the variants are kernel tiers of one device
	// (the CPU's): validation runs every one by default, and commands'
	// -tier flag selects among them. Other variants are devices (a
	// GPU per variant, an emulator): the entry's name alone means its
	// default variant, and "all" every one that can open.
	Tiers bool
	// Complete declares that the backend computes every node the
	// reference does, so validation counts a case it does not support
	// as a failure. A backend built up op by op (a GPU backend while its
	// kernels are written) leaves it false: its unsupported cases are
	// counted and listed, and every case it does support must pass.
	Complete bool
	// Pending lists element types a Complete backend has no kernels
	// for yet (new formats land on the CPU first): validation counts a
	// case of one of them that the backend does not support as
	// unsupported, not as a failure. A case it does support must pass.
	Pending []quant.Type
}

// IsPending reports whether any of types is one of e's Pending types.
func (e Entry) IsPending(types []quant.Type) bool {
	for _, t := range types {
		if slices.Contains(e.Pending, t) {
			return true
		}
	}
	return false
}

// A Variant is one configuration of a backend, such as a CPU tier.
type Variant struct {
	// Name names the variant within its entry, such as "avx2".
	Name string
	// Err is nil when the variant can run here, else the reason it
	// cannot ("CPU lacks AVX512F").
	Err error
}

// Config is what an entry's Open is given.
type Config struct {
	// Threads is the number of worker threads of a backend that has
	// them (the CPU); <= 0 means the backend's default.
	Threads int
	// Variant names the variant to open, for an entry with variants.
	Variant string
}

// Err returns nil when e can open on this machine, else the reason.
func (e Entry) Err() error {
	if e.Available == nil {
		return nil
	}
	return e.Available()
}

// variants returns e's variants, or nil for an entry without.
func (e Entry) variants() []Variant {
	if e.Variants == nil {
		return nil
	}
	return e.Variants()
}

// Targets returns e's targets: one per variant, or e alone when it has no
// variants.
func (e Entry) Targets() []Target {
	if e.Variants == nil {
		return []Target{{Entry: e}}
	}
	vs := e.Variants()
	out := make([]Target, len(vs))
	for i, v := range vs {
		out[i] = Target{Entry: e, Variant: v.Name}
	}
	return out
}

// defaultVariant returns the variant e opens when none is named.
func (e Entry) defaultVariant() (string, error) {
	if e.DefaultVariant != nil {
		return e.DefaultVariant()
	}
	vs := e.variants()
	for _, v := range vs {
		if v.Err == nil {
			return v.Name, nil
		}
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("backend %s lists no variants", e.Name)
	}
	return "", fmt.Errorf("no variant of backend %s can run here (%s: %v)", e.Name, vs[0].Name, vs[0].Err)
}

// A Target is one configuration of a registered backend that opens as a
// backend of its own: an entry and, for an entry with variants, one of
// them.
type Target struct {
	Entry Entry
	// Variant is the variant's name; empty for an entry without
	// variants.
	Variant string
}

// Name returns the target's name: the entry's, followed for a variant by
// "-" and the variant's ("cpu-avx2").
func (t Target) Name() string {
	if t.Variant == "" {
		return t.Entry.Name
	}
	return t.Entry.Name + "-" + t.Variant
}

// String returns t.Name().
func (t Target) String() string { return t.Name() }

// Err returns nil when t can open on this machine, else the reason: the
// entry's, else the variant's.
func (t Target) Err() error {
	if err := t.Entry.Err(); err != nil {
		return err
	}
	if t.Variant == "" {
		return nil
	}
	for _, v := range t.Entry.variants() {
		if v.Name == t.Variant {
			return v.Err
		}
	}
	return fmt.Errorf("backend %s has no variant %q", t.Entry.Name, t.Variant)
}

// Open opens t with threads worker threads (<= 0: the backend's default).
// A target that cannot open here is an error naming it and the reason.
func (t Target) Open(threads int) (ops.Backend, error) {
	if err := t.Err(); err != nil {
		return nil, &UnavailableError{Target: t.Name(), Err: err}
	}
	b, err := t.Entry.Open(Config{Threads: threads, Variant: t.Variant})
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", t.Name(), err)
	}
	if b == nil {
		return nil, fmt.Errorf("backend %s: Open returned no backend", t.Name())
	}
	return b, nil
}

// An UnavailableError reports a target that cannot open on this machine.
type UnavailableError struct {
	Target string // the target's name
	Err    error  // why it cannot open
}

// Error says which target cannot open and why.
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("backend %s is unavailable: %v", e.Target, e.Err)
}

// Unwrap returns the reason.
func (e *UnavailableError) Unwrap() error { return e.Err }

// A Registry holds entries by name. The zero value is an empty registry
// ready for use; Default is the one backends register in. A Registry is
// safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]Entry
}

// Default is the registry backend packages register in and commands open
// backends from.
var Default = new(Registry)

// Register adds e. A name that is taken or malformed, or a nil Open, is an
// error.
func (r *Registry) Register(e Entry) error {
	if err := checkName(e.Name); err != nil {
		return err
	}
	if e.Open == nil {
		return fmt.Errorf("registry: backend %s has no Open function", e.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[e.Name]; dup {
		return fmt.Errorf("registry: backend %s is registered twice", e.Name)
	}
	if r.entries == nil {
		r.entries = map[string]Entry{}
	}
	r.entries[e.Name] = e
	return nil
}

// checkName reports a name Register refuses.
func checkName(name string) error {
	if name == "" {
		return errors.New("registry: a backend needs a name")
	}
	if name == "all" {
		return errors.New(`registry: "all" names every backend and cannot name one`)
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return fmt.Errorf("registry: backend name %q: want lower-case letters, digits and underscores", name)
		}
	}
	return nil
}

// Entries returns every entry, sorted by name.
func (r *Registry) Entries() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// names returns the entries' names, sorted.
func (r *Registry) names() string {
	var s []string
	for _, e := range r.Entries() {
		s = append(s, e.Name)
	}
	if len(s) == 0 {
		return "none registered"
	}
	return strings.Join(s, ", ")
}

// Lookup returns the entry named name, or an error naming it and the
// known backends.
func (r *Registry) Lookup(name string) (Entry, error) {
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if !ok {
		return Entry{}, fmt.Errorf("unknown backend %q (known: %s)", name, r.names())
	}
	return e, nil
}

// Targets returns every target of every entry, available or not, entries
// by name and variants in their order.
func (r *Registry) Targets() []Target {
	var out []Target
	for _, e := range r.Entries() {
		out = append(out, e.Targets()...)
	}
	return out
}

// Available returns the targets that can open on this machine, in the
// order of Targets: what "-backend all" means, and what the harness's
// tests validate.
func (r *Registry) Available() []Target {
	var out []Target
	for _, t := range r.Targets() {
		if t.Err() == nil {
			out = append(out, t)
		}
	}
	return out
}

// Resolve returns the target that name and variant select. name is an
// entry's name ("cpu") or a target's ("cpu-avx2"); variant, when not
// empty, names the variant of an entry named alone. An entry with
// variants named alone and no variant gives its default variant. Resolve
// checks names only: whether the target can open here is its Err.
func (r *Registry) Resolve(name, variant string) (Target, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	variant = strings.TrimSpace(variant)
	if e, err := r.Lookup(name); err == nil {
		return resolveVariant(e, variant)
	}
	for _, e := range r.Entries() {
		v, ok := strings.CutPrefix(name, e.Name+"-")
		if !ok || !slices.ContainsFunc(e.variants(), func(x Variant) bool { return x.Name == v }) {
			continue
		}
		if variant != "" && variant != v {
			return Target{}, fmt.Errorf("backend %s names variant %s, and variant %s was asked for too", name, v, variant)
		}
		return Target{Entry: e, Variant: v}, nil
	}
	if e, v, ok := strings.Cut(name, "-"); ok {
		if e, err := r.Lookup(e); err == nil {
			return resolveVariant(e, v) // names the missing variant
		}
	}
	_, err := r.Lookup(name)
	return Target{}, err
}

// resolveVariant returns e's target of variant v ("" for the default).
func resolveVariant(e Entry, v string) (Target, error) {
	if e.Variants == nil {
		if v != "" {
			return Target{}, fmt.Errorf("backend %s has no variants (asked for %q)", e.Name, v)
		}
		return Target{Entry: e}, nil
	}
	if v == "" {
		d, err := e.defaultVariant()
		if err != nil {
			return Target{}, &UnavailableError{Target: e.Name, Err: err}
		}
		v = d
	}
	var known []string
	for _, x := range e.variants() {
		if x.Name == v {
			return Target{Entry: e, Variant: v}, nil
		}
		known = append(known, x.Name)
	}
	return Target{}, fmt.Errorf("backend %s has no variant %q (known: %s)", e.Name, v, strings.Join(known, ", "))
}

// Open opens the backend that name and c.Variant select (see Resolve)
// with c.Threads threads. A name that is unknown, and a target that
// cannot open here, are errors naming them.
func (r *Registry) Open(name string, c Config) (ops.Backend, error) {
	t, err := r.Resolve(name, c.Variant)
	if err != nil {
		return nil, err
	}
	return t.Open(c.Threads)
}

// Register adds e to Default; backend packages call it from init. It
// panics on what Registry.Register refuses, a programming error.
func Register(e Entry) {
	if err := Default.Register(e); err != nil {
		panic(err)
	}
}

// Entries returns Default's entries, sorted by name.
func Entries() []Entry { return Default.Entries() }

// Lookup returns Default's entry named name.
func Lookup(name string) (Entry, error) { return Default.Lookup(name) }

// Targets returns every target of Default, available or not.
func Targets() []Target { return Default.Targets() }

// Available returns the targets of Default that can open here.
func Available() []Target { return Default.Available() }

// Resolve returns the target of Default that name and variant select.
func Resolve(name, variant string) (Target, error) { return Default.Resolve(name, variant) }

// Open opens the backend of Default that name and c select.
func Open(name string, c Config) (ops.Backend, error) { return Default.Open(name, c) }
