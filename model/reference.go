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
// Attention is causal over the whole sequence (over the window in the
// sliding-window layers of a model that has them); a recurrent model runs
// token by token from a zero state. It is the oracle for the runner, for
// small models only, and follows each architecture's formulas as
// llama.cpp's graph does, written out per token.
func ReferenceForward(m *Model, tokens []int32) ([][]float64, error) {
	return referenceForward(m, tokens, refOptions{})
}

// ReferenceForwardWindow is ReferenceForward with a sliding window of nSWA
// positions (0: none) on every attention layer: the token at position p
// attends to positions p-nSWA+1 .. p.
func ReferenceForwardWindow(m *Model, tokens []int32, nSWA int) ([][]float64, error) {
	return referenceForward(m, tokens, refOptions{nSWA: nSWA})
}

// ReferenceForwardAt is ReferenceForward with the tokens at the given
// positions (increasing; rope and windows use them, attention is still
// causal by order), as after a context shift.
func ReferenceForwardAt(m *Model, tokens, pos []int32) ([][]float64, error) {
	if len(pos) != len(tokens) {
		return nil, fmt.Errorf("model: %d positions for %d tokens", len(pos), len(tokens))
	}
	return referenceForward(m, tokens, refOptions{pos: pos})
}

// refOptions vary the reference forward.
type refOptions struct {
	// nSWA > 0 is a sliding window over every attention layer.
	nSWA int
	// pos holds the tokens' positions (nil: 0, 1, ...).
	pos []int32
	// round, when set, is applied to each token's query, key and value
	// rows (all heads) after rope. Tests use it to model the rounding of
	// a cache type, so that the runner can be checked tightly against
	// the rounded computation as well as loosely against the exact one.
	round func(q, k, v []float64)
}

// refReader reads tensors as float64, nil for a nil tensor.
type refReader struct{ err error }

func (r *refReader) read(t *ops.Tensor) []float64 {
	if t == nil || r.err != nil {
		return nil
	}
	v, err := reference.Read(t)
	if err != nil {
		r.err = fmt.Errorf("model: reference: %w", err)
	}
	return v
}

func referenceForward(m *Model, tokens []int32, opt refOptions) ([][]float64, error) {
	h := m.Hparams
	w := &m.Weights
	if m.closed.Load() {
		return nil, errClosed
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("model: reference forward of no tokens")
	}
	if opt.nSWA < 0 {
		return nil, fmt.Errorf("model: negative window %d", opt.nSWA)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= h.NVocab {
			return nil, fmt.Errorf("model: token %d is %d, outside the vocabulary [0, %d)", i, t, h.NVocab)
		}
	}
	if opt.pos == nil {
		opt.pos = make([]int32, len(tokens))
		for i := range opt.pos {
			opt.pos[i] = int32(i)
		}
	}
	total := 2 * int64(h.NEmbd) * int64(h.NVocab)
	for il := range w.Layers {
		for _, s := range w.Layers[il].layerTensors(h, il) {
			if *s.dst != nil {
				total += (*s.dst).NumElements()
			}
		}
	}
	if total > maxReferenceWeights {
		return nil, fmt.Errorf("model: %d weights is too many for the float64 reference (limit %d)", total, int64(maxReferenceWeights))
	}
	var r refReader
	emb := r.read(w.TokEmbd)
	if r.err != nil {
		return nil, r.err
	}
	n, d := len(tokens), h.NEmbd
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = append([]float64(nil), emb[int(tok)*d:(int(tok)+1)*d]...)
	}
	var err error
	switch {
	case h.SSMGroups > 0:
		err = refMamba2(m, x)
	case h.Recurrent():
		err = refMamba(m, x)
	default:
		err = refTransformer(m, x, opt)
	}
	if err != nil {
		return nil, err
	}
	outNorm, out := r.read(w.OutputNorm), r.read(w.Output)
	if r.err != nil {
		return nil, r.err
	}
	logits := make([][]float64, n)
	for t := range n {
		logits[t] = matVec(out, rmsNormMul(x[t], outNorm, float64(h.RMSEps)), h.NVocab)
	}
	return logits, nil
}

