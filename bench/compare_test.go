package bench

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMannWhitneyExact(t *testing.T) {
	tests := []struct {
		x, y []float64
		want float64
	}{
		// Complete separation of 5 and 5: the most extreme of C(10,5) =
		// 252 orderings on either side.
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{[]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 2.0 / 252},
		// 3 and 3 fully separated: 2/20.
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		// x = {1, 4}, y = {2, 3}: U = 2 (4 beats both), the middle of
		// U in 0..4 with counts 1,1,2,1,1: P(U<=2) = P(U>=2) = 4/6.
		{[]float64{1, 4}, []float64{2, 3}, 1},
		// x = {1, 2}, y = {3, 4, 5}: U = 0, P = 2 * 1/10.
		{[]float64{1, 2}, []float64{3, 4, 5}, 0.2},
		{nil, []float64{1}, 1},
	}
	for _, tt := range tests {
		if got := MannWhitneyP(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MannWhitneyP(%v, %v) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestUCounts(t *testing.T) {
	for _, n := range [][2]int{{1, 1}, {3, 4}, {5, 5}, {7, 2}, {12, 10}} {
		c := uCounts(n[0], n[1])
		if len(c) != n[0]*n[1]+1 {
			t.Fatalf("%v: %d counts", n, len(c))
		}
		var total float64
		for i, v := range c {
			total += v
			if v != c[len(c)-1-i] {
				t.Errorf("%v: counts not symmetric at %d", n, i)
			}
		}
		if want := 2 / MinP(n[0], n[1]); math.Abs(total-want) > 1e-6*want {
			t.Errorf("%v: %v orderings, want C(n1+n2, n1) = %v", n, total, want)
		}
	}
}

// TestMannWhitneyApprox: past the exact range (or with ties) the normal
// approximation agrees with the exact test where both apply.
func TestMannWhitneyApprox(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		x, y := make([]float64, 30), make([]float64, 30)
		for i := range x {
			x[i] = r.NormFloat64()
			y[i] = r.NormFloat64() + 0.5
		}
		exact := MannWhitneyP(x, y)
		// A tie far from the data sends the same ranks through the
		// approximation.
		x2 := append(append([]float64(nil), x...), -100)
		y2 := append(append([]float64(nil), y...), -100)
		approx := MannWhitneyP(x2, y2)
		if math.Abs(exact-approx) > 0.03 {
			t.Errorf("trial %d: exact %v, approximate %v", trial, exact, approx)
		}
	}
	// All values tied: no evidence at all.
	if p := MannWhitneyP([]float64{1, 1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("all tied: p = %v", p)
	}
}

// setOf returns a set of one MUL_MAT record per shape with the given
// samples.
func setOf(threads int, samples ...[]float64) *Set {
	s := &Set{Schema: Schema}
	for i, xs := range samples {
		r := Record{Op: "MUL_MAT", Type: "q4_0", Shape: "n=" + string(rune('1'+i)), Backend: "cpu-avx2", Threads: threads}
		r.Samples = xs
		r.Stats = Summarize(xs)
		s.Records = append(s.Records, r)
	}
	return s
}

// draw returns n samples around mean with a few percent of noise.
func draw(r *rand.Rand, n int, mean float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mean * (1 + 0.05*r.NormFloat64())
	}
	return xs
}

// TestCompareVerdicts: samples from one distribution are within noise
// (but for the test's false positives, about alpha of them); a 2x shift
// is slower, its inverse faster.
func TestCompareVerdicts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const points = 200
	var a, b [][]float64
	for i := 0; i < points; i++ {
		a = append(a, draw(r, 10, 1e-3))
		b = append(b, draw(r, 10, 1e-3))
	}
	rep, err := Compare(setOf(2, a...), setOf(2, b...), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Count(WithinNoise); n < points*88/100 {
		t.Errorf("identical distributions: %d of %d within noise, want at least 88%%", n, points)
	}
	if math.Abs(rep.GeoMean-1) > 0.01 {
		t.Errorf("geomean %v for identical distributions", rep.GeoMean)
	}

	slow := [][]float64{draw(r, 10, 2e-3), draw(r, 6, 2e-3)}
	base := [][]float64{draw(r, 10, 1e-3), draw(r, 6, 1e-3)}
	rep, err = Compare(setOf(2, base...), setOf(2, slow...), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Comparisons {
		if c.Verdict != Slower || math.Abs(c.Speedup-0.5) > 0.1 {
			t.Errorf("2x slower: %s speed %.3f p %.3g", c.Verdict, c.Speedup, c.P)
		}
	}
	if math.Abs(rep.GeoMean-0.5) > 0.1 {
		t.Errorf("geomean %v, want about 0.5", rep.GeoMean)
	}
	rep, _ = Compare(setOf(2, slow...), setOf(2, base...), CompareOptions{})
	if rep.Count(Faster) != 2 {
		t.Errorf("2x faster: %d faster", rep.Count(Faster))
	}
	// Ranks that separate cleanly but a shift inside A's spread (one slow
	// sample of A reaches past B's median): within noise.
	var spreadA, shiftB []float64
	for i := 0; i < 10; i++ {
		spreadA = append(spreadA, 1+0.01*float64(i))
		shiftB = append(shiftB, 1.1+0.01*float64(i))
	}
	spreadA = append(spreadA, 1.3)
	if p := MannWhitneyP(spreadA, shiftB); p > 0.01 {
		t.Fatalf("test data: p = %v", p)
	}
	rep, _ = Compare(setOf(2, spreadA), setOf(2, shiftB), CompareOptions{})
	if c := rep.Comparisons[0]; c.Verdict != WithinNoise {
		t.Errorf("shift within the spread: %v (p %.3g)", c.Verdict, c.P)
	}
	// Without the outlier, the medians clear each other's range: slower.
	rep, _ = Compare(setOf(2, spreadA[:10]), setOf(2, shiftB), CompareOptions{})
	if c := rep.Comparisons[0]; c.Verdict != Slower {
		t.Errorf("shift beyond the spread: %v (p %.3g)", c.Verdict, c.P)
	}
	// Three samples a side cannot show anything at 0.05.
	rep, _ = Compare(setOf(2, []float64{1, 1.01, 1.02}), setOf(2, []float64{2, 2.01, 2.02}), CompareOptions{})
	if rep.Comparisons[0].Verdict != TooFewSamples {
		t.Errorf("3 vs 3: %v", rep.Comparisons[0].Verdict)
	}
	// ... but can at 0.2.
	rep, _ = Compare(setOf(2, []float64{1, 1.01, 1.02}), setOf(2, []float64{2, 2.01, 2.02}), CompareOptions{Alpha: 0.2})
	if rep.Comparisons[0].Verdict != Slower {
		t.Errorf("3 vs 3 at 0.2: %v", rep.Comparisons[0].Verdict)
	}
}

func TestCompareJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a := setOf(2, draw(r, 8, 1), draw(r, 8, 1), draw(r, 8, 1))
	b := setOf(1, draw(r, 8, 2), draw(r, 8, 2))
	b.Records = append(b.Records, Record{Op: "MUL_MAT", Type: "q8_0", Shape: "n=1", Backend: "cpu-avx2", Threads: 1, Validation: ValidFail})
	rep, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Threads take one value per set, different between them: ignored.
	if strings.Join(rep.Ignored, ",") != "threads" || len(rep.Comparisons) != 2 || len(rep.OnlyA) != 1 || len(rep.OnlyB) != 0 || len(rep.Untimed) != 1 {
		t.Errorf("report: ignored %v, %d compared, %d only A, %d only B, %d untimed", rep.Ignored, len(rep.Comparisons), len(rep.OnlyA), len(rep.OnlyB), len(rep.Untimed))
	}
	if rep.Count(Slower) != 2 {
		t.Errorf("%d slower, want 2", rep.Count(Slower))
	}
	// With two thread counts in A, threads is part of the key again.
	a.Records[2].Threads = 4
	rep, _ = Compare(a, b, CompareOptions{})
	if len(rep.Ignored) != 0 || len(rep.Comparisons) != 0 {
		t.Errorf("no common thread count: ignored %v, %d compared", rep.Ignored, len(rep.Comparisons))
	}
	// Ignoring shape makes A's records collide.
	if _, err := Compare(a, b, CompareOptions{Ignore: []string{"shape"}}); err == nil || !strings.Contains(err.Error(), "two records") {
		t.Errorf("colliding keys: %v", err)
	}
	if _, err := Compare(a, b, CompareOptions{Ignore: []string{"colour"}}); err == nil {
		t.Error("unknown ignore field accepted")
	}
	if _, err := Compare(a, b, CompareOptions{Alpha: 1.5}); err == nil {
		t.Error("alpha 1.5 accepted")
	}
}

func TestMinP(t *testing.T) {
	for _, tt := range []struct {
		n1, n2 int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {0, 4, 1}, {1, 1, 1}} {
		if got := MinP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}

func TestEmulatedRecordsHaveNoVerdictOrThroughput(t *testing.T) {
	rec := func(backend string, emulated bool, s ...float64) Record {
		r := Record{Op: "ADD", Type: "f32", Shape: "k=64", Backend: backend, Threads: 1, Emulated: emulated, Flops: 100, Bytes: 1000,
			Timing: Timing{Samples: s, Stats: Summarize(s)}}
		Derive(&r, nil, 0)
		return r
	}
	fast := []float64{1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1}
	slow := []float64{2, 2.01, 1.99, 2, 2.02, 1.98, 2, 2}
	a, b := rec("cuda-emu", true, fast...), rec("cuda-emu", true, slow...)
	if a.GFLOPS != 0 || a.GBPS != 0 {
		t.Errorf("emulated record has throughput %v GFLOP/s, %v GB/s", a.GFLOPS, a.GBPS)
	}
	rep, err := Compare(&Set{Records: []Record{a}}, &Set{Records: []Record{b}}, CompareOptions{})
	if err != nil || len(rep.Comparisons) != 1 || rep.Comparisons[0].Verdict != Emulated {
		t.Errorf("compare of emulated records: %+v, %v", rep.Comparisons, err)
	}
	if real := rec("cuda-0", false, fast...); real.GFLOPS == 0 {
		t.Error("a device's record has no throughput")
	}
	// By name too: a metal-emu record without its mark gets no verdict,
	// and takes no part in the geometric mean.
	unmarked := rec("metal-emu", false, slow...)
	other := rec("cpu", false, fast...)
	other.Op = "MUL"
	otherB := other
	otherB.Samples = slow
	otherB.Stats = Summarize(slow)
	rep, err = Compare(&Set{Records: []Record{rec("metal-emu", false, fast...), other}}, &Set{Records: []Record{unmarked, otherB}}, CompareOptions{})
	if err != nil || len(rep.Comparisons) != 2 || rep.Count(Emulated) != 1 || rep.Count(Slower) != 1 {
		t.Fatalf("compare with an unmarked emulated record: %+v, %v", rep.Comparisons, err)
	}
	if math.Abs(rep.GeoMean-0.5) > 1e-9 {
		t.Errorf("geomean %v, want 0.5 (the emulated point left out)", rep.GeoMean)
	}
}

// Compare judges a record by its samples, not by the summary stored
// beside them.
func TestCompareUsesSamples(t *testing.T) {
	ones := make([]float64, 200)
	for i := range ones {
		ones[i] = 1e-6
	}
	r := Record{Op: "ADD", Type: "f32", Shape: "k=64", Backend: "cpu", Threads: 1, Timing: Timing{Samples: ones, Stats: Summarize(ones)}}
	lie := r
	lie.Median = 14.22e-6
	rep, err := Compare(&Set{Records: []Record{r}}, &Set{Records: []Record{lie}}, CompareOptions{})
	if err != nil || len(rep.Comparisons) != 1 {
		t.Fatal(rep, err)
	}
	if c := rep.Comparisons[0]; c.Speedup != 1 || c.B.Median != 1e-6 {
		t.Errorf("speedup %v, B's median %v: the stored median was used", c.Speedup, c.B.Median)
	}
}
