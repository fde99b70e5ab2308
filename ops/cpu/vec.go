package cpu

// vecKernels are a tier's row kernels for the non-matmul hot ops:
// SOFT_MAX, RMS_NORM and the value accumulation and online-softmax
// rescale of FLASH_ATTN_EXT. The generic entries are the pure-Go loops the
// ops have always used (float64 exp); a SIMD tier replaces them with its
// assembly, which tests compare bit for bit with a Go twin (internal/vec/twin.go).
type vecKernels struct {
	// smPrep sets out = x*scale, adds slope*m when m is not nil (two
	// float32 roundings, no FMA), and returns the maximum of out. A NaN
	// in out must not be hidden behind a -Inf maximum: when it returns
	// -Inf, out holds no NaN.
	smPrep func(out, x, m []float32, scale, slope float32) float32
	// expSum sets z[i] = exp(z[i]-mx) and returns the float64 sum of the
	// float32 results.
	expSum func(z []float32, mx float32) float64
	// mulTo sets out = x*s.
	mulTo func(out, x []float32, s float32)
	// sumSq returns the float64 sum of the squares of x.
	sumSq func(x []float32) float64
	// hasNaN reports whether x holds a NaN.
	hasNaN func(x []float32) bool
	// axpy sets acc += x*s; axpyF16 does so for binary16 x.
	axpy    func(acc, x []float32, s float32)
	axpyF16 func(acc []float32, x []uint16, s float32)
	// axpy4 and axpy4F16 add four scaled rows, as axpy (axpyF16) with
	// x0/s0, then x1/s1, x2/s2 and x3/s3, in one pass over acc: each
	// element sees the same operations in the same order as four calls.
	axpy4    func(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32)
	axpy4F16 func(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32)
	// axpyQ8_0 sets acc += x*s for the q8_0 row x (len(acc)/32 blocks),
	// each element d*q (exact in float32) as quant.DequantizeRow gives it.
	axpyQ8_0 func(acc []float32, x []byte, s float32)
	// dot2F16, when not nil, returns the dot products of the binary16
	// rows k0 and k1 with the float32 row q (len(q) elements), each equal
	// bit for bit to the tier's F16 dot kernel of k with q's binary16 form
	// when q holds widened binary16 values (FLASH_ATTN_EXT's scores, two
	// keys per call sharing the query loads).
	dot2F16 func(k0, k1 []uint16, q []float32) (float32, float32)
	// f16ToF32 widens binary16 values (SOFT_MAX's f16 mask rows).
	f16ToF32 func(dst []float32, src []uint16)
}
