package model

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/reference"
)

// maxReferenceWeights bounds the weight elements ReferenceForward widens
// to float64 (2^27 elements, 1 GiB), as it is meant for small models.
const maxReferenceWeights = 1 << 27

// ReferenceForward runs m on one sequence of tokens at positions 0, 1, ...
// in float64 from the dequantized weights, with plain loops and no cache,
// and returns the logits of every token (len(tokens) rows of n_vocab).
// Attention is causal over the whole sequence. It is the oracle for the
// runner, for small models only.
func ReferenceForward(m *Model, tokens []int32) ([][]float64, error) {
	return referenceForward(m, tokens, refOptions{})
}

// ReferenceForwardWindow is ReferenceForward with a sliding window of nSWA
// positions (0: none): the token at position p attends to positions
// p-nSWA+1 .. p.
func ReferenceForwardWindow(m *Model, tokens []int32, nSWA int) ([][]float64, error) {
	return referenceForward(m, tokens, refOptions{nSWA: nSWA})
}

// refOptions vary the reference forward.
type refOptions struct {
	// nSWA > 0 is a sliding window.
	nSWA int
	// round, when set, is applied to each token's query, key and value
	// rows (all heads) after rope. Tests use it to model the rounding of
	// a cache type, so that the runner can be checked tightly against
	// the rounded computation as well as loosely against the exact one.
	round func(q, k, v []float64)
}

func referenceForward(m *Model, tokens []int32, opt refOptions) ([][]float64, error) {
	nSWA := opt.nSWA
	h := m.Hparams
	w := &m.Weights
	if m.closed.Load() {
		return nil, errClosed
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("model: reference forward of no tokens")
	}
	if nSWA < 0 {
		return nil, fmt.Errorf("model: negative window %d", nSWA)
	}
	if h.RopeExtFactor != 0 {
		return nil, fmt.Errorf("model: the reference forward does not implement YaRN rope scaling")
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= h.NVocab {
			return nil, fmt.Errorf("model: token %d is %d, outside the vocabulary [0, %d)", i, t, h.NVocab)
		}
	}
	total := 2 * int64(h.NEmbd) * int64(h.NVocab)
	for _, l := range w.Layers {
		for _, t := range []*ops.Tensor{l.Wq, l.Wk, l.Wv, l.Wo, l.FFNGate, l.FFNUp, l.FFNDown} {
			total += t.NumElements()
		}
	}
	if total > maxReferenceWeights {
		return nil, fmt.Errorf("model: %d weights is too many for the float64 reference (limit %d)", total, int64(maxReferenceWeights))
	}

	read := func(t *ops.Tensor) ([]float64, error) {
		v, err := reference.Read(t)
		if err != nil {
			return nil, fmt.Errorf("model: reference: %w", err)
		}
		return v, nil
	}
	emb, err := read(w.TokEmbd)
	if err != nil {
		return nil, err
	}
	var freqs []float64
	if w.RopeFreqs != nil {
		if freqs, err = read(w.RopeFreqs); err != nil {
			return nil, err
		}
	}
	n, d := len(tokens), h.NEmbd
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = append([]float64(nil), emb[int(tok)*d:(int(tok)+1)*d]...)
	}
	hdK, hdV := h.HeadDimK, h.HeadDimV
	group := h.NHead / h.NHeadKV
	scale := 1 / math.Sqrt(float64(hdK))
	for _, l := range w.Layers {
		var ws [9][]float64
		for i, t := range []*ops.Tensor{l.AttnNorm, l.Wq, l.Wk, l.Wv, l.Wo, l.FFNNorm, l.FFNGate, l.FFNUp, l.FFNDown} {
			if ws[i], err = read(t); err != nil {
				return nil, err
			}
		}
		attnNorm, wq, wk, wv, wo, ffnNorm, wg, wu, wd := ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6], ws[7], ws[8]
		q := make([][]float64, n)
		k := make([][]float64, n)
		v := make([][]float64, n)
		for t := range n {
			hn := rmsNormMul(x[t], attnNorm, float64(h.RMSEps))
			q[t] = matVec(wq, hn, h.NHead*hdK)
			k[t] = matVec(wk, hn, h.NHeadKV*hdK)
			v[t] = matVec(wv, hn, h.NHeadKV*hdV)
			ropeHeads(q[t], hdK, t, h, freqs)
			ropeHeads(k[t], hdK, t, h, freqs)
			if opt.round != nil {
				opt.round(q[t], k[t], v[t])
			}
		}
		for t := range n {
			o := make([]float64, h.NHead*hdV)
			lo := 0
			if nSWA > 0 {
				lo = max(0, t-nSWA+1)
			}
			for hd := range h.NHead {
				kh := hd / group
				qh := q[t][hd*hdK : (hd+1)*hdK]
				s := make([]float64, t+1-lo)
				best := math.Inf(-1)
				for j := lo; j <= t; j++ {
					s[j-lo] = scale * dot(qh, k[j][kh*hdK:(kh+1)*hdK])
					best = math.Max(best, s[j-lo])
				}
				sum := 0.0
				for i := range s {
					s[i] = math.Exp(s[i] - best)
					sum += s[i]
				}
				oh := o[hd*hdV : (hd+1)*hdV]
				for j := lo; j <= t; j++ {
					p := s[j-lo] / sum
					for e, ve := range v[j][kh*hdV : (kh+1)*hdV] {
						oh[e] += p * ve
					}
				}
			}
			attn := matVec(wo, o, d)
			for i := range x[t] {
				x[t][i] += attn[i]
			}
			hn := rmsNormMul(x[t], ffnNorm, float64(h.RMSEps))
			g := matVec(wg, hn, h.NFF)
			u := matVec(wu, hn, h.NFF)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			f := matVec(wd, g, d)
			for i := range x[t] {
				x[t][i] += f[i]
			}
		}
	}
	outNorm, err := read(w.OutputNorm)
	if err != nil {
		return nil, err
	}
	out, err := read(w.Output)
	if err != nil {
		return nil, err
	}
	logits := make([][]float64, n)
	for t := range n {
		logits[t] = matVec(out, rmsNormMul(x[t], outNorm, float64(h.RMSEps)), h.NVocab)
	}
	return logits, nil
}

