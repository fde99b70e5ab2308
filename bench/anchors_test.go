package bench

import (
	"os"
	"testing"
)

// TestAnchorRecords checks the committed anchor figures
// (results/anchors/ggml-cpu-2c.json) against the sweep they are compared
// with (results/sweeps/anchors.json): the file reads as a record set,
// every record is timed at 2 threads, and every one is a point of the
// sweep, so `make anchors` joins all of them.
func TestAnchorRecords(t *testing.T) {
	set, err := ReadFile("../results/anchors/ggml-cpu-2c.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../results/sweeps/anchors.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec, err := ParseSpec(f)
	if err != nil {
		t.Fatal(err)
	}
	points, _, err := ExpandAll(spec.Sweeps)
	if err != nil {
		t.Fatal(err)
	}
	swept := map[string]bool{}
	for _, p := range points {
		swept[p.Op.String()+" "+p.Type.String()+" "+p.Shape()] = true
	}
	if len(set.Records) < 40 {
		t.Fatalf("%d anchor records", len(set.Records))
	}
	for _, r := range set.Records {
		if !r.Timed() || r.Threads != 2 || r.Flops < 0 {
			t.Errorf("%s: untimed or not 2 threads", r.Key())
		}
		if !swept[r.Op+" "+r.Type+" "+r.Shape] {
			t.Errorf("%s: not a point of sweeps/anchors.json", r.Key())
		}
	}
}
