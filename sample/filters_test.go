package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var inf = float32(math.Inf(1))

func TestGreedy(t *testing.T) {
	tests := []struct {
		name   string
		c      *Candidates
		wantID int32
	}{
		{"argmax", cands(1, 2, 3, 4), 3},
		{"argmax first", cands(9, 2, 3, 4), 0},
		// Ties go to the lowest token id.
		{"tie lowest id", cands(4, 1, 4, 2), 0},
		// ... whatever the list order: id 2 comes first here.
		{"tie lowest id reordered", &Candidates{Items: []Candidate{{ID: 2, Logit: 4}, {ID: 0, Logit: 4}, {ID: 1, Logit: 3}}}, 0},
		{"-inf", cands(-inf, -1, -inf), 1},
		{"one", cands(-7), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.c.Items)
			Greedy().Apply(tt.c)
			id, ok := tt.c.Token()
			if !ok || id != tt.wantID {
				t.Fatalf("selected %d (ok=%v), want %d", id, ok, tt.wantID)
			}
			if !slices.Equal(tt.c.Items, before) {
				t.Errorf("greedy changed the list: %v", tt.c)
			}
		})
	}
	c := cands()
	Greedy().Apply(c)
	if c.Selected != -1 {
		t.Errorf("greedy on empty list selected %d", c.Selected)
	}
}

func TestTemperature(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name       string
		temp       float32
		in         []float32
		wantIDs    []int32
		wantLogits []float32
	}{
		// Dividing by 2 halves every logit (exact in binary).
		{"t=2", 2, []float32{1, 2, -4}, []int32{0, 1, 2}, []float32{0.5, 1, -2}},
		{"t=0.5", 0.5, []float32{1, 2, -4}, []int32{0, 1, 2}, []float32{2, 4, -8}},
		{"t=1", 1, []float32{1, 2, -4}, []int32{0, 1, 2}, []float32{1, 2, -4}},
		// t <= 0: only the best survives, lowest id among ties.
		{"t=0", 0, []float32{1, 3, 3, 2}, []int32{1}, []float32{3}},
		{"t<0", -1, []float32{1, 3, 3, 2}, []int32{1}, []float32{3}},
		{"t=NaN", nan, []float32{1, 2}, []int32{0, 1}, []float32{1, 2}},
		// t = +Inf: uniform over finite logits, -Inf stays impossible.
		{"t=inf", inf, []float32{1, -inf, 5}, []int32{0, 1, 2}, []float32{0, -inf, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(tt.in...)
			Temperature(tt.temp).Apply(c)
			wantIDs(t, c, tt.wantIDs)
			if got := logitsOf(c); !slices.Equal(got, tt.wantLogits) {
				t.Errorf("logits %v, want %v", got, tt.wantLogits)
			}
		})
	}
}

// Temperature t turns softmax ratios p_i/p_j = exp(l_i - l_j) into
// exp((l_i - l_j)/t).
func TestTemperatureSharpens(t *testing.T) {
	c := cands(0, 1)
	Temperature(0.5).Apply(c)
	c.Softmax()
	// p1/p0 = exp((1-0)/0.5) = e^2.
	if r := float64(c.Items[1].P / c.Items[0].P); !near(r, math.Exp(2), 1e-5) {
		t.Errorf("p1/p0 = %g after t=0.5, want e^2 = %g", r, math.Exp(2))
	}
}

func TestTemperatureKeepsSorted(t *testing.T) {
	c := cands(1, 5, 3)
	c.Sort()
	Temperature(0.7).Apply(c)
	if !c.Sorted {
		t.Error("positive temperature cleared Sorted")
	}
	wantIDs(t, c, []int32{1, 2, 0})
}

func TestTopK(t *testing.T) {
	tests := []struct {
		name string
		k    int
		in   []float32
		want []int32
	}{
		// [1,2,3,4], k=2: the two largest logits are 4 (id 3) and 3 (id 2).
		{"k=2", 2, []float32{1, 2, 3, 4}, []int32{3, 2}},
		{"k=1", 1, []float32{1, 2, 3, 4}, []int32{3}},
		{"k=n", 4, []float32{1, 2, 3, 4}, []int32{3, 2, 1, 0}},
		{"k>n", 10, []float32{1, 2, 3, 4}, []int32{3, 2, 1, 0}},
		// Disabled: list unchanged, still unsorted.
		{"k=0", 0, []float32{1, 2, 3, 4}, []int32{0, 1, 2, 3}},
		{"k<0", -3, []float32{1, 2, 3, 4}, []int32{0, 1, 2, 3}},
		// Ties: lower ids first.
		{"ties", 2, []float32{5, 5, 5, 1}, []int32{0, 1}},
		{"-inf", 2, []float32{-inf, 0, -inf}, []int32{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(tt.in...)
			TopK(tt.k).Apply(c)
			wantIDs(t, c, tt.want)
			if tt.k > 0 && !c.Sorted {
				t.Error("top-k left the list unsorted")
			}
		})
	}
}

