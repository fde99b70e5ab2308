package sample

import (
	"fmt"
	"math"
)

// Params are the sampling settings of llama.cpp's tools (common_params_sampling),
// from which [FromParams] builds a chain. A zero value is not useful; start
// from [DefaultParams].
type Params struct {
	// Temp is the temperature; <= 0 selects greedy decoding.
	Temp float32
	// TopK keeps the K most likely tokens; 0 disables it.
	TopK int
	// TopP is the nucleus threshold in [0, 1]; 1 disables it.
	TopP float32
	// MinP keeps tokens at least MinP times as likely as the best, in
	// [0, 1]; 0 disables it.
	MinP float32
	// Typical is the locally typical mass in [0, 1]; 1 disables it.
	Typical float32
	// TFSZ is the tail-free z in [0, 1]; 1 disables it.
	TFSZ float32
	// MinKeep is the fewest candidates top-p, min-p, typical and tail-free
	// may leave (they always leave at least one).
	MinKeep int
	// RepeatLastN is the penalty window in tokens; 0 disables penalties.
	// llama.cpp's -1 (the whole context) is not accepted: pass the context
	// length.
	RepeatLastN int
	// RepeatPenalty divides positive and multiplies non-positive logits of
	// repeated tokens; 1 disables it.
	RepeatPenalty float32
	// FreqPenalty is subtracted once per occurrence in the window; 0
	// disables it.
	FreqPenalty float32
	// PresentPenalty is subtracted once if the token occurs in the window;
	// 0 disables it.
	PresentPenalty float32
	// Mirostat selects mirostat 1 or 2 in place of the filters; 0 disables
	// it.
	Mirostat int
	// MirostatTau is mirostat's target surprise in bits.
	MirostatTau float32
	// MirostatEta is mirostat's learning rate.
	MirostatEta float32
	// Seed seeds every generator in the chain. There is no "random seed"
	// value: every seed is used as given, so runs are reproducible; a caller
	// who wants variety picks a seed itself.
	Seed uint64
}

// DefaultParams returns llama.cpp's defaults: temperature 0.8, top-k 40,
// top-p 0.95, min-p 0.05, typical and tail-free off (1), a 64-token penalty
// window with all penalties off (repeat 1, frequency and presence 0),
// mirostat off with tau 5 and eta 0.1, min-keep 0 and seed 0.
func DefaultParams() Params {
	return Params{
		Temp:          0.8,
		TopK:          40,
		TopP:          0.95,
		MinP:          0.05,
		Typical:       1,
		TFSZ:          1,
		RepeatLastN:   64,
		RepeatPenalty: 1,
		MirostatTau:   5,
		MirostatEta:   0.1,
	}
}

// mirostatM is the number of candidates mirostat 1 estimates from, as in
// llama.cpp's tools.
const mirostatM = 100

// Validate reports the first parameter that is out of range, naming it.
func (p Params) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("sample: parameter %s = %v: %s", name, v, want)
	}
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	unit := func(name string, v float32) error {
		if !finite(v) || v < 0 || v > 1 {
			return bad(name, v, "want a number in [0, 1]")
		}
		return nil
	}
	if !finite(p.Temp) {
		return bad("temp", p.Temp, "want a finite number")
	}
	if p.TopK < 0 {
		return bad("top_k", p.TopK, "want >= 0 (0 disables it)")
	}
	for _, u := range []struct {
		name string
		v    float32
	}{{"top_p", p.TopP}, {"min_p", p.MinP}, {"typical_p", p.Typical}, {"tfs_z", p.TFSZ}} {
		if err := unit(u.name, u.v); err != nil {
			return err
		}
	}
	if p.MinKeep < 0 {
		return bad("min_keep", p.MinKeep, "want >= 0")
	}
	if p.RepeatLastN < 0 {
		return bad("repeat_last_n", p.RepeatLastN, "want >= 0 (0 disables penalties; pass the context length for the whole context)")
	}
	if !finite(p.RepeatPenalty) || p.RepeatPenalty <= 0 {
		return bad("repeat_penalty", p.RepeatPenalty, "want a finite number > 0 (1 disables it)")
	}
	if !finite(p.FreqPenalty) {
		return bad("frequency_penalty", p.FreqPenalty, "want a finite number")
	}
	if !finite(p.PresentPenalty) {
		return bad("presence_penalty", p.PresentPenalty, "want a finite number")
	}
	if p.Mirostat < 0 || p.Mirostat > 2 {
		return bad("mirostat", p.Mirostat, "want 0 (off), 1 or 2")
	}
	if p.Mirostat != 0 {
		if !finite(p.MirostatTau) || p.MirostatTau < 0 {
			return bad("mirostat_tau", p.MirostatTau, "want a finite number >= 0")
		}
		if !finite(p.MirostatEta) || p.MirostatEta < 0 {
			return bad("mirostat_eta", p.MirostatEta, "want a finite number >= 0")
		}
	}
	return nil
}

// FromParams builds the chain llama.cpp's tools build from p for a
// vocabulary of nVocab tokens; the chain then rejects logit vectors of any
// other length. Samplers that p disables are left out. The orders are:
//
//   - Temp <= 0: penalties, greedy.
//   - Mirostat 1 or 2: penalties, temp, mirostat (m = 100 for version 1).
//   - Otherwise: penalties, top-k, tail-free, typical, top-p, min-p, temp,
//     dist (llama.cpp's default order, with tail-free where it stood before
//     llama.cpp removed it).
//
// Greedy decoding keeps the penalties, like llama.cpp; the filters cannot
// change the argmax, so they are left out. Mirostat keeps the penalties as
// older llama.cpp did (current llama.cpp skips them under mirostat).
// Every generator is seeded with p.Seed. Out-of-range parameters are an
// error naming the parameter (see [Params.Validate]).
func FromParams(p Params, nVocab int) (*Chain, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if nVocab <= 0 || nVocab > math.MaxInt32 {
		return nil, fmt.Errorf("sample: vocabulary size %d: want 1 to %d", nVocab, math.MaxInt32)
	}
	var ss []Sampler
	if p.RepeatLastN > 0 && (p.RepeatPenalty != 1 || p.FreqPenalty != 0 || p.PresentPenalty != 0) {
		ss = append(ss, Penalties(p.RepeatLastN, p.RepeatPenalty, p.FreqPenalty, p.PresentPenalty))
	}
	switch {
	case p.Temp <= 0:
		ss = append(ss, Greedy())
	case p.Mirostat == 1:
		ss = append(ss, Temperature(p.Temp), MirostatV1(p.MirostatTau, p.MirostatEta, mirostatM, nVocab, p.Seed))
	case p.Mirostat == 2:
		ss = append(ss, Temperature(p.Temp), MirostatV2(p.MirostatTau, p.MirostatEta, p.Seed))
	default:
		if p.TopK > 0 {
			ss = append(ss, TopK(p.TopK))
		}
		if p.TFSZ < 1 {
			ss = append(ss, TailFree(p.TFSZ, p.MinKeep))
		}
		if p.Typical < 1 {
			ss = append(ss, Typical(p.Typical, p.MinKeep))
		}
		if p.TopP < 1 {
			ss = append(ss, TopP(p.TopP, p.MinKeep))
		}
		if p.MinP > 0 {
			ss = append(ss, MinP(p.MinP, p.MinKeep))
		}
		ss = append(ss, Temperature(p.Temp), Dist(p.Seed))
	}
	c := NewChain(p.Seed, ss...)
	c.nVocab = nVocab
	return c, nil
}
