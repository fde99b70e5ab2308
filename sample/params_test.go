package sample

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestDefaultParams(t *testing.T) {
	p := DefaultParams()
	// llama.cpp's common_params_sampling defaults.
	want := Params{
		Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Typical: 1, TFSZ: 1,
		RepeatLastN: 64, RepeatPenalty: 1, MirostatTau: 5, MirostatEta: 0.1,
	}
	if p != want {
		t.Errorf("DefaultParams() = %+v, want %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestFromParamsOrder(t *testing.T) {
	all := DefaultParams()
	all.RepeatPenalty, all.Typical, all.TFSZ = 1.1, 0.9, 0.95
	mod := func(f func(*Params)) Params {
		p := DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		name string
		p    Params
		want []string
	}{
		{"defaults", DefaultParams(), []string{"top-k", "top-p", "min-p", "temp", "dist"}},
		{"all", all, []string{"penalties", "top-k", "tail-free", "typical", "top-p", "min-p", "temp", "dist"}},
		{"freq only", mod(func(p *Params) { p.FreqPenalty = 0.5 }), []string{"penalties", "top-k", "top-p", "min-p", "temp", "dist"}},
		{"window 0", mod(func(p *Params) { p.RepeatPenalty, p.RepeatLastN = 1.1, 0 }), []string{"top-k", "top-p", "min-p", "temp", "dist"}},
		{"filters off", mod(func(p *Params) { p.TopK, p.TopP, p.MinP = 0, 1, 0 }), []string{"temp", "dist"}},
		{"greedy", mod(func(p *Params) { p.Temp = 0 }), []string{"greedy"}},
		{"greedy penalties", mod(func(p *Params) { p.Temp, p.RepeatPenalty = -1, 1.1 }), []string{"penalties", "greedy"}},
		{"greedy beats mirostat", mod(func(p *Params) { p.Temp, p.Mirostat = 0, 2 }), []string{"greedy"}},
		{"mirostat 1", mod(func(p *Params) { p.Mirostat = 1 }), []string{"temp", "mirostat"}},
		{"mirostat 2", mod(func(p *Params) { p.Mirostat = 2 }), []string{"temp", "mirostat-v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromParams(tt.p, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Names(); !slices.Equal(got, tt.want) {
				t.Errorf("chain %v, want %v", got, tt.want)
			}
			// Every chain built from valid parameters samples.
			if _, err := c.Sample(randLogits(1, 10, 1)); err != nil {
				t.Errorf("Sample: %v", err)
			}
		})
	}
}

func TestFromParamsGreedyPicksArgmax(t *testing.T) {
	p := DefaultParams()
	p.Temp = 0
	c, err := FromParams(p, 5)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if id, err := c.Sample([]float32{0.1, 3, -2, 2.9, 3}); err != nil || id != 1 {
			t.Fatalf("greedy picked %d (%v), want 1 (lowest id of the two 3s)", id, err)
		}
	}
}

func TestFromParamsErrors(t *testing.T) {
	nan := float32(math.NaN())
	mod := func(f func(*Params)) Params {
		p := DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		name   string
		p      Params
		nVocab int
		want   string
	}{
		{"temp nan", mod(func(p *Params) { p.Temp = nan }), 10, "temp"},
		{"temp inf", mod(func(p *Params) { p.Temp = inf }), 10, "temp"},
		{"top_k", mod(func(p *Params) { p.TopK = -1 }), 10, "top_k"},
		{"top_p > 1", mod(func(p *Params) { p.TopP = 1.5 }), 10, "top_p"},
		{"top_p < 0", mod(func(p *Params) { p.TopP = -0.1 }), 10, "top_p"},
		{"top_p nan", mod(func(p *Params) { p.TopP = nan }), 10, "top_p"},
		{"min_p", mod(func(p *Params) { p.MinP = 2 }), 10, "min_p"},
		{"typical", mod(func(p *Params) { p.Typical = nan }), 10, "typical_p"},
		{"tfs", mod(func(p *Params) { p.TFSZ = -1 }), 10, "tfs_z"},
		{"min_keep", mod(func(p *Params) { p.MinKeep = -1 }), 10, "min_keep"},
		{"repeat_last_n", mod(func(p *Params) { p.RepeatLastN = -1 }), 10, "repeat_last_n"},
		{"repeat_penalty 0", mod(func(p *Params) { p.RepeatPenalty = 0 }), 10, "repeat_penalty"},
		{"repeat_penalty nan", mod(func(p *Params) { p.RepeatPenalty = nan }), 10, "repeat_penalty"},
		{"freq", mod(func(p *Params) { p.FreqPenalty = inf }), 10, "frequency_penalty"},
		{"present", mod(func(p *Params) { p.PresentPenalty = nan }), 10, "presence_penalty"},
		{"mirostat", mod(func(p *Params) { p.Mirostat = 3 }), 10, "mirostat"},
		{"tau", mod(func(p *Params) { p.Mirostat, p.MirostatTau = 2, nan }), 10, "mirostat_tau"},
		{"eta", mod(func(p *Params) { p.Mirostat, p.MirostatEta = 1, -1 }), 10, "mirostat_eta"},
		{"vocab 0", DefaultParams(), 0, "vocabulary size 0"},
		{"vocab < 0", DefaultParams(), -5, "vocabulary size -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromParams(tt.p, tt.nVocab)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FromParams error %v (chain %v), want one naming %q", err, c, tt.want)
			}
		})
	}
	// Mirostat parameters are not checked while mirostat is off.
	if _, err := FromParams(mod(func(p *Params) { p.MirostatTau = nan }), 10); err != nil {
		t.Errorf("tau checked with mirostat off: %v", err)
	}
}
