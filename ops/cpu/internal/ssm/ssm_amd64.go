//go:build amd64 && !purego

package ssm

import "unsafe"

// AVX2+FMA SSM_SCAN kernels (ssm_softplus_amd64.s, ssm_scan_amd64.s,
// ssm_conv_amd64.s, and the scaled-state tile kernel in
// ssm_tile_amd64.s). The wrappers check the slices and hand the
// assembly whole runs (four Softplus lanes, state rows of a multiple of
// 8, groups of 4 rows), finishing the rest with the twins, so each
// wrapper equals its twin bit for bit.

//go:noescape
func ssmSoftplusAVX2(dst, x *float32, n int)

//go:noescape
func ssmScanAAVX2(st, src *float32, stS, srcS int, a *float32, aS int, dsp *float32, dspS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int)

//go:noescape
func ssmScanSAVX2(st, src *float32, stS, srcS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int, dA, dsp float32)

//go:noescape
func ssmScanSTokAVX2(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int)

//go:noescape
func ssmConvAVX2(dst *float32, dstT int, sx *float32, sxS int, cw *float32, nTok8 int)

//go:noescape
func ssmConvGatherAVX2(dst *float32, dstT int, sx *float32, sxS int, c *float32, cS int, nTok int)

//go:noescape
func ssmConv1AVX2(dst, sx, c *float32, nGroups int)

// SoftplusAVX2 is ssmKernels.Softplus (twin: SoftplusTwin on
// each element). A tail short of four lanes goes through the kernel from
// a padded copy: a decode's head blocks are a few heads long, and the
// twin's scalar steps cost more than the kernel's whole call.
func SoftplusAVX2(dst, x []float32) {
	x = x[:len(dst)]
	n4 := len(dst) &^ 3
	if n4 > 0 {
		ssmSoftplusAVX2(&dst[0], &x[0], n4)
	}
	if r := len(dst) - n4; r > 0 {
		var xt, dt [4]float32
		copy(xt[:], x[n4:])
		ssmSoftplusAVX2(&dt[0], &xt[0], 4)
		copy(dst[n4:], dt[:r])
	}
}

//go:noescape
func ssmExpMulAVX2(dst, x, a *float32, n int)

// ExpMulAVX2 is ssmKernels.expMul (twin: ExpMulTwin on each element),
// four lanes at a time in float64; a tail short of four lanes goes
// through the kernel from a padded copy, as in SoftplusAVX2.
func ExpMulAVX2(dst, x, a []float32) {
	x, a = x[:len(dst)], a[:len(dst)]
	n4 := len(dst) &^ 3
	if n4 > 0 {
		ssmExpMulAVX2(&dst[0], &x[0], &a[0], n4)
	}
	if r := len(dst) - n4; r > 0 {
		var xt, at, dt [4]float32
		copy(xt[:], x[n4:])
		copy(at[:], a[n4:])
		ssmExpMulAVX2(&dt[0], &xt[0], &at[0], 4)
		copy(dst[n4:], dt[:r])
	}
}

// ScanAAVX2 is ssmKernels.scanA (twin: ScanATwin).
func ScanAAVX2(st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int) {
	scanARuns(ssmScanAAVX2, st, src, stS, srcS, a, aS, dsp, dspS, x, xS, y, yS, b, c, nRows, dState)
}

// scanARuns is scanA with kernel (a tier's assembly) where dState is a
// positive multiple of 8, after the bounds checks the kernel relies on,
// and ScanATwin elsewhere.
func scanARuns(kernel func(st, src *float32, stS, srcS int, a *float32, aS int, dsp *float32, dspS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int), st, src []float32, stS, srcS int, a []float32, aS int, dsp []float32, dspS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int) {
	if nRows <= 0 {
		return
	}
	if dState%8 != 0 || dState == 0 {
		ScanATwin(st, src, stS, srcS, a, aS, dsp, dspS, x, xS, y, yS, b, c, nRows, dState)
		return
	}
	rowsCheck(st, stS, nRows, dState)
	rowsCheck(src, srcS, nRows, dState)
	rowsCheck(a, aS, nRows, dState)
	rowsCheck(dsp, dspS, nRows, 1)
	rowsCheck(x, xS, nRows, 1)
	rowsCheck(y, yS, nRows, 1)
	_, _ = b[dState-1], c[dState-1]
	kernel(&st[0], &src[0], 4*stS, 4*srcS, &a[0], 4*aS, &dsp[0], 4*dspS, &x[0], 4*xS, &y[0], 4*yS, &b[0], &c[0], nRows, dState)
}

// ScanSAVX2 is ssmKernels.scanS (twin: ScanSTwin).
func ScanSAVX2(st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32) {
	scanSRuns(ssmScanSAVX2, st, src, stS, srcS, x, xS, y, yS, b, c, nRows, dState, dA, dsp)
}

