package cpu

import (
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Elementwise kernels: ADD and MUL with broadcasting, SCALE, SILU, GELU and
// SWIGLU. Every one works row by row; a source row that is not packed f32
// is first gathered (and converted) into a per-worker scratch row.

func init() {
	register(ops.OpAdd, supportsBinary, computeBinary)
	register(ops.OpMul, supportsBinary, computeBinary)
	register(ops.OpScale, supportsUnary, computeUnary)
	register(ops.OpSilu, supportsUnary, computeUnary)
	register(ops.OpGelu, supportsUnary, computeUnary)
	register(ops.OpSwiGLU, supportsSwiGLU, computeSwiGLU)
}

// scratchFor returns a row of scratch space for reading rows of t through
// floatRow, or nil when its rows are packed f32 and need none.
func scratchFor(t *ops.Tensor) []float32 {
	if t.Type == quant.F32 && t.Nb[0] == 4 {
		return nil
	}
	return make([]float32, t.Ne[0])
}

func supportsBinary(t *ops.Tensor) error {
	if err := checkSrcs(t, 2, 2); err != nil {
		return err
	}
	a, y := t.Src[0], t.Src[1]
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkType(y, "b", quant.F32, quant.F16); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if t.Ne != a.Ne {
		return fmt.Errorf("result shape %v differs from a %v", t.Ne, a.Ne)
	}
	for i, n := range y.Ne {
		if n <= 0 || a.Ne[i]%n != 0 {
			return fmt.Errorf("b %v cannot broadcast to a %v", y.Ne, a.Ne)
		}
	}
	return nil
}

// computeBinary computes ADD or MUL: t = a op b, b repeated to a's shape.
func computeBinary(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a, y := t.Src[0], t.Src[1]
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	am, ym, tm := mem(a), mem(y), mem(t)
	add := t.Op == ops.OpAdd
	b.pool.parallelFor(n, rowGrain(t.Ne[0]), func(_, lo, hi int) {
		sa, sy := scratchFor(a), scratchFor(y)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			x := floatRow(a, am, i1, i2, i3, sa)
			w := floatRow(y, ym, i1%y.Ne[1], i2%y.Ne[2], i3%y.Ne[3], sy)
			out := outRow(t, tm, i1, i2, i3)
			// Each repeat of b's row covers len(w) elements of a's.
			for k := 0; k < len(out); k += len(w) {
				xs, os := x[k:k+len(w)], out[k:k+len(w)]
				if add {
					for j, v := range w {
						os[j] = xs[j] + v
					}
				} else {
					for j, v := range w {
						os[j] = xs[j] * v
					}
				}
			}
		}
	})
	return nil
}

func supportsUnary(t *ops.Tensor) error {
	if err := supportsUnaryShape(t); err != nil {
		return err
	}
	if t.Op == ops.OpScale {
		if _, ok := t.Params.(ops.ScaleParams); !ok {
			return fmt.Errorf("params are %T, want ops.ScaleParams", t.Params)
		}
	}
	return nil
}

// computeUnary computes SCALE, SILU or GELU.
func computeUnary(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a := t.Src[0]
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	var f func(out, x []float32)
	work := int64(1)
	switch t.Op {
	case ops.OpScale:
		p := t.Params.(ops.ScaleParams)
		f = func(out, x []float32) { scaleRow(out, x, p.Scale, p.Bias) }
	case ops.OpSilu:
		f, work = siluRow, 8
	case ops.OpGelu:
		f, work = geluRow, 8
	default:
		return fmt.Errorf("no unary kernel for %v", t.Op)
	}
	am, tm := mem(a), mem(t)
	b.pool.parallelFor(n, rowGrain(work*t.Ne[0]), func(_, lo, hi int) {
		sa := scratchFor(a)
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			f(outRow(t, tm, i1, i2, i3), floatRow(a, am, i1, i2, i3, sa))
		}
	})
	return nil
}

