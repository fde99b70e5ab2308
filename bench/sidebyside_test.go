package bench

import (
	"path/filepath"
	"testing"
)

// TestCommittedSideBySide checks the side-by-side record sets committed
// under results/ (opbench ggml's and opbench llama's output, one folder
// per machine): each
// reads as a record set naming the program it was timed against, every
// kernbench point that was timed has the other program's time for the
// same op, type, shape and thread count beside it (or its record of why
// not, as when a run was interrupted), and no kernbench
// point failed validation. A ratio in results/README.md is only as good
// as these pairs.
func TestCommittedSideBySide(t *testing.T) {
	files, err := filepath.Glob("../results/*/ggml-side-by-side*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no results/*/ggml-side-by-side*.json")
	}
	// opbench llama's records (make llama-side), where committed, pair
	// the same way: kernbench's run -bench beside llama-bench.
	llama, err := filepath.Glob("../results/*/llama-side-by-side*.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, llama...)
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "sweeps" {
			continue // the sweep files, not records
		}
		set, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if set.Baseline == nil || set.Baseline.Backend == "" {
			t.Errorf("%s: no baseline program", f)
			continue
		}
		other := map[string]Record{}
		for _, r := range set.Records {
			if r.Backend == set.Baseline.Backend {
				other[r.KeyWithout("backend")] = r
			}
		}
		pairs := 0
		for _, r := range set.Records {
			if r.Backend == set.Baseline.Backend || !r.Timed() {
				continue
			}
			if r.Validation == "fail" {
				t.Errorf("%s: %s failed validation", f, r.Key())
			}
			o, ok := other[r.KeyWithout("backend")]
			if !ok || (!o.Timed() && o.Error == "") {
				t.Errorf("%s: %s has no timed %s record beside it, nor one saying why", f, r.Key(), set.Baseline.Backend)
				continue
			}
			if !o.Timed() {
				continue // the other side's error says why (an interrupted run)
			}
			pairs++
		}
		if pairs == 0 {
			t.Errorf("%s: no timed pair", f)
		}
	}
}
