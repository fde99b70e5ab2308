package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
)

func TestFallbackFlag(t *testing.T) {
	// The registry's backends, and one that does not declare itself
	// complete.
	r := new(registry.Registry)
	for _, e := range registry.Entries() {
		if err := r.Register(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register(registry.Entry{Name: "partial", Description: "a backend that does not declare itself complete",
		Open: func(registry.Config) (ops.Backend, error) { return nil, errors.New("not for opening") }}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(registry.Entry{Name: "away", Description: "a complete backend that cannot open here", Complete: true,
		Available: func() error { return errors.New("no such device") },
		Open:      func(registry.Config) (ops.Backend, error) { return nil, errors.New("not for opening") }}); err != nil {
		t.Fatal(err)
	}
	main, err := r.Resolve("partial", "")
	if err != nil {
		t.Fatal(err)
	}
	cpuT, err := r.Resolve(DefaultBackend, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		main    registry.Target
		ok      bool
		want    string // the target's name when ok
		wantErr string // part of the error, else ""
	}{
		{nil, main, false, "", ""},
		{[]string{"-fallback", ""}, main, false, "", ""},
		{[]string{"-fallback", " "}, main, false, "", ""},
		{[]string{"-fallback", "cpu"}, main, true, cpuT.Name(), ""},
		{[]string{"-fallback", "cpu-generic"}, main, true, "cpu-generic", ""},
		{[]string{"-fallback", "nosuch"}, main, false, "", "nosuch"},
		{[]string{"-fallback", "cpu-nosuch"}, main, false, "", "nosuch"},
		{[]string{"-fallback", "partial"}, main, false, "", "complete"},
		{[]string{"-fallback", "away"}, main, false, "", "no such device"},
		{[]string{"-fallback", "cpu"}, cpuT, false, "", "the backend itself"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+"/"+tt.main.Name(), func(t *testing.T) {
			var f FallbackFlag
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, ok, err := f.resolve(r, tt.main)
			if tt.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || ue.Flag != "fallback" || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want a -fallback usage error containing %q", err, tt.wantErr)
				}
				if ok {
					t.Error("ok with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || ok && got.Name() != tt.want {
				t.Errorf("got %s, %v; want %s, %v", got.Name(), ok, tt.want, tt.ok)
			}
		})
	}
}

func TestFallbackHint(t *testing.T) {
	n := &ops.Tensor{Op: ops.OpRMSNorm, Name: "norm-0"}
	unsupported := fmt.Errorf("decoding: %w", &graphs.UnsupportedError{Index: 3, Node: n, Err: errors.New("no kernel")})
	other := errors.New("disk full")
	tests := []struct {
		err         error
		useFallback bool
		hint        bool
	}{
		{nil, false, false},
		{other, false, false},
		{unsupported, false, true},
		{unsupported, true, false},
	}
	for _, tt := range tests {
		got := FallbackHint(tt.err, tt.useFallback)
		if tt.err == nil {
			if got != nil {
				t.Errorf("FallbackHint(nil) = %v", got)
			}
			continue
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("FallbackHint(%v) = %v, which does not wrap it", tt.err, got)
		}
		if has := strings.Contains(got.Error(), "-fallback cpu"); has != tt.hint {
			t.Errorf("FallbackHint(%v, %v) = %q: hint %v, want %v", tt.err, tt.useFallback, got, has, tt.hint)
		}
		if tt.hint && !strings.Contains(got.Error(), "norm-0") {
			t.Errorf("hint lost the node: %q", got)
		}
	}
}