// TopK on long lists (heap selection) must agree with a full sort.
func TestTopKMatchesSort(t *testing.T) {
	logits := randLogits(3, 5000, 2) // ties on a 1/8 grid
	ref := cands(logits...)
	slices.SortFunc(ref.Items, func(a, b Candidate) int {
		if a.Logit != b.Logit {
			if a.Logit > b.Logit {
				return -1
			}
			return 1
		}
		return int(a.ID - b.ID)
	})
	for _, k := range []int{1, 2, 7, 40, 1000, 1249, 1251, 4999, 5000} {
		c := cands(logits...)
		TopK(k).Apply(c)
		if got, want := ids(c), ids(ref)[:k]; !slices.Equal(got, want) {
			t.Errorf("k=%d: top-k disagrees with a full sort", k)
		}
	}
}

func TestTopP(t *testing.T) {
	tests := []struct {
		name    string
		p       float32
		minKeep int
		in      []float32
		want    []int32
	}{
		// Probabilities [0.5, 0.3, 0.2]: cumulative 0.5, 0.8, 1.0.
		// p=0.5: 0.5 >= 0.5 after one token (the softmax gives exactly 0.5).
		{"p=0.5", 0.5, 1, lnp(0.5, 0.3, 0.2), []int32{0}},
		{"p=0.45", 0.45, 1, lnp(0.5, 0.3, 0.2), []int32{0}},
		{"p=0.6", 0.6, 1, lnp(0.5, 0.3, 0.2), []int32{0, 1}},
		{"p=0.85", 0.85, 1, lnp(0.5, 0.3, 0.2), []int32{0, 1, 2}},
		{"min keep", 0.4, 2, lnp(0.5, 0.3, 0.2), []int32{0, 1}},
		{"p=0", 0, 0, lnp(0.5, 0.3, 0.2), []int32{0}},
		// Unsorted input comes out sorted: [0.2, 0.5, 0.3] -> ids 1, 2.
		{"unsorted", 0.6, 1, lnp(0.2, 0.5, 0.3), []int32{1, 2}},
		// Four equal logits: each p is exactly 0.25, so p=0.5 is reached
		// exactly at the second token (">=", not ">").
		{"boundary", 0.5, 1, []float32{0, 0, 0, 0}, []int32{0, 1}},
		// Disabled: unchanged and unsorted.
		{"p=1", 1, 1, lnp(0.2, 0.5, 0.3), []int32{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(tt.in...)
			TopP(tt.p, tt.minKeep).Apply(c)
			wantIDs(t, c, tt.want)
		})
	}
}

// On a long unsorted list top-p first sorts 256 candidates; the result must
// still be the minimal prefix of the fully sorted list.
func TestTopPLongList(t *testing.T) {
	for _, scale := range []float64{0.5, 3} { // flat: the 256 are not enough; peaked: they are
		logits := randLogits(11, 3000, scale)
		ref := cands(logits...)
		ref.Sort()
		ref.Softmax()
		for _, p := range []float32{0.05, 0.5, 0.9, 0.999} {
			c := cands(logits...)
			TopP(p, 1).Apply(c)
			n := len(c.Items)
			if !slices.Equal(ids(c), ids(ref)[:n]) {
				t.Fatalf("scale %g p=%g: kept list is not a prefix of the sorted list", scale, p)
			}
			var cum, prev float64
			for i := range n {
				prev = cum
				cum += float64(ref.Items[i].P)
			}
			if cum < float64(p) || (n > 1 && prev >= float64(p)) {
				t.Errorf("scale %g p=%g: kept %d with mass %g (without the last %g): not minimal", scale, p, n, cum, prev)
			}
			t.Logf("scale %g p=%g: kept %d of %d", scale, p, n, len(logits))
		}
	}
}