// scaleRow sets out = s*x + bias.
func scaleRow(out, x []float32, s, bias float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = v*s + bias
	}
}

// silu returns x*sigmoid(x) = x/(1+exp(-x)) in float32, as ggml does.
func silu(x float32) float32 {
	return x / (1 + float32(math.Exp(float64(-x))))
}

// siluRow sets out = silu(x).
func siluRow(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = silu(v)
	}
}

// GELU's tanh approximation constants.
const (
	geluCoefA    = 0.044715
	sqrt2OverPi  = 0.79788456080286535587989211986876
	geluTanhArgs = float32(sqrt2OverPi)
)

// gelu returns the tanh approximation of GELU,
// 0.5*x*(1 + tanh(sqrt(2/pi)*x*(1 + 0.044715*x²))), computed in float32
// with a float64 tanh. ggml's CPU kernel reads a table indexed by x rounded
// to f16 instead (and returns 0 below -10 and x above 10), so its results
// carry f16 rounding that ours do not.
func gelu(x float32) float32 {
	u := geluTanhArgs * x * (1 + geluCoefA*x*x)
	return 0.5 * x * (1 + float32(math.Tanh(float64(u))))
}

// geluRow sets out = gelu(x).
func geluRow(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = gelu(v)
	}
}

func supportsSwiGLU(t *ops.Tensor) error {
	if err := checkSrcs(t, 1, 2); err != nil {
		return err
	}
	a, u := t.Src[0], srcAt(t, 1)
	if err := checkType(a, "a", quant.F32); err != nil {
		return err
	}
	if err := checkOut(t, quant.F32); err != nil {
		return err
	}
	if _, ok := t.Params.(ops.GLUParams); !ok {
		return fmt.Errorf("params are %T, want ops.GLUParams", t.Params)
	}
	if u != nil {
		if err := checkType(u, "b", quant.F32); err != nil {
			return err
		}
		if t.Ne != a.Ne || u.Ne != a.Ne {
			return fmt.Errorf("shapes differ: result %v, a %v, b %v", t.Ne, a.Ne, u.Ne)
		}
		return nil
	}
	if !a.HasContiguousRows() {
		return fmt.Errorf("a rows are not packed")
	}
	want := a.Ne
	want[0] /= 2
	if a.Ne[0]%2 != 0 || t.Ne != want {
		return fmt.Errorf("result shape %v, want %v (half of a %v)", t.Ne, want, a.Ne)
	}
	return nil
}

// computeSwiGLU computes silu(g)*u, with g and u the two halves of each row
// of a (one source; swapped puts u first) or the rows of a and b.
func computeSwiGLU(b *Backend, t *ops.Tensor) error {
	if t.NumElements() == 0 {
		return nil
	}
	a, u := t.Src[0], srcAt(t, 1)
	swapped := t.Params.(ops.GLUParams).Swapped
	n, err := rowCount(t)
	if err != nil {
		return err
	}
	am, tm := mem(a), mem(t)
	var um []byte
	if u != nil {
		um = mem(u)
	}
	nc := t.Ne[0]
	b.pool.parallelFor(n, rowGrain(8*nc), func(_, lo, hi int) {
		sa := scratchFor(a)
		var su []float32
		if u != nil {
			su = scratchFor(u)
		}
		for r := lo; r < hi; r++ {
			i1, i2, i3 := rowIndices(t.Ne, int64(r))
			var g, v []float32
			if u != nil {
				g = floatRow(a, am, i1, i2, i3, sa)
				v = floatRow(u, um, i1, i2, i3, su)
			} else {
				row := floatRow(a, am, i1, i2, i3, sa)
				g, v = row[:nc], row[nc:]
				if swapped {
					g, v = v, g
				}
			}
			out := outRow(t, tm, i1, i2, i3)
			g, v = g[:len(out)], v[:len(out)]
			for i, x := range g {
				out[i] = silu(x) * v[i]
			}
		}
	})
	return nil
}