// scanSRuns is scanS with kernel (a tier's assembly) where dState is a
// positive multiple of 8, after the bounds checks the kernel relies on,
// and ScanSTwin elsewhere.
func scanSRuns(kernel func(st, src *float32, stS, srcS int, x *float32, xS int, y *float32, yS int, b, c *float32, nRows, dState int, dA, dsp float32), st, src []float32, stS, srcS int, x []float32, xS int, y []float32, yS int, b, c []float32, nRows, dState int, dA, dsp float32) {
	if nRows <= 0 {
		return
	}
	if dState%8 != 0 || dState == 0 {
		ScanSTwin(st, src, stS, srcS, x, xS, y, yS, b, c, nRows, dState, dA, dsp)
		return
	}
	rowsCheck(st, stS, nRows, dState)
	rowsCheck(src, srcS, nRows, dState)
	rowsCheck(x, xS, nRows, 1)
	rowsCheck(y, yS, nRows, 1)
	_, _ = b[dState-1], c[dState-1]
	kernel(&st[0], &src[0], 4*stS, 4*srcS, &x[0], 4*xS, &y[0], 4*yS, &b[0], &c[0], nRows, dState, dA, dsp)
}

// ScanSTokAVX2 is ssmKernels.scanSTok (twin: ScanSTokTwin).
func ScanSTokAVX2(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	scanSTokRuns(ssmScanSTokAVX2, st, stS, nRows, dState, x, xS, xT, y, yS, yT, b, bT, c, cT, ed, nTok)
}

// scanSTokRuns is scanSTok with kernel (a tier's assembly) where
// dState is a positive multiple of 8, after the bounds checks the kernel
// relies on, and ScanSTokTwin elsewhere.
func scanSTokRuns(kernel func(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int), st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int) {
	if nRows <= 0 || nTok <= 0 {
		return
	}
	if dState%8 != 0 || dState == 0 {
		ScanSTokTwin(st, stS, nRows, dState, x, xS, xT, y, yS, yT, b, bT, c, cT, ed, nTok)
		return
	}
	rowsCheck(st, stS, nRows, dState)
	tokCheck(x, xS, xT, nRows, 1, nTok)
	tokCheck(y, yS, yT, nRows, 1, nTok)
	tokCheck(b, 0, bT, 1, dState, nTok)
	tokCheck(c, 0, cT, 1, dState, nTok)
	_ = ed[2*nTok-1]
	kernel(&st[0], 4*stS, nRows, dState, &x[0], 4*xS, 4*xT, &y[0], 4*yS, 4*yT, &b[0], 4*bT, &c[0], 4*cT, &ed[0], nTok)
}

// Conv4AVX2 is ssmKernels.conv4 (twin: package cpu's ssmConvRows).
func Conv4AVX2(dst []float32, dstT int, sx []float32, sxS int, cw []float32, nTok8 int) {
	if nTok8 <= 0 {
		return
	}
	if nTok8%8 != 0 || dstT < 8 || sxS < 0 || (nTok8-1)*dstT+8 > len(dst) || 7*sxS+nTok8+3 > len(sx) {
		panic("cpu: ssm_conv tile out of range")
	}
	_ = cw[31]
	ssmConvAVX2(&dst[0], 4*dstT, &sx[0], 4*sxS, &cw[0], nTok8)
}

// Conv4GatherAVX2 is ssmKernels.conv4g (twin: package cpu's ssmConvRows).
func Conv4GatherAVX2(dst []float32, dstT int, sx []float32, sxS int, c []float32, cS int, nTok int) {
	if nTok <= 0 {
		return
	}
	if dstT < 8 || sxS < 0 || cS < 0 || 7*sxS > 1<<30 || 7*cS > 1<<30 ||
		(nTok-1)*dstT+8 > len(dst) || 7*sxS+nTok+3 > len(sx) || 7*cS+4 > len(c) {
		panic("cpu: ssm_conv gather out of range")
	}
	ssmConvGatherAVX2(&dst[0], 4*dstT, &sx[0], sxS, &c[0], cS, nTok)
}

// Conv41AVX2 is ssmKernels.conv41 (twin: package cpu's ssmConvRows).
func Conv41AVX2(dst, sx, c []float32) {
	n := len(dst) / 8
	if n == 0 {
		return
	}
	_, _ = sx[32*n-1], c[32*n-1]
	ssmConv1AVX2(&dst[0], &sx[0], &c[0], n)
}

//go:noescape
func ssmScanSTileAVX2(st *float32, stS, nRows, dState int, x *float32, xS, xT int, y *float32, yS, yT int, b *float32, bT int, c *float32, cT int, ed *float32, nTok int, buf *float32)

// ScanSTileAVX2 is ssmKernels.scanSTile (twin: ScanSTileTwin):
// the register-tiled kernel over whole groups of 4 rows, the twin for the
// rows left.
func ScanSTileAVX2(st []float32, stS, nRows, dState int, x []float32, xS, xT int, y []float32, yS, yT int, b []float32, bT int, c []float32, cT int, ed []float32, nTok int, buf []float32) {
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
		// The partial sums are read and written every token: 32-byte
		// aligned, none of them straddles a cache line.
		buf = buf[(32-uintptr(unsafe.Pointer(&buf[0]))%32)%32/4:]
		_ = buf[TileBuf*nTok-1]
		ssmScanSTileAVX2(&st[0], 4*stS, n4, dState, &x[0], 4*xS, 4*xT, &y[0], 4*yS, 4*yT, &b[0], 4*bT, &c[0], 4*cT, &ed[0], nTok, &buf[0])
	}
	if n4 < nRows {
		ScanSTileTwin(st[n4*stS:], stS, nRows-n4, dState, x[n4*xS:], xS, xT, y[n4*yS:], yS, yT, b, bT, c, cT, ed, nTok)
	}
}
