//go:build amd64 && !purego

package vec

// AVX2 kernels of the elementwise ops (elementwise_amd64.s). ADD and MUL
// give the generic kernels' results bit for bit; SILU, SWIGLU and GELU use
// the tier's float32 exp (ExpTwin, within 1 ulp of math.Exp), so they
// differ from the generic tier's float64 exp by an ulp or two.

// addAVX2 sets out = x + y for n (a multiple of 8) elements.
//
//go:noescape
func addAVX2(out, x, y *float32, n int)

// mulAVX2 sets out = x * y for n (a multiple of 8) elements.
//
//go:noescape
func mulAVX2(out, x, y *float32, n int)

// siluAVX2 is SiLUTwin for n (a multiple of 8) elements.
//
//go:noescape
func siluAVX2(out, x *float32, n int)

// swigluOAIAVX2 is SwiGLUOAITwin for n (a multiple of 8) elements.
//
//go:noescape
func swigluOAIAVX2(out, gate, v *float32, n int, alpha, limit float32)

// swigluAVX2 is SwiGLUTwin for n (a multiple of 8) elements.
//
//go:noescape
func swigluAVX2(out, gate, v *float32, n int)

// geluAVX2 is GELUTwin for n (a multiple of 8) elements.
//
//go:noescape
func geluAVX2(out, x *float32, n int)

func AddAVX2(out, x, y []float32) {
	n := len(out)
	x, y = x[:n], y[:n]
	n8 := n &^ 7
	if n8 > 0 {
		addAVX2(&out[0], &x[0], &y[0], n8)
	}
	Add(out[n8:], x[n8:], y[n8:])
}

func MulAVX2(out, x, y []float32) {
	n := len(out)
	x, y = x[:n], y[:n]
	n8 := n &^ 7
	if n8 > 0 {
		mulAVX2(&out[0], &x[0], &y[0], n8)
	}
	Mul(out[n8:], x[n8:], y[n8:])
}

func SiLUAVX2(out, x []float32) {
	n := len(out)
	x = x[:n]
	n8 := n &^ 7
	if n8 > 0 {
		siluAVX2(&out[0], &x[0], n8)
	}
	SiLUTwin(out[n8:], x[n8:])
}

func SwiGLUAVX2(out, g, v []float32) {
	n := len(out)
	g, v = g[:n], v[:n]
	n8 := n &^ 7
	if n8 > 0 {
		swigluAVX2(&out[0], &g[0], &v[0], n8)
	}
	SwiGLUTwin(out[n8:], g[n8:], v[n8:])
}

func GELUAVX2(out, x []float32) {
	n := len(out)
	x = x[:n]
	n8 := n &^ 7
	if n8 > 0 {
		geluAVX2(&out[0], &x[0], n8)
	}
	GELUTwin(out[n8:], x[n8:])
}

// SwiGLUOAIAVX2 is gpt-oss's clamped SwiGLU over a row (twin:
// SwiGLUOAITwin, which also finishes the last n % 8 elements).
func SwiGLUOAIAVX2(out, g, v []float32, alpha, limit float32) {
	n := len(out)
	g, v = g[:n], v[:n]
	n8 := n &^ 7
	if n8 > 0 {
		swigluOAIAVX2(&out[0], &g[0], &v[0], n8, alpha, limit)
	}
	SwiGLUOAITwin(out[n8:], g[n8:], v[n8:], alpha, limit)
}