// refTransformer runs the attention layers on x (one row per token) in
// place.
func refTransformer(m *Model, x [][]float64, opt refOptions) error {
	h := m.Hparams
	w := &m.Weights
	a, _ := archOf(h.Arch)
	var r refReader
	freqs := r.read(w.RopeFreqs)
	n, d := len(x), h.NEmbd
	hdK, hdV := h.HeadDimK, h.HeadDimV
	group := h.NHead / h.NHeadKV
	scale := 1 / math.Sqrt(float64(hdK))
	rp := ops.RopeParams{
		NDims: h.NRot, Mode: h.RopeMode, NCtxOrig: h.RopeNCtxOrig,
		FreqBase: h.RopeFreqBase, FreqScale: h.RopeFreqScale, ExtFactor: h.RopeExtFactor,
		AttnFactor: h.RopeAttnFactor, BetaFast: h.RopeBetaFast, BetaSlow: h.RopeBetaSlow,
	}
	for il := range w.Layers {
		l := &w.Layers[il]
		attnNorm, wq, wk, wv, wo := r.read(l.AttnNorm), r.read(l.Wq), r.read(l.Wk), r.read(l.Wv), r.read(l.Wo)
		bq, bk, bv, bo, sinks := r.read(l.Bq), r.read(l.Bk), r.read(l.Bv), r.read(l.Bo), r.read(l.Sinks)
		ffnNorm := r.read(l.FFNNorm)
		if r.err != nil {
			return r.err
		}
		window := opt.nSWA
		if h.LayerSWA(il) {
			window = h.NSWA
		}
		q := make([][]float64, n)
		k := make([][]float64, n)
		v := make([][]float64, n)
		for t := range n {
			hn := rmsNormMul(x[t], attnNorm, float64(h.RMSEps))
			q[t] = addVec(matVec(wq, hn, h.NHead*hdK), bq)
			k[t] = addVec(matVec(wk, hn, h.NHeadKV*hdK), bk)
			v[t] = addVec(matVec(wv, hn, h.NHeadKV*hdV), bv)
			ropeHeads(q[t], hdK, opt.pos[t], rp, freqs)
			ropeHeads(k[t], hdK, opt.pos[t], rp, freqs)
			if opt.round != nil {
				opt.round(q[t], k[t], v[t])
			}
		}
		var ffn func(hn []float64) []float64
		if h.NExpert > 0 {
			ffn, r.err = refMoE(h, a, l)
		} else {
			wg, wu, wd := r.read(l.FFNGate), r.read(l.FFNUp), r.read(l.FFNDown)
			ffn = func(hn []float64) []float64 {
				g, u := matVec(wg, hn, h.NFF), matVec(wu, hn, h.NFF)
				for i := range g {
					g[i] = silu64(g[i]) * u[i]
				}
				return matVec(wd, g, d)
			}
		}
		if r.err != nil {
			return r.err
		}
		for t := range n {
			o := make([]float64, h.NHead*hdV)
			var keys []int
			for j := 0; j <= t; j++ {
				if window == 0 || int64(opt.pos[t])-int64(opt.pos[j]) < int64(window) {
					keys = append(keys, j)
				}
			}
			for hd := range h.NHead {
				kh := hd / group
				qh := q[t][hd*hdK : (hd+1)*hdK]
				s := make([]float64, len(keys))
				best := math.Inf(-1)
				for i, j := range keys {
					s[i] = scale * dot(qh, k[j][kh*hdK:(kh+1)*hdK])
					best = math.Max(best, s[i])
				}
				if sinks != nil {
					best = math.Max(best, sinks[hd])
				}
				sum := 0.0
				for i := range s {
					s[i] = math.Exp(s[i] - best)
					sum += s[i]
				}
				if sinks != nil {
					sum += math.Exp(sinks[hd] - best)
				}
				oh := o[hd*hdV : (hd+1)*hdV]
				for i, j := range keys {
					p := s[i] / sum
					for e, ve := range v[j][kh*hdV : (kh+1)*hdV] {
						oh[e] += p * ve
					}
				}
			}
			attn := addVec(matVec(wo, o, d), bo)
			for i := range x[t] {
				x[t][i] += attn[i]
			}
			f := ffn(rmsNormMul(x[t], ffnNorm, float64(h.RMSEps)))
			for i := range x[t] {
				x[t][i] += f[i]
			}
		}
	}
	return nil
}