// matVec returns W·x for W stored as ggml [len(x), rows]: row i is
// W[i*len(x) : (i+1)*len(x)].
func matVec(w, x []float64, rows int) []float64 {
	y := make([]float64, rows)
	for i := range y {
		y[i] = dot(w[i*len(x):(i+1)*len(x)], x)
	}
	return y
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// rmsNormMul returns x / sqrt(mean(x²) + eps) * w.
func rmsNormMul(x, w []float64, eps float64) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * r * w[i]
	}
	return y
}

// ropeHeads rotates, in each head of size hd, the adjacent pairs (2i,
// 2i+1) for i < NRot/2 by pos * FreqScale * FreqBase^(-2i/NRot) / ff[i]
// (normal mode without YaRN), scaled by AttnFactor as ggml's rope.
func ropeHeads(x []float64, hd, pos int, h Hparams, ff []float64) {
	for h0 := 0; h0 < len(x); h0 += hd {
		for i := 0; i < h.NRot/2; i++ {
			theta := float64(pos) * float64(h.RopeFreqScale) * math.Pow(float64(h.RopeFreqBase), -2*float64(i)/float64(h.NRot))
			if ff != nil {
				theta /= ff[i]
			}
			c, s := math.Cos(theta), math.Sin(theta)
			a := float64(h.RopeAttnFactor)
			x0, x1 := x[h0+2*i], x[h0+2*i+1]
			x[h0+2*i] = (x0*c - x1*s) * a
			x[h0+2*i+1] = (x0*s + x1*c) * a
		}
	}
}
