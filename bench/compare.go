package bench

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// A Verdict is how a point of set B compares with the same point of A.
type Verdict int

const (
	// WithinNoise: the samples do not show a difference at the chosen
	// significance level, or the difference is smaller than the samples'
	// own spread.
	WithinNoise Verdict = iota
	// Faster: B's times are significantly lower.
	Faster
	// Slower: B's times are significantly higher.
	Slower
	// TooFewSamples: a side has fewer samples than a difference could be
	// shown with (4 each, for a two-sided test at 0.05).
	TooFewSamples
	// Emulated: a side ran on an emulated backend, whose times say
	// nothing of a device's speed; no verdict is drawn.
	Emulated
)

var verdictNames = [...]string{"~ within noise", "faster", "SLOWER", "? too few samples", "- emulated, no verdict"}

// String returns "~ within noise", "faster", "SLOWER" or "? too few
// samples".
func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// A Comparison is one point present in both sets.
type Comparison struct {
	// Key is the joined key (without the ignored fields).
	Key  string
	A, B Record
	// Speedup is A's median time over B's: above 1, B is faster.
	Speedup float64
	// P is the two-sided Mann-Whitney U test's p-value of the two sample
	// sets.
	P       float64
	Verdict Verdict
}

// A Report is the comparison of two record sets.
type Report struct {
	// Ignored are the key fields left out of the join: asked for, or
	// found to take one value in each set but different values between
	// them (say threads 1 against threads 2).
	Ignored     []string
	Comparisons []Comparison
	// OnlyA and OnlyB are timed records without a partner; Untimed are
	// records of either set that have no samples (errors, failures).
	OnlyA, OnlyB, Untimed []Record
	// GeoMean is the geometric mean of the speedups of the comparisons
	// with a verdict (1 when none): emulated ones are left out.
	GeoMean float64
	// Alpha is the significance level used.
	Alpha float64
}

// Count returns the number of comparisons with verdict v.
func (r Report) Count(v Verdict) int {
	n := 0
	for _, c := range r.Comparisons {
		if c.Verdict == v {
			n++
		}
	}
	return n
}

// CompareOptions configure Compare.
type CompareOptions struct {
	// Alpha is the significance level; default 0.05.
	Alpha float64
	// Ignore are key fields to leave out of the join (see KeyFields).
	Ignore []string
}

// DefaultAlpha is Compare's default significance level.
const DefaultAlpha = 0.05

// Compare joins a and b on their records' keys (op, type, shape, backend,
// threads, less the ignored fields) and compares each pair's samples. A
// point is faster or slower when both hold:
//
//   - a two-sided Mann-Whitney U test of the two sets of samples gives p <
//     Alpha (the test uses ranks only: it asks whether one set is shifted
//     against the other; exact for small counts without ties, the normal
//     approximation otherwise), and
//   - the shift is larger than the spread: each side's median lies outside
//     the other side's range of samples (min to max).
//
// Otherwise it is within noise. The second condition is there because the
// samples of one run are taken back to back: they do not see the drift
// between two runs on a shared machine, and a shift of a few percent that
// the samples' own spread covers is not called a change however cleanly
// the ranks separate.
func Compare(a, b *Set, o CompareOptions) (Report, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return Report{}, fmt.Errorf("bench: significance level %v outside (0, 1)", o.Alpha)
	}
	for _, f := range o.Ignore {
		if !slices.Contains(KeyFields, f) {
			return Report{}, fmt.Errorf("bench: cannot ignore %q: key fields are %s", f, strings.Join(KeyFields, ", "))
		}
	}
	rep := Report{Alpha: o.Alpha, Ignored: slices.Clone(o.Ignore)}
	for _, f := range KeyFields {
		if slices.Contains(rep.Ignored, f) {
			continue
		}
		va, oka := single(a.Records, f)
		vb, okb := single(b.Records, f)
		if oka && okb && va != vb {
			rep.Ignored = append(rep.Ignored, f)
		}
	}
	index := func(s *Set, which string) (map[string]Record, []string, error) {
		m := map[string]Record{}
		var order []string
		for _, r := range s.Records {
			if !r.Timed() {
				rep.Untimed = append(rep.Untimed, r)
				continue
			}
			// The summary is the samples' own (a file's records are
			// checked against theirs when read; these may not come from
			// one).
			r.Stats = Summarize(r.Samples)
			k := r.KeyWithout(rep.Ignored...)
			if _, dup := m[k]; dup {
				return nil, nil, fmt.Errorf("bench: set %s has two records for %s (ignoring %s)", which, k, strings.Join(rep.Ignored, ", "))
			}
			m[k] = r
			order = append(order, k)
		}
		return m, order, nil
	}
	ma, orderA, err := index(a, "A")
	if err != nil {
		return Report{}, err
	}
	mb, orderB, err := index(b, "B")
	if err != nil {
		return Report{}, err
	}
	logSum := 0.0
	for _, k := range orderA {
		ra := ma[k]
		rb, ok := mb[k]
		if !ok {
			rep.OnlyA = append(rep.OnlyA, ra)
			continue
		}
		c := Comparison{Key: k, A: ra, B: rb, Speedup: ra.Median / rb.Median}
		c.P = MannWhitneyP(ra.Samples, rb.Samples)
		switch {
		case ra.Emulated || rb.Emulated || EmulatedBackend(ra.Backend) || EmulatedBackend(rb.Backend):
			// An emulator's times say nothing of a device: no verdict,
			// and no part in the geometric mean.
			c.Verdict = Emulated
			rep.Comparisons = append(rep.Comparisons, c)
			continue
		case MinP(len(ra.Samples), len(rb.Samples)) >= o.Alpha:
			c.Verdict = TooFewSamples
		case c.P >= o.Alpha || !beyondSpread(ra, rb):
			c.Verdict = WithinNoise
		case rb.Median > ra.Median:
			c.Verdict = Slower
		default:
			c.Verdict = Faster
		}
		logSum += math.Log(c.Speedup)
		rep.Comparisons = append(rep.Comparisons, c)
	}
	for _, k := range orderB {
		if _, ok := ma[k]; !ok {
			rep.OnlyB = append(rep.OnlyB, mb[k])
		}
	}
	rep.GeoMean = 1
	if n := len(rep.Comparisons) - rep.Count(Emulated); n > 0 {
		rep.GeoMean = math.Exp(logSum / float64(n))
	}
	return rep, nil
}

