package sample

import (
	"math"
	"testing"
)

func TestMirostatV2(t *testing.T) {
	// Probabilities [0.5, 0.25, 0.125, 0.125]; surprises -log2 p = 1, 2, 3, 3.
	in := lnp(0.5, 0.25, 0.125, 0.125)

	// tau = 1.25, eta = 0.1: mu starts at 2.5, so the first two (surprise
	// <= 2.5) stay, renormalised to 2/3 and 1/3. Then
	//   drew id 0: mu = 2.5 - 0.1*(log2(3/2) - 1.25) = 2.5665037
	//   drew id 1: mu = 2.5 - 0.1*(log2(3)   - 1.25) = 2.4665037
	want := map[int32]float64{0: 2.5665037, 1: 2.4665037}
	seen := map[int32]bool{}
	for seed := range uint64(32) {
		s := MirostatV2(1.25, 0.1, seed)
		if s.Mu() != 2.5 {
			t.Fatalf("initial mu %g, want 2*tau = 2.5", s.Mu())
		}
		c := cands(in...)
		s.Apply(c)
		wantIDs(t, c, []int32{0, 1})
		if !near(float64(c.Items[0].P), 2.0/3, 1e-6) || !near(float64(c.Items[1].P), 1.0/3, 1e-6) {
			t.Errorf("kept probabilities %v, want 2/3 and 1/3", c)
		}
		id, ok := c.Token()
		if !ok {
			t.Fatal("mirostat-v2 selected nothing")
		}
		seen[id] = true
		if !near(s.Mu(), want[id], 1e-6) {
			t.Errorf("seed %d drew %d: mu = %.7f, want %.7f", seed, id, s.Mu(), want[id])
		}
	}
	if !seen[0] || !seen[1] {
		t.Errorf("32 seeds drew only %v of {0, 1}", seen)
	}

	// tau = 0.25: mu = 0.5 is below the best token's surprise (1), so only
	// it stays, with probability 1 and surprise 0:
	//   mu = 0.5 - 0.1*(0 - 0.25) = 0.525, then 0.55.
	s := MirostatV2(0.25, 0.1, 7)
	for _, wantMu := range []float64{0.525, 0.55} {
		c := cands(in...)
		s.Apply(c)
		wantIDs(t, c, []int32{0})
		if c.Selected != 0 || !near(s.Mu(), wantMu, 1e-6) {
			t.Errorf("selected %d mu %.7f, want 0 and %.7f", c.Selected, s.Mu(), wantMu)
		}
	}
	s.Reset()
	if s.Mu() != 0.5 {
		t.Errorf("mu after Reset %g, want 0.5", s.Mu())
	}
}

func TestMirostatV1(t *testing.T) {
	// Zipf with exponent 2: p_i proportional to 1/(i+1)^2, logits -2 ln(i+1).
	// Then b_i = ln(p_i/p_{i+1}) = 2 t_i exactly, so s_hat = 2, eps = 1 and
	//   k = (2^mu / (1 - N^-1))^(1/2).
	zipf := []float32{0, float32(-2 * math.Log(2)), float32(-2 * math.Log(3)), float32(-2 * math.Log(4))}
	tests := []struct {
		name     string
		tau      float32
		nVocab   int
		wantKeep int
		// mu after drawing id 0 and id 1.
		wantMu map[int32]float64
	}{
		// tau 1: mu 2, N 4: k = sqrt(4/0.75) = 2.309 -> 2. The two kept
		// renormalise to 1 : 1/4 = 0.8, 0.2, so
		//   id 0: mu = 2 - 0.1*(-log2 0.8 - 1) = 2.0678072
		//   id 1: mu = 2 - 0.1*(-log2 0.2 - 1) = 1.8678072
		{"k=2", 1, 4, 2, map[int32]float64{0: 2.0678072, 1: 1.8678072}},
		// tau 0.5: mu 1: k = sqrt(2/0.75) = 1.633 -> 1; p = 1, surprise 0:
		//   mu = 1 - 0.1*(0 - 0.5) = 1.05.
		{"k=1", 0.5, 4, 1, map[int32]float64{0: 1.05}},
		// tau 1.5: mu 3: N 4: k = sqrt(8/0.75) = 3.266 -> 3;
		// N 100: k = sqrt(8/0.99) = 2.843 -> 2.
		{"N=4", 1.5, 4, 3, nil},
		{"N=100", 1.5, 100, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := 0
			for seed := range uint64(64) {
				s := MirostatV1(tt.tau, 0.1, 100, tt.nVocab, seed)
				c := cands(zipf...)
				s.Apply(c)
				if len(c.Items) != tt.wantKeep {
					t.Fatalf("kept %d, want %d: %v", len(c.Items), tt.wantKeep, c)
				}
				id, ok := c.Token()
				if !ok {
					t.Fatal("mirostat selected nothing")
				}
				if tt.wantMu == nil {
					continue
				}
				if want, ok := tt.wantMu[id]; !ok || !near(s.Mu(), want, 1e-5) {
					t.Errorf("seed %d drew %d: mu %.7f, want %v", seed, id, s.Mu(), tt.wantMu)
				}
				seen |= 1 << id
			}
			if tt.wantKeep == 2 && tt.wantMu != nil && seen != 3 {
				t.Errorf("64 seeds drew only ids with mask %b", seen)
			}
		})
	}
}

// At s_hat = 1 exactly the formula's eps/(1 - N^-eps) is 0/0; its limit is
// 1/ln N. P = [0.5, 0.25, 0.25] with m = 2 uses one pair: b_0 = ln 2 = t_0,
// so s_hat = 1; with mu = 4, N = 1000: k = 2^4 / ln 1000 = 2.316 -> 2.
func TestMirostatV1ZipfOne(t *testing.T) {
	s := MirostatV1(2, 0.1, 2, 1000, 1)
	items := []Candidate{{ID: 0, P: 0.5}, {ID: 1, P: 0.25}, {ID: 2, P: 0.25}}
	if k := s.k(items); k != 2 {
		t.Errorf("k = %d, want 2", k)
	}
}
