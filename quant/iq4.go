package quant

import "encoding/binary"

// Codecs for the 4-bit non-linear formats IQ4_NL and IQ4_XS: 4-bit codes
// index IQ4NLValues, scaled per 32 elements.

// bestIndexIQ4 returns the index of the value of IQ4NLValues nearest to x
// (the upper one on ties), by ggml's best_index_int8 bisection.
func bestIndexIQ4(x float32) uint8 {
	v := &IQ4NLValues
	if x <= float32(v[0]) {
		return 0
	}
	if x >= float32(v[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(v[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if x-float32(v[hi-1]) < float32(v[hi])-x {
		return uint8(hi - 1)
	}
	return uint8(hi)
}

// iq4Block is the state of ggml's quantize_row_iq4_nl_impl for one call:
// its code buffer L persists from block to block, as ggml's stack array
// does (see quantizeIQ4).
type iq4Block struct {
	L      [QKK]uint8
	scales [QKK / 32]float32
	weight [32]float32
}

// newIQ4Block returns the state for one row: every code 8.
func newIQ4Block() *iq4Block {
	st := new(iq4Block)
	for i := range st.L {
		st.L[i] = 8
	}
	return st
}

// quantizeIQ4 quantizes one block of IQ4_NL (len(x) = 32) or one
// super-block of IQ4_XS (len(x) = 256) into its fields, as ggml's
// quantize_row_iq4_nl_impl does: per 32 elements a scale from the largest
// magnitude refined by least squares with weights qw (nil: x²), trying
// 2*ntry+1 scales around it when ntry > 0; for IQ4_XS the scales are then
// quantized to 6 bits against the super-block scale and the codes redone.
// scalesH and scalesL are nil for IQ4_NL.
//
// A 32-element block whose largest magnitude is below groupMaxEps keeps
// the codes st.L holds from an earlier block when ntry <= 0 (ggml reads
// its stack array uninitialized there; its scale is 0, so they decode to
// zeros either way). A new iq4Block's codes are all 8, the code of the
// smallest positive value, so such a block at the start of a row decodes
// to +0.
func (st *iq4Block) quantizeIQ4(x []float32, d []byte, qs []byte, scalesH []byte, scalesL []byte, qw []float32, ntry int) {
	n := len(x)
	values := &IQ4NLValues
	v0 := float32(values[0])
	var sigma2 float32
	for _, v := range x {
		sigma2 += float32(v * v)
	}
	sigma2 *= 2 / float32(n)

	var maxScale, amaxScale float32
	for ib := 0; ib < n/32; ib++ {
		xb := x[32*ib : 32*ib+32]
		Lb := st.L[32*ib : 32*ib+32]
		w := st.weight[:]
		if qw != nil {
			q := qw[32*ib:]
			for j, v := range xb {
				w[j] = q[j] * sqrt32(sigma2+float32(v*v))
			}
		} else {
			for j, v := range xb {
				w[j] = v * v
			}
		}
		var amax, vmax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		if amax < groupMaxEps {
			st.scales[ib] = 0
			continue
		}
		var dl float32
		if ntry > 0 {
			dl = -vmax / v0
		} else {
			dl = vmax / v0
		}
		id := 1 / dl
		var sumqx, sumq2 float32
		for j, v := range xb {
			l := bestIndexIQ4(float32(id * v))
			Lb[j] = l
			q := float32(values[l])
			wq := float32(w[j] * q)
			sumqx += float32(wq * v)
			sumq2 += float32(wq * q)
		}
		dl = 0
		if sumq2 > 0 {
			dl = sumqx / sumq2
		}
		best := float32(dl * sumqx)
		for itry := -ntry; itry <= ntry; itry++ {
			id = float32(itry+int(values[0])) / vmax
			sumqx, sumq2 = 0, 0
			for j, v := range xb {
				q := float32(values[bestIndexIQ4(float32(id*v))])
				wq := float32(w[j] * q)
				sumqx += float32(wq * v)
				sumq2 += float32(wq * q)
			}
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				dl = sumqx / sumq2
				best = float32(dl * sumqx)
			}
		}
		st.scales[ib] = dl
		if a := abs32(dl); a > amaxScale {
			amaxScale, maxScale = a, dl
		}
	}

	if n > 32 {
		var h uint16
		ds := -maxScale / 32
		putF16(d, ds)
		var id float32
		if ds != 0 {
			id = 1 / ds
		}
		for ib := 0; ib < n/32; ib++ {
			l := clampInt(nearestInt(float32(id*st.scales[ib])), -32, 31)
			dl := float32(ds * float32(l))
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xb := x[32*ib : 32*ib+32]
			for j, v := range xb {
				st.L[32*ib+j] = bestIndexIQ4(float32(idl * v))
			}
			l += 32
			if ib%2 == 0 {
				scalesL[ib/2] = uint8(l & 0xf)
			} else {
				scalesL[ib/2] |= uint8(l&0xf) << 4
			}
			h |= uint16(l>>4) << (2 * (ib % 8))
		}
		binary.LittleEndian.PutUint16(scalesH, h)
	} else {
		putF16(d, st.scales[0])
		if ntry > 0 {
			var id float32
			if st.scales[0] != 0 {
				id = 1 / st.scales[0]
			}
			for j, v := range x {
				st.L[j] = bestIndexIQ4(float32(id * v))
			}
		}
	}
	for i := 0; i < n/32; i++ {
		for j := range 16 {
			qs[16*i+j] = st.L[32*i+j] | st.L[32*i+16+j]<<4
		}
	}
}

// quantizeIQ4_NL is ggml's quantize_row_iq4_nl_ref: no weights and no
// scale search (ntry -1). llama-quantize goes through quantize_iq4_nl
// instead, which searches 15 scales (ntry 7).
func quantizeIQ4_NL(x []float32, y []byte) {
	quantizeIQ4_NLWith(x, y, nil, -1)
}

// quantizeIQ4_NLWith quantizes a row to IQ4_NL with importance weights qw
// (nil or one per element) and ntry as quantizeIQ4 takes them.
func quantizeIQ4_NLWith(x []float32, y []byte, qw []float32, ntry int) {
	st := newIQ4Block()
	for len(x) > 0 {
		var w []float32
		if qw != nil {
			w, qw = qw[:QK], qw[QK:]
		}
		b := y[:sizeIQ4_NL]
		st.quantizeIQ4(x[:QK], b[0:2], b[2:], nil, nil, w, ntry)
		x, y = x[QK:], y[sizeIQ4_NL:]
	}
}

// quantizeIQ4_XS is ggml's quantize_row_iq4_xs_ref, which is
// quantize_iq4_xs without weights: 15 scales tried per 32 elements.
func quantizeIQ4_XS(x []float32, y []byte) {
	quantizeIQ4_XSWith(x, y, nil)
}

// quantizeIQ4_XSWith quantizes a row to IQ4_XS with importance weights qw
// (nil or one per element).
func quantizeIQ4_XSWith(x []float32, y []byte, qw []float32) {
	st := newIQ4Block()
	for len(x) > 0 {
		var w []float32
		if qw != nil {
			w, qw = qw[:QKK], qw[QKK:]
		}
		b := y[:sizeIQ4_XS]
		st.quantizeIQ4(x[:QKK], b[0:2], b[8:], b[2:4], b[4:8], w, 7)
		x, y = x[QKK:], y[sizeIQ4_XS:]
	}
}

func dequantizeIQ4_NL(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ4_NL], y[:QK]
		d := getF16(b[0:])
		for j := range QK / 2 {
			yb[j] = d * float32(IQ4NLValues[b[2+j]&0xf])
			yb[j+QK/2] = d * float32(IQ4NLValues[b[2+j]>>4])
		}
		x, y = x[sizeIQ4_NL:], y[QK:]
	}
}

// IQ4XSScale returns the 6-bit scale code of sub-block j (0..7) of the
// IQ4_XS super-block b: the sub-block's scale is d * (code - 32).
func IQ4XSScale(b []byte, j int) int {
	h := binary.LittleEndian.Uint16(b[2:])
	return int(b[4+j/2]>>(4*(j%2))&0xf) | int(h>>(2*j)&3)<<4
}

func dequantizeIQ4_XS(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ4_XS], y[:QKK]
		d := getF16(b[0:])
		for ib := range QKK / 32 {
			dl := float32(d * float32(IQ4XSScale(b, ib)-32))
			qs := b[8+16*ib:]
			for j := range 16 {
				yb[32*ib+j] = dl * float32(IQ4NLValues[qs[j]&0xf])
				yb[32*ib+j+16] = dl * float32(IQ4NLValues[qs[j]>>4])
			}
		}
		x, y = x[sizeIQ4_XS:], y[QKK:]
	}
}