// refMoE returns layer l's mixture of experts as a function of the
// normalized input: the router's logits (plus bias), the NExpertUsed
// largest (ties to the lower index, as the stable ARGSORT), their weights
// (the softmax of the chosen logits when normalized, else their entries of
// the softmax of all logits; times the scale), and the weighted sum of the
// chosen experts' SwiGLU (gpt-oss: clamped) feed-forwards, biases added.
func refMoE(h Hparams, a arch, l *Layer) (func(hn []float64) []float64, error) {
	var r refReader
	gi, gib := r.read(l.FFNGateInp), r.read(l.FFNGateInpB)
	ge, ue, de := r.read(l.FFNGateExps), r.read(l.FFNUpExps), r.read(l.FFNDownExps)
	geb, ueb, deb := r.read(l.FFNGateExpsB), r.read(l.FFNUpExpsB), r.read(l.FFNDownExpsB)
	if r.err != nil {
		return nil, r.err
	}
	d, f, nE := h.NEmbd, h.NFFExp, h.NExpert
	part := func(w []float64, e, n int) []float64 {
		if w == nil {
			return nil
		}
		return w[e*n : (e+1)*n]
	}
	return func(hn []float64) []float64 {
		logits := addVec(matVec(gi, hn, nE), gib)
		chosen := make([]int, 0, h.NExpertUsed)
		used := make([]bool, nE)
		for range h.NExpertUsed {
			best := -1
			for e := range nE {
				if !used[e] && (best < 0 || logits[e] > logits[best]) {
					best = e
				}
			}
			used[best] = true
			chosen = append(chosen, best)
		}
		wts := make([]float64, len(chosen))
		if h.ExpertWeightsNorm {
			sel := make([]float64, len(chosen))
			for i, e := range chosen {
				sel[i] = logits[e]
			}
			copy(wts, softmax64(sel))
		} else {
			p := softmax64(logits)
			for i, e := range chosen {
				wts[i] = p[e]
			}
		}
		if s := float64(h.ExpertWeightsScale); s != 0 {
			for i := range wts {
				wts[i] *= s
			}
		}
		out := make([]float64, d)
		for i, e := range chosen {
			g := addVec(matVec(part(ge, e, d*f), hn, f), part(geb, e, f))
			u := addVec(matVec(part(ue, e, d*f), hn, f), part(ueb, e, f))
			for j := range g {
				if a.oaiSwiGLU {
					xg := math.Min(g[j], oaiSwiGLULimit)
					yu := math.Max(math.Min(u[j], oaiSwiGLULimit), -oaiSwiGLULimit)
					g[j] = xg / (1 + math.Exp(-float64(float32(oaiSwiGLUAlpha))*xg)) * (yu + 1)
				} else {
					g[j] = silu64(g[j]) * u[j]
				}
			}
			y := addVec(matVec(part(de, e, f*d), g, d), part(deb, e, d))
			for j := range out {
				out[j] += wts[i] * y[j]
			}
		}
		return out
	}, nil
}

// refMamba runs Mamba-1 layers on x (one sequence, token by token from
// zero states), in place: per token and layer, RMS norm, in_proj into x
// and z, the causal depthwise conv over the last d_conv inputs of each
// channel plus its bias, SiLU, x_proj into dt, B and C, dt_proj plus its
// bias, softplus(dt), the selective scan state = state*exp(dt*A) + B*x*dt
// and y = state·C, y + x*D, times SiLU(z), out_proj, the residual.
func refMamba(m *Model, x [][]float64) error {
	h := m.Hparams
	w := &m.Weights
	di, ds, dtr, dc := h.SSMInner, h.SSMState, h.SSMDtRank, h.SSMConv
	for il := range w.Layers {
		l := &w.Layers[il]
		var r refReader
		norm, in, conv, convB := r.read(l.AttnNorm), r.read(l.SSMIn), r.read(l.SSMConv1D), r.read(l.SSMConv1DB)
		xp, dtw, dtb, A, D, out := r.read(l.SSMX), r.read(l.SSMDt), r.read(l.SSMDtB), r.read(l.SSMA), r.read(l.SSMD), r.read(l.SSMOut)
		if r.err != nil {
			return r.err
		}
		past := make([]float64, di*dc) // per channel, the last d_conv inputs
		state := make([]float64, di*ds)
		for t := range x {
			hn := rmsNormMul(x[t], norm, float64(h.RMSEps))
			xz := matVec(in, hn, 2*di)
			xc := make([]float64, di)
			for i := range di {
				win := past[i*dc : (i+1)*dc]
				copy(win, win[1:])
				win[dc-1] = xz[i]
				s := convB[i]
				for j := range dc {
					s += win[j] * conv[i*dc+j]
				}
				xc[i] = silu64(s)
			}
			xdb := matVec(xp, xc, dtr+2*ds)
			dt := addVec(matVec(dtw, xdb[:dtr], di), dtb)
			B, C := xdb[dtr:dtr+ds], xdb[dtr+ds:]
			y := make([]float64, di)
			for i := range di {
				dtp := dt[i]
				if dtp <= 20 {
					dtp = math.Log1p(math.Exp(dtp))
				}
				st := state[i*ds : (i+1)*ds]
				for s := range ds {
					st[s] = st[s]*math.Exp(dtp*A[i*ds+s]) + B[s]*xc[i]*dtp
					y[i] += st[s] * C[s]
				}
				y[i] = (y[i] + xc[i]*D[i]) * silu64(xz[di+i])
			}
			o := matVec(out, y, h.NEmbd)
			for i := range x[t] {
				x[t][i] += o[i]
			}
		}
	}
	return nil
}