// beyondSpread reports whether each record's median lies outside the
// other's range of samples.
func beyondSpread(a, b Record) bool {
	outside := func(m float64, r Record) bool { return m < r.Min || m > r.Max }
	return outside(a.Median, b) && outside(b.Median, a)
}

// single returns the value field f takes in every timed record, if one.
func single(rs []Record, f string) (string, bool) {
	v, found := "", false
	for _, r := range rs {
		if !r.Timed() {
			continue
		}
		x := r.Field(f)
		if found && x != v {
			return "", false
		}
		v, found = x, true
	}
	return v, found
}

// MannWhitneyP returns the two-sided p-value of the Mann-Whitney U test
// that samples x and y come from the same distribution. It is exact when
// neither has more than 50 samples and no value appears twice, and uses
// the normal approximation with tie and continuity corrections otherwise.
// It returns 1 when either side is empty.
func MannWhitneyP(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v    float64
		from int
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, 0})
	}
	for _, v := range y {
		all = append(all, obs{v, 1})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Ranks, averaged over ties; tieTerm sums t^3 - t over tie groups.
	var r1, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		t := float64(j - i)
		rank := float64(i+j+1) / 2 // ranks i+1 .. j, averaged
		for k := i; k < j; k++ {
			if all[k].from == 0 {
				r1 += rank
			}
		}
		if t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u := r1 - float64(n1*(n1+1))/2 // U of x: pairs where x > y
	if !ties && n1 <= 50 && n2 <= 50 {
		return exactP(u, n1, n2)
	}
	n := float64(n1 + n2)
	mean := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value equal
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return min(1, math.Erfc(z/math.Sqrt2))
}

// uCounts returns, for n1 and n2 samples, the number of orderings giving
// each U in [0, n1*n2] (all C(n1+n2, n1) orderings equally likely under
// the null hypothesis).
func uCounts(n1, n2 int) []float64 {
	// c[i][j][u]: orderings of i x's and j y's with U = u. The largest
	// value is an x (adding j to U) or a y (adding nothing).
	prev := make([][]float64, n2+1) // i-1
	for j := range prev {
		prev[j] = []float64{1}
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1}
		for j := 1; j <= n2; j++ {
			c := make([]float64, i*j+1)
			for u, v := range prev[j] { // x largest
				c[u+j] += v
			}
			for u, v := range cur[j-1] { // y largest
				c[u] += v
			}
			cur[j] = c
		}
		prev = cur
	}
	return prev[n2]
}

// exactP is the two-sided exact p-value of U = u.
func exactP(u float64, n1, n2 int) float64 {
	c := uCounts(n1, n2)
	var total, lo, hi float64
	for k, v := range c {
		total += v
		if float64(k) <= u {
			lo += v
		}
		if float64(k) >= u {
			hi += v
		}
	}
	return min(1, 2*min(lo, hi)/total)
}

// MinP returns the smallest two-sided p-value the exact test can give for
// n1 and n2 samples: 2 / C(n1+n2, n1). A difference cannot be shown at a
// level at or below it.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// C(n1+n2, n1) in floating point.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}
