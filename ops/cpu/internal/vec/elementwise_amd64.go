//go:build amd64 && !purego

package vec

import "unsafe"

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

// addStreamAVX2 is addAVX2 with non-temporal stores; out is 32-byte
// aligned.
//
//go:noescape
func addStreamAVX2(out, x, y *float32, n int)

// mulStreamAVX2 is mulAVX2 with non-temporal stores; out is 32-byte
// aligned.
//
//go:noescape
func mulStreamAVX2(out, x, y *float32, n int)

// swigluStreamAVX2 is swigluAVX2 with non-temporal stores; out is 32-byte
// aligned.
//
//go:noescape
func swigluStreamAVX2(out, gate, v *float32, n int)

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

// The streaming kernels below give their plain kernel's results bit for
// bit, written with non-temporal stores: around the caches, without
// reading each output line first. They are for outputs too large to be
// read back from the caches anyway (an op whose streams exceed the last
// level cache), where the plain store's read of the line costs a third
// of the memory traffic. Each ends with SFENCE, so its stores are
// ordered before whatever the caller does next. Where out is not aligned
// for the vector stores, they are the plain kernels.

// aligned reports whether p is a multiple of a bytes (a power of 2).
func aligned(p *float32, a uintptr) bool { return uintptr(unsafe.Pointer(p))&(a-1) == 0 }

// AddStreamAVX2 is AddAVX2 with streaming stores.
func AddStreamAVX2(out, x, y []float32) { stream8(addStreamAVX2, AddAVX2, Add, out, x, y) }

// MulStreamAVX2 is MulAVX2 with streaming stores.
func MulStreamAVX2(out, x, y []float32) { stream8(mulStreamAVX2, MulAVX2, Mul, out, x, y) }

// SwiGLUStreamAVX2 is SwiGLUAVX2 with streaming stores.
func SwiGLUStreamAVX2(out, g, v []float32) {
	stream8(swigluStreamAVX2, SwiGLUAVX2, SwiGLUTwin, out, g, v)
}

// stream8 runs a streaming kernel over out's whole runs of eight and tail
// (the plain kernel's twin) over the rest; where out is not 32-byte
// aligned, or shorter than a run, plain takes the whole row.
func stream8(kernel func(out, x, y *float32, n int), plain, tail func(out, x, y []float32), out, x, y []float32) {
	n := len(out)
	if n < 8 || !aligned(&out[0], 32) {
		plain(out, x, y)
		return
	}
	x, y = x[:n], y[:n]
	n8 := n &^ 7
	kernel(&out[0], &x[0], &y[0], n8)
	tail(out[n8:], x[n8:], y[n8:])
}