func TestMinP(t *testing.T) {
	tests := []struct {
		name    string
		p       float32
		minKeep int
		in      []float32
		sorted  bool
		want    []int32
	}{
		// Logits [1,2,3,4]: p_i/p_max = e^-3, e^-2, e^-1, 1
		// = 0.050, 0.135, 0.368, 1.
		// p=0.3 keeps e^-1 and 1, in input order (unsorted path).
		{"p=0.3", 0.3, 1, []float32{1, 2, 3, 4}, false, []int32{2, 3}},
		{"p=0.1", 0.1, 1, []float32{1, 2, 3, 4}, false, []int32{1, 2, 3}},
		{"p=0.01", 0.01, 1, []float32{1, 2, 3, 4}, false, []int32{0, 1, 2, 3}},
		// Too few survivors for minKeep: sorted path keeps the best 3.
		{"min keep", 0.3, 3, []float32{1, 2, 3, 4}, false, []int32{3, 2, 1}},
		// Sorted input stays sorted.
		{"sorted", 0.3, 1, []float32{1, 2, 3, 4}, true, []int32{3, 2}},
		// p=1 keeps the maxima only.
		{"p=1 ties", 1, 1, []float32{4, 1, 4}, false, []int32{0, 2}},
		// p>1: nothing passes, the best is kept.
		{"p>1", 2, 0, []float32{4, 1, 3}, false, []int32{0}},
		{"p=0", 0, 1, []float32{1, 2, 3, 4}, false, []int32{0, 1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(tt.in...)
			if tt.sorted {
				c.Sort()
			}
			MinP(tt.p, tt.minKeep).Apply(c)
			wantIDs(t, c, tt.want)
		})
	}
}

func TestTypical(t *testing.T) {
	// Probabilities [0.45, 0.35, 0.2]:
	//   -ln p = 0.7985, 1.0498, 1.6094
	//   H = 0.45*0.7985 + 0.35*1.0498 + 0.2*1.6094 = 1.0487
	//   |-ln p - H| = 0.2501, 0.0012, 0.5608
	// so the typicality order is id 1 (0.35), id 0 (0.45), id 2 (0.2), with
	// cumulative mass 0.35, 0.80, 1.00.
	in := lnp(0.45, 0.35, 0.2)
	tests := []struct {
		name    string
		p       float32
		minKeep int
		want    []int32
	}{
		{"p=0.3", 0.3, 1, []int32{1}},
		{"p=0.5", 0.5, 1, []int32{1, 0}},
		{"p=0.9", 0.9, 1, []int32{1, 0, 2}},
		{"min keep 2", 0.3, 2, []int32{1, 0}},
		{"min keep 0", 0.3, 0, []int32{1}},
		{"p=1 off", 1, 1, []int32{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(in...)
			Typical(tt.p, tt.minKeep).Apply(c)
			wantIDs(t, c, tt.want)
		})
	}
	// Four equal logits: p = 0.25 each, all equally typical, cumulative
	// 0.25, 0.5, 0.75. Typical needs the sum to exceed p (">", unlike
	// top-p's ">="), so p = 0.5 keeps three.
	c := cands(0, 0, 0, 0)
	Typical(0.5, 1).Apply(c)
	wantIDs(t, c, []int32{0, 1, 2})
}

func TestTailFree(t *testing.T) {
	// Probabilities [0.6, 0.2, 0.1, 0.06, 0.04]:
	//   first differences  0.4, 0.1, 0.04, 0.02
	//   |second differences| 0.3, 0.06, 0.02 (sum 0.38)
	//   normalised 0.7895, 0.1579, 0.0526, cumulative 0.7895, 0.9474, 1.0
	// The cut is the first i >= minKeep with cumulative > z; i tokens stay.
	skewed := lnp(0.6, 0.2, 0.1, 0.06, 0.04)
	// Linear probabilities: second differences are all zero, so the weights
	// are uniform (1/3 each; cumulative 1/3, 2/3, 1).
	linear := lnp(0.3, 0.25, 0.2, 0.15, 0.1)
	tests := []struct {
		name    string
		z       float32
		minKeep int
		in      []float32
		want    []int32
	}{
		{"z=0.5", 0.5, 1, skewed, []int32{0}},      // i=1: 0.947 > 0.5
		{"z=0.9", 0.9, 1, skewed, []int32{0}},      // i=1: 0.947 > 0.9
		{"z=0.95", 0.95, 1, skewed, []int32{0, 1}}, // i=2: 1.0 > 0.95
		{"min keep 2", 0.5, 2, skewed, []int32{0, 1}},
		{"min keep 0", 0.5, 0, skewed, []int32{0}}, // i=0 would keep none; one stays
		{"min keep large", 0.5, 5, skewed, []int32{0, 1, 2, 3, 4}},
		{"z=1 off", 1, 1, skewed, []int32{0, 1, 2, 3, 4}},
		{"linear z=0.25", 0.25, 1, linear, []int32{0}},    // i=1: 2/3 > 0.25
		{"linear z=0.75", 0.75, 1, linear, []int32{0, 1}}, // i=2: 1 > 0.75
		{"two", 0.1, 0, lnp(0.7, 0.3), []int32{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cands(tt.in...)
			TailFree(tt.z, tt.minKeep).Apply(c)
			wantIDs(t, c, tt.want)
		})
	}
}