// refMamba2 runs Mamba-2 layers on x (one sequence, token by token from
// zero states), in place: per token and layer, RMS norm, in_proj into z,
// x|B|C and dt; the causal depthwise conv over x|B|C plus its bias, SiLU;
// per head h (group g = h/(n_head/n_group)): dt' = softplus(dt + bias),
// state = state*exp(dt'*A_h) + B_g*x*dt', y = state·C_g; y + x*D_h, times
// SiLU(z); RMS norm per group of d_inner/n_group times the norm weight;
// out_proj; the residual.
func refMamba2(m *Model, x [][]float64) error {
	h := m.Hparams
	w := &m.Weights
	di, ds, dc, nh, ng := h.SSMInner, h.SSMState, h.SSMConv, h.SSMDtRank, h.SSMGroups
	ch, hd, gs := h.SSMConvChannels(), h.SSMInner/h.SSMDtRank, h.SSMInner/h.SSMGroups
	for il := range w.Layers {
		l := &w.Layers[il]
		var r refReader
		norm, in, conv, convB := r.read(l.AttnNorm), r.read(l.SSMIn), r.read(l.SSMConv1D), r.read(l.SSMConv1DB)
		dtb, A, D, gnorm, out := r.read(l.SSMDtB), r.read(l.SSMA), r.read(l.SSMD), r.read(l.SSMNorm), r.read(l.SSMOut)
		if r.err != nil {
			return r.err
		}
		past := make([]float64, ch*dc)
		state := make([]float64, nh*hd*ds)
		for t := range x {
			hn := rmsNormMul(x[t], norm, float64(h.RMSEps))
			proj := matVec(in, hn, di+ch+nh)
			z, xbc, dtRaw := proj[:di], proj[di:di+ch], proj[di+ch:]
			xc := make([]float64, ch)
			for i := range ch {
				win := past[i*dc : (i+1)*dc]
				copy(win, win[1:])
				win[dc-1] = xbc[i]
				s := convB[i]
				for j := range dc {
					s += win[j] * conv[i*dc+j]
				}
				xc[i] = silu64(s)
			}
			xs, B, C := xc[:di], xc[di:di+ng*ds], xc[di+ng*ds:]
			y := make([]float64, di)
			for hh := range nh {
				g := hh / (nh / ng)
				dtp := dtRaw[hh] + dtb[hh]
				if dtp <= 20 {
					dtp = math.Log1p(math.Exp(dtp))
				}
				decay := math.Exp(dtp * A[hh])
				for j := range hd {
					xv := xs[hh*hd+j]
					st := state[(hh*hd+j)*ds : (hh*hd+j+1)*ds]
					sum := 0.0
					for s := range ds {
						st[s] = st[s]*decay + B[g*ds+s]*xv*dtp
						sum += st[s] * C[g*ds+s]
					}
					y[hh*hd+j] = (sum + xv*D[hh]) * silu64(z[hh*hd+j])
				}
			}
			for g := range ng {
				copy(y[g*gs:(g+1)*gs], rmsNormMul(y[g*gs:(g+1)*gs], gnorm[g*gs:(g+1)*gs], float64(h.RMSEps)))
			}
			o := matVec(out, y, h.NEmbd)
			for i := range x[t] {
				x[t][i] += o[i]
			}
		}
	}
	return nil
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

// addVec adds b to x in place (nothing for a nil b) and returns x.
func addVec(x, b []float64) []float64 {
	for i := range b {
		x[i] += b[i]
	}
	return x
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func silu64(x float64) float64 { return x / (1 + math.Exp(-x)) }

func softmax64(x []float64) []float64 {
	best := math.Inf(-1)
	for _, v := range x {
		best = math.Max(best, v)
	}
	out := make([]float64, len(x))
	sum := 0.0
	for i, v := range x {
		out[i] = math.Exp(v - best)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
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

// ropeHeads rotates, in each head of size hd, the pairs of the first
// p.NDims dimensions (adjacent pairs (2i, 2i+1) in normal mode, halves
// (i, i+NDims/2) in NeoX mode) by the angle and magnitude ROPE gives them
// at position pos (reference.RopeAngle, YaRN included), with pair i's
// frequency divided by ff[i] when ff is given.
func ropeHeads(x []float64, hd int, pos int32, p ops.RopeParams, ff []float64) {
	half := p.NDims / 2
	for h0 := 0; h0 < len(x); h0 += hd {
		for i := range half {
			f := 1.0
			if ff != nil {
				f = ff[i]
			}
			theta, mscale := reference.RopeAngle(p, float64(pos), i, f)
			c, s := math.Cos(theta), math.Sin(theta)
			j0, j1 := h0+2*i, h0+2*i+1
			if p.Mode == ops.RopeNeoX {
				j0, j1 = h0+i, h0+i+half
			}
			x0, x1 := x[j0], x[j1]
			x[j0] = (x0*c - x1*s) * mscale
			x[j1] = (x0*s + x1*c) * mscale
		}
	}
}
