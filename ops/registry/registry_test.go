package registry_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

// stub is a backend that computes nothing; it remembers its Config.
type stub struct {
	name string
	c    registry.Config
}

func (s *stub) Name() string                      { return s.name }
func (s *stub) Supports(*ops.Tensor) error        { return nil }
func (s *stub) Alloc(n int64) (ops.Buffer, error) { return ops.NewHostBuffer(n) }
func (s *stub) Compute(*ops.Tensor) error         { return nil }
func (s *stub) Close() error                      { return nil }
func opener(name string) func(registry.Config) (ops.Backend, error) {
	return func(c registry.Config) (ops.Backend, error) { return &stub{name: name, c: c}, nil }
}

// testRegistry has "fast" (variants slow, mid, turbo; turbo unavailable),
// "gpu" (unavailable), "plain" (no variants) and "moody" (variants, a
// default that fails).
func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	r := new(registry.Registry)
	errTurbo := errors.New("lacks the turbo unit")
	for _, e := range []registry.Entry{
		{Name: "plain", Description: "no variants", Open: opener("plain")},
		{Name: "gpu", Description: "absent", Available: func() error { return errors.New("no driver found") }, Open: opener("gpu")},
		{
			Name: "fast", Open: opener("fast"),
			Variants: func() []registry.Variant {
				return []registry.Variant{{Name: "slow"}, {Name: "mid"}, {Name: "turbo", Err: errTurbo}}
			},
			DefaultVariant: func() (string, error) { return "mid", nil },
		},
		{
			Name: "moody", Open: opener("moody"),
			Variants:       func() []registry.Variant { return []registry.Variant{{Name: "a"}} },
			DefaultVariant: func() (string, error) { return "", errors.New("$MOODY names no variant") },
		},
	} {
		if err := r.Register(e); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func names(ts []registry.Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

func TestRegisterRefuses(t *testing.T) {
	r := testRegistry(t)
	for _, tc := range []struct {
		e    registry.Entry
		want string
	}{
		{registry.Entry{Open: opener("x")}, "needs a name"},
		{registry.Entry{Name: "all", Open: opener("x")}, `"all" names every backend`},
		{registry.Entry{Name: "cuda-2", Open: opener("x")}, "lower-case letters"},
		{registry.Entry{Name: "CPU", Open: opener("x")}, "lower-case letters"},
		{registry.Entry{Name: "noopen"}, "has no Open"},
		{registry.Entry{Name: "plain", Open: opener("x")}, "registered twice"},
	} {
		if err := r.Register(tc.e); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q): err %v, want %q", tc.e.Name, err, tc.want)
		}
	}
}

func TestTargets(t *testing.T) {
	r := testRegistry(t)
	var got []string
	for _, e := range r.Entries() {
		got = append(got, e.Name)
	}
	if want := []string{"fast", "gpu", "moody", "plain"}; !slices.Equal(got, want) {
		t.Errorf("Entries: %v, want %v", got, want)
	}
	if got, want := names(r.Targets()), []string{"fast-slow", "fast-mid", "fast-turbo", "gpu", "moody-a", "plain"}; !slices.Equal(got, want) {
		t.Errorf("Targets: %v, want %v", got, want)
	}
	if got, want := names(r.Available()), []string{"fast-slow", "fast-mid", "moody-a", "plain"}; !slices.Equal(got, want) {
		t.Errorf("Available: %v, want %v", got, want)
	}
	for _, tg := range r.Targets() {
		err := tg.Err()
		switch tg.Name() {
		case "fast-turbo":
			if err == nil || err.Error() != "lacks the turbo unit" {
				t.Errorf("%s: Err %v", tg, err)
			}
		case "gpu":
			if err == nil || err.Error() != "no driver found" {
				t.Errorf("%s: Err %v", tg, err)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	r := testRegistry(t)
	for _, tc := range []struct {
		name, variant string
		want          string // target name, or the error's text
		err           bool
	}{
		{"plain", "", "plain", false},
		{" Plain ", "", "plain", false},
		{"gpu", "", "gpu", false}, // resolves; Open says it is unavailable
		{"fast", "", "fast-mid", false},
		{"fast", "slow", "fast-slow", false},
		{"fast-slow", "", "fast-slow", false},
		{"fast-slow", "slow", "fast-slow", false},
		{"fast-turbo", "", "fast-turbo", false},
		{"fast-slow", "mid", "names variant slow, and variant mid was asked for too", true},
		{"fast", "warp", `backend fast has no variant "warp" (known: slow, mid, turbo)`, true},
		{"fast-warp", "", `backend fast has no variant "warp" (known: slow, mid, turbo)`, true},
		{"plain", "x", `backend plain has no variants (asked for "x")`, true},
		{"moody", "", "backend moody is unavailable: $MOODY names no variant", true},
		{"moody", "a", "moody-a", false},
		{"tpu", "", `unknown backend "tpu" (known: fast, gpu, moody, plain)`, true},
		{"", "", `unknown backend ""`, true},
		{"all", "", `unknown backend "all"`, true},
	} {
		tg, err := r.Resolve(tc.name, tc.variant)
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Resolve(%q, %q): %v, %v; want an error with %q", tc.name, tc.variant, tg, err, tc.want)
		case !tc.err && (err != nil || tg.Name() != tc.want):
			t.Errorf("Resolve(%q, %q): %v, %v; want %s", tc.name, tc.variant, tg, err, tc.want)
		}
	}
}

func TestOpen(t *testing.T) {
	r := testRegistry(t)
	b, err := r.Open("fast", registry.Config{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s := b.(*stub); s.c.Threads != 3 || s.c.Variant != "mid" {
		t.Errorf("fast opened with %+v, want 3 threads and variant mid", s.c)
	}
	for _, tc := range []struct{ name, want string }{
		{"gpu", "backend gpu is unavailable: no driver found"},
		{"fast-turbo", "backend fast-turbo is unavailable: lacks the turbo unit"},
	} {
		b, err := r.Open(tc.name, registry.Config{})
		var ue *registry.UnavailableError
		if b != nil || err == nil || err.Error() != tc.want || !errors.As(err, &ue) || ue.Target != tc.name {
			t.Errorf("Open(%s): %v, %v; want the error %q", tc.name, b, err, tc.want)
		}
	}

	// An Open error is wrapped with the target's name.
	boom := errors.New("boom")
	if err := r.Register(registry.Entry{Name: "flaky", Open: func(registry.Config) (ops.Backend, error) { return nil, boom }}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open("flaky", registry.Config{}); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "backend flaky: ") {
		t.Errorf("Open(flaky): %v", err)
	}
}

func TestDefaultVariantWithoutFunc(t *testing.T) {
	r := new(registry.Registry)
	vs := []registry.Variant{{Name: "x", Err: errors.New("no x")}, {Name: "y"}, {Name: "z"}}
	if err := r.Register(registry.Entry{Name: "v", Open: opener("v"), Variants: func() []registry.Variant { return vs }}); err != nil {
		t.Fatal(err)
	}
	if tg, err := r.Resolve("v", ""); err != nil || tg.Variant != "y" {
		t.Errorf("default: %v, %v; want the first available, y", tg, err)
	}
	vs[1].Err, vs[2].Err = errors.New("no y"), errors.New("no z")
	if _, err := r.Resolve("v", ""); err == nil || !strings.Contains(err.Error(), "no variant of backend v can run here") {
		t.Errorf("no available variant: err %v", err)
	}
}
