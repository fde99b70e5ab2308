package reference

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
)

// add computes ADD (ops.Add): dst = a + b, with b repeated to a's shape:
// element (i0, i1, i2, i3) of b used is (i0 % b0, i1 % b1, i2 % b2, i3 % b3).
func add(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Add(src(t, 0), src(t, 1))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	return broadcast(t, func(x, y float64) float64 { return x + y })
}

// mul computes MUL (ops.Mul): dst = a * b, b repeated as in add.
func mul(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Mul(src(t, 0), src(t, 1))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	return broadcast(t, func(x, y float64) float64 { return x * y })
}

// broadcast applies f elementwise to t's sources a and b, b repeated to
// a's shape. The caller has checked that every a.Ne[i] is a multiple of
// b.Ne[i].
func broadcast(t *ops.Tensor, f func(x, y float64) float64) ([]float64, error) {
	a, err := load(src(t, 0), "a")
	if err != nil {
		return nil, err
	}
	b, err := load(src(t, 1), "b")
	if err != nil {
		return nil, err
	}
	out := make([]float64, t.NumElements())
	for i3 := int64(0); i3 < a.ne[3]; i3++ {
		for i2 := int64(0); i2 < a.ne[2]; i2++ {
			for i1 := int64(0); i1 < a.ne[1]; i1++ {
				for i0 := int64(0); i0 < a.ne[0]; i0++ {
					y := b.at(i0%b.ne[0], i1%b.ne[1], i2%b.ne[2], i3%b.ne[3])
					out[index(t.Ne, i0, i1, i2, i3)] = f(a.at(i0, i1, i2, i3), y)
				}
			}
		}
	}
	return out, nil
}

// scale computes SCALE (ops.Scale, ops.ScaleParams): y = Scale*x + Bias.
func scale(t *ops.Tensor) ([]float64, error) {
	p, err := paramsOf[ops.ScaleParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.Scale(src(t, 0), p.Scale, p.Bias)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	s, b := float64(p.Scale), float64(p.Bias)
	return unary(t, func(x float64) float64 { return s*x + b })
}

// silu computes SILU (ops.Silu): y = x / (1 + exp(-x)).
func silu(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Silu(src(t, 0))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	return unary(t, siluOf)
}

// gelu computes GELU (ops.Gelu) with the tanh approximation:
// y = 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))).
func gelu(t *ops.Tensor) ([]float64, error) {
	r, err := ops.Gelu(src(t, 0))
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	c := math.Sqrt(2 / math.Pi)
	return unary(t, func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x)))
	})
}

// siluOf returns x*sigmoid(x) = x / (1 + exp(-x)).
func siluOf(x float64) float64 {
	return x / (1 + math.Exp(-x))
}

// unary applies f to every element of t's source 0, in logical order.
func unary(t *ops.Tensor, f func(float64) float64) ([]float64, error) {
	a, err := load(src(t, 0), "a")
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(a.v))
	for i, x := range a.v {
		out[i] = f(x)
	}
	return out, nil
}

// swiGLU computes SWIGLU (ops.SwiGLU, ops.GLUParams): y = silu(g) * u. With
// one source each row of 2n elements splits into g = row[:n] and
// u = row[n:], swapped when Swapped is set; with two sources g is the first
// and u the second, and Swapped does not apply (ggml's CPU kernel swaps
// only the halves of a single source).
func swiGLU(t *ops.Tensor) ([]float64, error) {
	at, bt := src(t, 0), src(t, 1)
	p, err := paramsOf[ops.GLUParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.SwiGLU(at, bt, p.Swapped)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	if len(t.Src) > 2 {
		return nil, fmt.Errorf("%d sources, want 1 or 2", len(t.Src))
	}
	a, err := load(at, "a")
	if err != nil {
		return nil, err
	}
	if bt != nil {
		b, err := load(bt, "b")
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(a.v))
		for i := range out {
			out[i] = siluOf(a.v[i]) * b.v[i]
		}
		return out, nil
	}
	n := t.Ne[0]
	out := make([]float64, t.NumElements())
	for i3 := int64(0); i3 < a.ne[3]; i3++ {
		for i2 := int64(0); i2 < a.ne[2]; i2++ {
			for i1 := int64(0); i1 < a.ne[1]; i1++ {
				row := a.row(i1, i2, i3)
				g, u := row[:n], row[n:]
				if p.Swapped {
					g, u = u, g
				}
				y := out[index(t.Ne, 0, i1, i2, i3):]
				for i := int64(0); i < n; i++ {
					y[i] = siluOf(g[i]) * u[i]
				}
			}
		}
	}
	return out, nil
}

// swiGLUOAI computes SWIGLU_OAI (ops.SwiGLUOAI, ops.GLUOAIParams):
// x = min(g, Limit), y = clamp(u, -Limit, Limit), out = x*sigmoid(Alpha*x)*(y+1).
func swiGLUOAI(t *ops.Tensor) ([]float64, error) {
	gt, ut := src(t, 0), src(t, 1)
	p, err := paramsOf[ops.GLUOAIParams](t)
	if err != nil {
		return nil, err
	}
	r, err := ops.SwiGLUOAI(gt, ut, p.Alpha, p.Limit)
	if err := check(t, r, err); err != nil {
		return nil, err
	}
	if len(t.Src) != 2 {
		return nil, fmt.Errorf("%d sources, want 2", len(t.Src))
	}
	g, err := load(gt, "g")
	if err != nil {
		return nil, err
	}
	u, err := load(ut, "u")
	if err != nil {
		return nil, err
	}
	limit, alpha := float64(p.Limit), float64(p.Alpha)
	out := make([]float64, len(g.v))
	for i := range out {
		x := math.Min(g.v[i], limit)
		y := math.Max(math.Min(u.v[i], limit), -limit)
		out[i] = x / (1 + math.Exp(-alpha*x)) * (y + 1)
	}
	return out, nil
}
