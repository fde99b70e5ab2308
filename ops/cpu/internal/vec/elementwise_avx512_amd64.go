//go:build amd64 && !purego

package vec

// AVX-512 kernels of the elementwise ops (elementwise_avx512_amd64.s):
// the AVX2 kernels in zmm registers with a masked tail, so each takes the
// whole row and equals the AVX2 kernel's twin bit for bit. They need
// AVX-512 F.

//go:noescape
func addAVX512(out, x, y *float32, n int)

//go:noescape
func mulAVX512(out, x, y *float32, n int)

//go:noescape
func siluAVX512(out, x *float32, n int)

//go:noescape
func swigluAVX512(out, gate, v *float32, n int)

// swigluStreamAVX512 is swigluAVX512 with non-temporal stores; out is
// 64-byte aligned.
//
//go:noescape
func swigluStreamAVX512(out, gate, v *float32, n int)

//go:noescape
func geluAVX512(out, x *float32, n int)

//go:noescape
func swigluOAIAVX512(out, gate, v *float32, n int, alpha, limit float32)

// AddAVX512 sets out = x + y (twin: Add).
func AddAVX512(out, x, y []float32) {
	n := len(out)
	if n > 0 {
		x, y = x[:n], y[:n]
		addAVX512(&out[0], &x[0], &y[0], n)
	}
}

// MulAVX512 sets out = x * y (twin: Mul).
func MulAVX512(out, x, y []float32) {
	n := len(out)
	if n > 0 {
		x, y = x[:n], y[:n]
		mulAVX512(&out[0], &x[0], &y[0], n)
	}
}

// SiLUAVX512 is SiLU with the tier's float32 exp (twin: SiLUTwin).
func SiLUAVX512(out, x []float32) {
	n := len(out)
	if n > 0 {
		x = x[:n]
		siluAVX512(&out[0], &x[0], n)
	}
}

// SwiGLUAVX512 is SwiGLU with the tier's float32 exp (twin: SwiGLUTwin).
func SwiGLUAVX512(out, g, v []float32) {
	n := len(out)
	if n > 0 {
		g, v = g[:n], v[:n]
		swigluAVX512(&out[0], &g[0], &v[0], n)
	}
}

// GELUAVX512 is GELU's tanh form with the tier's float32 exp (twin:
// GELUTwin).
func GELUAVX512(out, x []float32) {
	n := len(out)
	if n > 0 {
		x = x[:n]
		geluAVX512(&out[0], &x[0], n)
	}
}

// SwiGLUOAIAVX512 is gpt-oss's clamped SwiGLU over a row (twin:
// SwiGLUOAITwin).
func SwiGLUOAIAVX512(out, g, v []float32, alpha, limit float32) {
	n := len(out)
	if n > 0 {
		g, v = g[:n], v[:n]
		swigluOAIAVX512(&out[0], &g[0], &v[0], n, alpha, limit)
	}
}

// SwiGLUStreamAVX512 is SwiGLUAVX512 with streaming stores (see
// AddStreamAVX2).
func SwiGLUStreamAVX512(out, g, v []float32) {
	n := len(out)
	if n < 16 || !aligned(&out[0], 64) {
		SwiGLUAVX512(out, g, v)
		return
	}
	g, v = g[:n], v[:n]
	swigluStreamAVX512(&out[0], &g[0], &v[0], n)
}