// Every sampler must cope with an empty list and with lists of -Inf.
func TestSamplersDegenerate(t *testing.T) {
	all := func() []Sampler {
		return []Sampler{
			Greedy(), Temperature(0), Temperature(0.7), TopK(2), TopP(0.5, 1), MinP(0.1, 1),
			Typical(0.5, 1), TailFree(0.5, 1), Penalties(4, 1.3, 0.1, 0.1),
			Dist(1), MirostatV1(5, 0.1, 100, 10, 1), MirostatV2(5, 0.1, 1),
		}
	}
	inputs := [][]float32{
		{},
		{-inf},
		{-inf, -inf, -inf},
		{-inf, 2, -inf, -inf},
		{inf, 0, inf},
	}
	for _, in := range inputs {
		for _, s := range all() {
			s.Accept(0)
			c := cands(in...)
			s.Apply(c)
			if len(in) > 0 && len(c.Items) == 0 {
				t.Errorf("%s on %v left no candidates", s.Name(), in)
			}
			if c.Selected < -1 || c.Selected >= len(c.Items) {
				t.Errorf("%s on %v: Selected %d out of range", s.Name(), in, c.Selected)
			}
			if _, ok := c.Token(); ok && len(in) == 4 && c.Items[c.Selected].ID != 1 {
				t.Errorf("%s on %v selected id %d, the only possible token is 1", s.Name(), in, c.Items[c.Selected].ID)
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	// Logits [0, ln 3]: probabilities 1/4, 3/4.
	c := cands(0, float32(math.Log(3)))
	c.Softmax()
	if !near(float64(c.Items[0].P), 0.25, 1e-7) || !near(float64(c.Items[1].P), 0.75, 1e-7) {
		t.Errorf("softmax [0, ln3] = %v, want [0.25 0.75]", c)
	}
	// Shift invariance and large logits (no overflow).
	c = cands(1000, 1000+float32(math.Log(3)))
	c.Softmax()
	if !near(float64(c.Items[1].P), 0.75, 1e-4) {
		t.Errorf("softmax of large logits: %v", c)
	}
	// Sum to one on a random list.
	c = cands(randLogits(5, 1000, 4)...)
	c.Softmax()
	var s float64
	for _, it := range c.Items {
		s += float64(it.P)
	}
	if !near(s, 1, 1e-5) {
		t.Errorf("probabilities sum to %g", s)
	}
}

func TestSortTies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := cands(2, 1, 2, 1, 2)
	r.Shuffle(len(c.Items), func(i, j int) { c.Items[i], c.Items[j] = c.Items[j], c.Items[i] })
	c.Sort()
	wantIDs(t, c, []int32{0, 2, 4, 1, 3})
}

// A transform must not turn a possible token into an impossible one by
// overflow: -3e38 / 0.5 overflows float32 and is clamped to -MaxFloat32.
func TestTemperatureOverflow(t *testing.T) {
	c := cands(-3e38, -inf, 3e38)
	Temperature(0.5).Apply(c)
	if got := logitsOf(c); !slices.Equal(got, []float32{-math.MaxFloat32, -inf, math.MaxFloat32}) {
		t.Errorf("logits %v, want [-MaxFloat32 -Inf MaxFloat32]", got)
	}
	ch := NewChain(1, Temperature(0.5))
	for range 50 {
		if id, err := ch.Sample([]float32{-3e38, -inf}); err != nil || id != 0 {
			t.Fatalf("picked %d (%v), want 0, the only possible token", id, err)
		}
	}
}

// NaN logits rank after everything, ties among them by id, so sorting a
// list that holds them is still deterministic.
func TestSortNaN(t *testing.T) {
	nan := float32(math.NaN())
	c := cands(nan, 1, -inf, nan, 3)
	c.Sort()
	wantIDs(t, c, []int32{4, 1, 2, 0, 3})
	c = cands(nan, 1, -inf, nan, 3)
	TopK(2).Apply(c)
	wantIDs(t, c, []int32{4, 1})
	c = cands(nan, 1, nan)
	Greedy().Apply(c)
	if id, _ := c.Token(); id != 1 {
		t.Errorf("greedy picked %d over NaNs, want 1", id)
	}
}
