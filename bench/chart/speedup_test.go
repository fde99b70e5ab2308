package chart

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/bench"
)

func TestSpeedups(t *testing.T) {
	rec := func(shape string) bench.Record { return bench.Record{Op: "MUL_MAT", Type: "q4_0", Shape: shape} }
	rep := bench.Report{Comparisons: []bench.Comparison{
		{Key: "a", A: rec("n=1"), Speedup: 1.4, Verdict: bench.Faster},
		{Key: "b", A: rec("n=512"), Speedup: 0.8, Verdict: bench.Slower},
		{Key: "c", A: rec("n=8"), Speedup: 1.01, Verdict: bench.WithinNoise},
	}}
	fig, err := Speedups(rep, "title", "ggml-cpu", "cpu-avx2", 1.25, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"png", "svg"} {
		var b bytes.Buffer
		if err := fig.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		if b.Len() < 1000 {
			t.Errorf("%s: %d bytes", format, b.Len())
		}
		if format == "svg" {
			for _, want := range []string{"MUL_MAT q4_0 n=512", "goal 1.25x", "SLOWER", "cpu-avx2 relative to ggml-cpu"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("svg lacks %q", want)
				}
			}
		}
	}
	if _, err := Speedups(bench.Report{}, "t", "a", "b", 0, Options{}); err == nil {
		t.Error("no error for an empty report")
	}
	bad := rep
	bad.Comparisons = append([]bench.Comparison{}, rep.Comparisons...)
	bad.Comparisons[1].Speedup = math.NaN()
	if _, err := Speedups(bad, "t", "a", "b", 0, Options{}); err == nil || !strings.Contains(err.Error(), "cannot be drawn") {
		t.Errorf("NaN speed: %v", err)
	}
}
