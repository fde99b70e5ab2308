package require

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test would have stopped.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Fatalf(f string, args ...any) { r.fatal = f }
func (r *recorder) Skipf(f string, args ...any)  { r.skip = f }

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		env    string
		strict bool
	}{
		{"", false}, {"0", false}, {"1", true}, {"yes", true},
	} {
		t.Setenv(Env, tc.env)
		if got := Strict(); got != tc.strict {
			t.Errorf("%s=%q: Strict() = %v, want %v", Env, tc.env, got, tc.strict)
		}
		var r recorder
		Skip(&r, "no %s here", "thing")
		switch {
		case tc.strict && (r.skip != "" || !strings.Contains(r.fatal, "no %s here") || !strings.Contains(r.fatal, Env)):
			t.Errorf("%s=%q: Skip skipped (%q) or failed with %q, want a failure naming %s", Env, tc.env, r.skip, r.fatal, Env)
		case !tc.strict && (r.fatal != "" || r.skip != "no %s here"):
			t.Errorf("%s=%q: Skip failed (%q) or skipped with %q, want a skip", Env, tc.env, r.fatal, r.skip)
		}
	}
}
