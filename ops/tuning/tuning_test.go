package tuning

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/internal/machineid"
)

var rows = Param{Name: "cpu.test.rows", Default: 16, Candidates: []int{4, 8, 16, 32, 64, 128}}

// TestSearchFindsBest runs the search on injected costs shaped like a
// real parameter's: a best value, the others 20% or more slower, and
// noise of up to 8% on every measurement. The value found must cost
// within 5% of the best, for every best position and many seeds.
func TestSearchFindsBest(t *testing.T) {
	for _, best := range rows.Candidates {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(best)))
			truth := func(v int) float64 {
				if v == best {
					return 1
				}
				d := float64(v) / float64(best)
				if d < 1 {
					d = 1 / d
				}
				return 1.2 + 0.1*(d-2) // 2x away: 20% slower, more further out
			}
			calls := 0
			res, err := Search(rows, 5, func(v int) (float64, error) {
				calls++
				return truth(v) * (1 + 0.08*rng.Float64()), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if truth(res.Value) > 1.05*truth(best) {
				t.Errorf("best %d, seed %d: chose %d (cost %.3f)", best, seed, res.Value, truth(res.Value))
			}
			if calls != 5*len(rows.Candidates) || len(res.Candidates) != len(rows.Candidates) || res.Candidates[0].Median == 0 {
				t.Errorf("best %d: %d calls, %+v", best, calls, res.Candidates)
			}
		}
	}
}

// TestSearchSkipsInvalid checks that a candidate whose output failed
// validation is never chosen, however cheap, and is not measured again;
// that a tie keeps the default; and that no valid candidate is an error.
func TestSearchSkipsInvalid(t *testing.T) {
	calls := map[int]int{}
	res, err := Search(rows, 3, func(v int) (float64, error) {
		calls[v]++
		if v == 64 {
			return 0.001, errors.New("NMSE 0.3 over the tolerance")
		}
		return float64(v), nil
	})
	if err != nil || res.Value != 4 {
		t.Fatalf("chose %d, %v; want 4 (64 is invalid)", res.Value, err)
	}
	if calls[64] != 1 || calls[4] != 3 {
		t.Errorf("calls %v: want 64 measured once, the others 3 times", calls)
	}
	for _, c := range res.Candidates {
		if (c.Value == 64) != (c.Error != "") {
			t.Errorf("candidate %+v", c)
		}
	}

	res, err = Search(rows, 2, func(v int) (float64, error) { return 1, nil })
	if err != nil || res.Value != rows.Default {
		t.Errorf("all equal: chose %d, %v; want the default %d", res.Value, err, rows.Default)
	}

	if _, err := Search(rows, 2, func(v int) (float64, error) { return 0, errors.New("crash") }); err == nil {
		t.Error("no valid candidate: no error")
	}
	if _, err := Search(Param{Name: "x", Default: 3, Candidates: []int{1, 2}}, 1, func(int) (float64, error) { return 1, nil }); err == nil {
		t.Error("default outside the candidates: no error")
	}
}

func writeTuned(t *testing.T, machine string, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	f := &File{Machine: machine, Date: time.Now().UTC(), Params: []Result{{Name: rows.Name, Value: v, Default: rows.Default}}}
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoad checks what $KERNBENCH_TUNED selects: a file of this machine,
// off, the default path (missing: no values), and the errors of a file
// of another machine or a malformed one.
func TestLoad(t *testing.T) {
	here := machineid.Here()
	path := writeTuned(t, here, 32)

	t.Setenv(Env, path)
	v, src, err := Load()
	if err != nil || src != path || v.Get(rows) != 32 {
		t.Errorf("explicit file: %v from %q, %v", v, src, err)
	}

	t.Setenv(Env, "off")
	v, src, err = Load()
	if err != nil || v != nil || src != "" || v.Get(rows) != rows.Default {
		t.Errorf("off: %v from %q, %v", v, src, err)
	}

	t.Setenv(Env, writeTuned(t, "other-machine-2c", 8))
	if _, _, err := Load(); err == nil || !strings.Contains(err.Error(), "was tuned on other-machine-2c") {
		t.Errorf("another machine's file: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"schema": "kernbench-tuned/v0"}`), 0o644)
	t.Setenv(Env, bad)
	if _, _, err := Load(); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("malformed file: %v", err)
	}

	// Unset: results/<id>/tuned.json below the working folder.
	t.Setenv(Env, "")
	dir := t.TempDir()
	t.Chdir(dir)
	v, src, err = Load()
	if err != nil || v != nil || src != "" {
		t.Errorf("no default file: %v from %q, %v", v, src, err)
	}
	b, _ := os.ReadFile(path)
	if err := os.MkdirAll(filepath.Join("results", here), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(DefaultPath(), b, 0o644)
	v, src, err = Load()
	if err != nil || src != DefaultPath() || v.Get(rows) != 32 {
		t.Errorf("default file: %v from %q, %v", v, src, err)
	}
}

func TestValuesCheck(t *testing.T) {
	params := []Param{rows}
	for _, tt := range []struct {
		v    Values
		want string
	}{
		{Values{rows.Name: 32}, ""},
		{nil, ""},
		{Values{rows.Name: 5}, "not one of"},
		{Values{"cpu.nope": 1}, `unknown parameter "cpu.nope" (a tuned.json of a newer kernbench? KERNBENCH_TUNED=off runs`},
	} {
		err := tt.v.Check(params)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: %v, want %q", tt.v, err, tt.want)
		}
	}
}
