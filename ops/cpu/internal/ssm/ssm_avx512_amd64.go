//go:build amd64 && !purego

package ssm

import "unsafe"

// AVX-512 F SSM_SCAN and SSM_CONV kernels (ssm_scan_avx512_amd64.s,
// ssm_scana_avx512_amd64.s, ssm_tile_avx512_amd64.s,
// ssm_conv_avx512_amd64.s, ssm_softplus_avx512_amd64.s), bit for bit
// the AVX2 kernels: Softplus in eight float64 lanes, the scalar-A
// scans with a run of 16 states per zmm (the two 8-lane accumulators of
// a row are the two halves of one zmm), the vector-A scan with its
// exponentials 16 at a time, the tiled scan with tiles of 4 rows by 32
// states, and the convolutions with 16 tokens (conv4), two tokens of
// gathered channels (conv4g) or 16 channels (conv41) per zmm. The wrappers check the slices as the AVX2 ones and
// leave the same cases to the twins.

//go:noescape
func ssmScanSAVX512(st, src *float32, stS, srcS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int, dA, dsp float32)

//go:noescape
func ssmScanSTokAVX512(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int)

// ScanSAVX512 is ssmKernels.scanS in zmm (twin: ScanSTwin; bit for bit
// ScanSAVX2).
func ScanSAVX512(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32) {
	scanSRuns(ssmScanSAVX512, st, src, stS, srcS, x, xS, y, yS, b, c, nRows, dState, dA, dsp)
}

// ScanSTokAVX512 is ssmKernels.scanSTok in zmm (twin: ScanSTokTwin; bit
// for bit ScanSTokAVX2).
func ScanSTokAVX512(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	scanSTokRuns(ssmScanSTokAVX512, st, stS, nRows, dState, x, xS, xT, y, yS, yT, b, bT, c, cT, ed, nTok)
}

//go:noescape
func ssmScanAAVX512(st, src *float32, stS, srcS int, a *float32, aS int, dsp *float32, dspS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int)

// ScanAAVX512 is ssmKernels.scanA with the exponentials in zmm (twin:
// ScanATwin; bit for bit ScanAAVX2).
func ScanAAVX512(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int) {
	scanARuns(ssmScanAAVX512, st, src, stS, srcS, a, aS, dsp, dspS, x, xS, y, yS, b, c, nRows, dState)
}

//go:noescape
func ssmScanSTileAVX512(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int, buf *float32)

// ScanSTileAVX512 is ssmKernels.scanSTile with tiles of 4 rows by 32
// states in zmm (twin: ScanSTileTwin; bit for bit ScanSTileAVX2): the
// tiled kernel over whole groups of 4 rows, the twin for the rows left.
func ScanSTileAVX512(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int, buf []float32) {
	if nRows <= 0 || nTok <= 0 {
		return
	}
	if dState%16 != 0 || dState <= 0 {
		panic("cpu: ssm tile state size not a multiple of 16")
	}
	n4 := nRows &^ 3
	if n4 > 0 {
		rowsCheck(st, stS, nRows, dState)
		tokCheck(x, xS, xT, nRows, 1, nTok)
		tokCheck(y, yS, yT, nRows, 1, nTok)
		tokCheck(b, 0, bT, 1, dState, nTok)
		tokCheck(c, 0, cT, 1, dState, nTok)
		_ = ed[4*nTok-1]
		// 32-byte aligned partial sums, as ScanSTileAVX2.
		buf = buf[(32-uintptr(unsafe.Pointer(&buf[0]))%32)%32/4:]
		_ = buf[TileBuf*nTok-1]
		ssmScanSTileAVX512(&st[0], 4*stS, n4, dState, &x[0], 4*xS, 4*xT, &y[0], 4*yS, 4*yT, &b[0], 4*bT, &c[0], 4*cT, &ed[0], nTok, &buf[0])
	}
	if n4 < nRows {
		ScanSTileTwin(st[n4*stS:], stS, nRows-n4, dState, x[n4*xS:], xS, xT, y[n4*yS:], yS, yT, b, bT, c, cT, ed, nTok)
	}
}

//go:noescape
func ssmConvAVX512(dst *float32, dstT int, sx *float32, sxS int, cw *float32, nTok16 int)

//go:noescape
func ssmConv1AVX512(dst, sx, c *float32, nGroups int)

// Conv4AVX512 is ssmKernels.conv4 with 16 tokens per zmm, a last block
// of 8 tokens by ssmConvAVX2 (twin: package cpu's ssmConvRows; bit for
// bit Conv4AVX2).
func Conv4AVX512(dst []float32, dstT int, sx []float32, sxS int, cw []float32, nTok8 int) {
	if nTok8 <= 0 {
		return
	}
	if nTok8%8 != 0 || dstT < 8 || sxS < 0 || (nTok8-1)*dstT+8 > len(dst) || 7*sxS+nTok8+3 > len(sx) {
		panic("cpu: ssm_conv tile out of range")
	}
	_ = cw[31]
	n16 := nTok8 &^ 15
	if n16 > 0 {
		ssmConvAVX512(&dst[0], 4*dstT, &sx[0], 4*sxS, &cw[0], n16)
	}
	if n16 < nTok8 {
		ssmConvAVX2(&dst[n16*dstT], 4*dstT, &sx[n16], 4*sxS, &cw[0], nTok8-n16)
	}
}

// Conv41AVX512 is ssmKernels.conv41 on two groups of 8 channels per zmm
// (twin: package cpu's ssmConvRows; bit for bit Conv41AVX2).
func Conv41AVX512(dst, sx, c []float32) {
	n := len(dst) / 8
	if n == 0 {
		return
	}
	_, _ = sx[32*n-1], c[32*n-1]
	ssmConv1AVX512(&dst[0], &sx[0], &c[0], n)
}

//go:noescape
func ssmSoftplusAVX512(dst, x *float32, n int)

// SoftplusAVX512 is ssmKernels.softplus eight lanes of float64 at a time
// (twin: SoftplusTwin on each element; bit for bit SoftplusAVX2), the
// AVX2 kernel and the twin for the elements past the last 8.
func SoftplusAVX512(dst, x []float32) {
	x = x[:len(dst)]
	n8 := len(dst) &^ 7
	if n8 > 0 {
		ssmSoftplusAVX512(&dst[0], &x[0], n8)
	}
	SoftplusAVX2(dst[n8:], x[n8:])
}

//go:noescape
func ssmConvGatherAVX512(dst *float32, dstT int, sx *float32, sxS int, c *float32, cS int, nTok int)

// Conv4GatherAVX512 is ssmKernels.conv4g on two tokens per zmm (twin:
// package cpu's ssmConvRows; bit for bit Conv4GatherAVX2).
func Conv4GatherAVX512(dst []float32, dstT int, sx []float32, sxS int, c []float32, cS int, nTok int) {
	if nTok <= 0 {
		return
	}
	if dstT < 8 || sxS < 0 || cS < 0 || 7*sxS > 1<<30 || 7*cS > 1<<30 ||
		(nTok-1)*dstT+8 > len(dst) || 7*sxS+nTok+3 > len(sx) || 7*cS+4 > len(c) {
		panic("cpu: ssm_conv gather out of range")
	}
	ssmConvGatherAVX512(&dst[0], 4*dstT, &sx[0], sxS, &c[0], cS, nTok)
}
