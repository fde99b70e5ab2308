package reference

import (
	"math"

	"github.com/kernbench/kernbench/ops"
)

// ssmConv computes SSM_CONV (ops.SSMConv). With sx [d_conv-1+n_t, d_inner,
// n_s] and c [d_conv, d_inner]:
//
//	dst[i, t, s] = sum_{j<d_conv} sx[t+j, i, s] * c[j, i]
func ssmConv(t *ops.Tensor) ([]float64, error) {
	sxt, ct := src(t, 0), src(t, 1)
	r, err := ops.SSMConv(sxt, ct)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	sx, err := load(sxt, "sx")
	if err != nil {
		return nil, err
	}
	c, err := load(ct, "c")
	if err != nil {
		return nil, err
	}
	dConv := c.ne[0]
	dInner, nT, nS := t.Ne[0], t.Ne[1], t.Ne[2]
	out := make([]float64, t.NumElements())
	for s := int64(0); s < nS; s++ {
		for tok := int64(0); tok < nT; tok++ {
			for i := int64(0); i < dInner; i++ {
				sum := 0.0
				for j := int64(0); j < dConv; j++ {
					sum += sx.at(tok+j, i, s, 0) * c.at(j, i, 0, 0)
				}
				out[index(t.Ne, i, tok, s, 0)] = sum
			}
		}
	}
	return out, nil
}

// ssmScan computes SSM_SCAN (ops.SSMScan) as ggml's CPU kernel does
// (ggml_compute_forward_ssm_scan_f32). Operands:
//
//	s   [d_state, head_dim, n_head, n_rs]      states
//	x   [head_dim, n_head, n_tok, n_seqs]
//	dt  [n_head, n_tok, n_seqs]
//	A   [d_state, n_head] (Mamba-1) or [1, n_head] (Mamba-2)
//	B,C [d_state, n_group, n_tok, n_seqs]
//	ids [n_seqs], the state slot each sequence starts from
//
// Sequence q starts from state slot ids[q] (an id outside [0, n_rs) is an
// error). Head h reads group g = h / (n_head/n_group) of B and C (ggml's
// repeat_interleave). For each token tok in order, head h and element i of
// the head, with dt' = softplus(dt[h, tok, q]) = ln(1 + e^dt), or dt itself
// when dt > 20:
//
//	a[n]     = A[n, h] (Mamba-1) or A[0, h] (Mamba-2)
//	st[n, i] = st[n, i]*exp(dt'*a[n]) + B[n, g, tok, q] * x[i, h, tok, q] * dt'
//	y[i, h, tok, q] = sum_n st[n, i] * C[n, g, tok, q]
//
// The result is y (x's shape, packed) followed by the final states
// [d_state, head_dim, n_head, n_seqs], sequence q's at position q.
func ssmScan(t *ops.Tensor) ([]float64, error) {
	names := []string{"s", "x", "dt", "A", "B", "C", "ids"}
	var in [7]*ops.Tensor
	for i := range in {
		in[i] = src(t, i)
	}
	r, err := ops.SSMScan(in[ops.ScanState], in[ops.ScanX], in[ops.ScanDt], in[ops.ScanA], in[ops.ScanB], in[ops.ScanC], in[ops.ScanIDs])
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	var v [7]array
	for i := range in {
		if v[i], err = load(in[i], names[i]); err != nil {
			return nil, err
		}
	}
	s0, x, dt, A, B, C, ids := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	dState, headDim, nHead, nRS := s0.ne[0], s0.ne[1], s0.ne[2], s0.ne[3]
	nTok, nSeqs := x.ne[2], x.ne[3]
	nGroup := B.ne[1]
	mamba2 := A.ne[0] == 1

	out := make([]float64, t.NumElements())
	y := out[:x.ne[0]*x.ne[1]*x.ne[2]*x.ne[3]]
	states := array{v: out[len(y):], ne: [4]int64{dState, headDim, nHead, nSeqs}}
	for q := int64(0); q < nSeqs; q++ {
		slot, err := intAt(ids.v[q], nRS, "state slot id")
		if err != nil {
			return nil, err
		}
		st := states.v[index(states.ne, 0, 0, 0, q):][:dState*headDim*nHead]
		copy(st, s0.v[index(s0.ne, 0, 0, 0, slot):][:len(st)])
		for tok := int64(0); tok < nTok; tok++ {
			for h := int64(0); h < nHead; h++ {
				g := h / (nHead / nGroup)
				dtp := softplus(dt.at(h, tok, q, 0))
				for i := int64(0); i < headDim; i++ {
					xdt := x.at(i, h, tok, q) * dtp
					sum := 0.0
					for n := int64(0); n < dState; n++ {
						a := A.at(0, h, 0, 0)
						if !mamba2 {
							a = A.at(n, h, 0, 0)
						}
						j := index(states.ne, n, i, h, 0)
						st[j] = st[j]*math.Exp(dtp*a) + B.at(n, g, tok, q)*xdt
						sum += st[j] * C.at(n, g, tok, q)
					}
					y[index(x.ne, i, h, tok, q)] = sum
				}
			}
		}
	}
	return out, nil
}

// softplus returns ln(1 + e^x), or x itself above 20, where ggml's kernels
// switch to the identity (ggml_compute_softplus_f32).
func softplus(x float64) float64 {
	if x > 20 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
