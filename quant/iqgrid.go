package quant

import (
	"encoding/binary"
	"fmt"
)

// Decoders of the codebook formats IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S, IQ1_S and IQ1_M (layouts in layout.go, tables in iqtables.go).
// Each computes in float32 in the order ggml's dequantize_row_iq*
// functions do, so the values agree bit for bit.

// iq1Delta is the shift of IQ1_S's and IQ1_M's grid values (ggml's
// IQ1S_DELTA and IQ1M_DELTA).
const iq1Delta = 0.125

// putSigned8 writes the eight elements db*g[i] of one group, negating
// element i when bit i of signs is set. A negation, not a multiplication
// by -1, but the same value, signed zeros included.
func putSigned8(y []float32, db float32, grid uint64, signs uint8) {
	for i := range 8 {
		v := db * float32(uint8(grid>>(8*i)))
		if signs>>i&1 != 0 {
			v = -v
		}
		y[i] = v
	}
}

// putSigned4 writes four elements db*g[i] of a 4-element grid entry,
// negating element i when bit i of signs is set.
func putSigned4(y []float32, db float32, grid uint32, signs uint8) {
	for i := range 4 {
		v := db * float32(uint8(grid>>(8*i)))
		if signs>>i&1 != 0 {
			v = -v
		}
		y[i] = v
	}
}

func dequantizeIQ2_XXS(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ2_XXS], y[:QKK]
		d := getF16(b)
		for ib := range QKK / 32 {
			q := b[2+8*ib:]
			w := binary.LittleEndian.Uint32(q[4:])
			db := float32(float32(d*(0.5+float32(w>>28))) * 0.25)
			for l := range 4 {
				putSigned8(yb[32*ib+8*l:], db, IQ2XXSGrid[q[l]], KSignsIQ2XS[w>>(7*l)&127])
			}
		}
		x, y = x[sizeIQ2_XXS:], y[QKK:]
	}
}

// iq2Scales returns the two scales of sub-block byte sc of IQ2_XS and
// IQ2_S: d * (0.5 + nibble) / 4 for the low and the high nibble.
func iq2Scales(d float32, sc uint8) (lo, hi float32) {
	lo = float32(float32(d*(0.5+float32(sc&15))) * 0.25)
	hi = float32(float32(d*(0.5+float32(sc>>4))) * 0.25)
	return lo, hi
}

func dequantizeIQ2_XS(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ2_XS], y[:QKK]
		d := getF16(b)
		for ib := range QKK / 32 {
			lo, hi := iq2Scales(d, b[66+ib])
			for l := range 4 {
				q := binary.LittleEndian.Uint16(b[2+8*ib+2*l:])
				db := lo
				if l >= 2 {
					db = hi
				}
				putSigned8(yb[32*ib+8*l:], db, IQ2XSGrid[q&511], KSignsIQ2XS[q>>9])
			}
		}
		x, y = x[sizeIQ2_XS:], y[QKK:]
	}
}

func dequantizeIQ2_S(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ2_S], y[:QKK]
		d := getF16(b)
		qs, signs, qh, scales := b[2:34], b[34:66], b[66:74], b[74:82]
		for ib := range QKK / 32 {
			lo, hi := iq2Scales(d, scales[ib])
			for l := range 4 {
				idx := int(qs[4*ib+l]) | int(qh[ib])>>(2*l)&3<<8
				db := lo
				if l >= 2 {
					db = hi
				}
				putSigned8(yb[32*ib+8*l:], db, IQ2SGrid[idx], signs[4*ib+l])
			}
		}
		x, y = x[sizeIQ2_S:], y[QKK:]
	}
}

func dequantizeIQ3_XXS(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ3_XXS], y[:QKK]
		d := getF16(b)
		qs := b[2:66]
		for ib := range QKK / 32 {
			w := binary.LittleEndian.Uint32(b[66+4*ib:])
			db := float32(float32(d*(0.5+float32(w>>28))) * 0.5)
			for l := range 4 {
				signs := KSignsIQ2XS[w>>(7*l)&127]
				e := 32*ib + 8*l
				putSigned4(yb[e:], db, IQ3XXSGrid[qs[8*ib+2*l]], signs)
				putSigned4(yb[e+4:], db, IQ3XXSGrid[qs[8*ib+2*l+1]], signs>>4)
			}
		}
		x, y = x[sizeIQ3_XXS:], y[QKK:]
	}
}

func dequantizeIQ3_S(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ3_S], y[:QKK]
		d := getF16(b)
		qs, qh, signs, scales := b[2:66], b[66:74], b[74:106], b[106:110]
		for ib := range QKK / 32 {
			db := d * float32(1+2*int(scales[ib/2]>>(4*(ib%2))&15))
			for k := range 8 {
				idx := int(qs[8*ib+k]) | int(qh[ib])>>k&1<<8
				putSigned4(yb[32*ib+4*k:], db, IQ3SGrid[idx], signs[4*ib+k/2]>>(4*(k%2)))
			}
		}
		x, y = x[sizeIQ3_S:], y[QKK:]
	}
}

// putIQ1 writes the eight elements dl * (g[i] + delta) of IQ1SGrid entry
// idx.
func putIQ1(y []float32, dl float32, idx int, delta float32) {
	grid := IQ1SGrid[idx]
	for i := range 8 {
		y[i] = dl * (float32(int8(grid>>(8*i))) + delta)
	}
}

func dequantizeIQ1_S(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ1_S], y[:QKK]
		d := getF16(b)
		qs := b[2:34]
		for ib := range QKK / 32 {
			h := binary.LittleEndian.Uint16(b[34+2*ib:])
			dl := d * float32(2*int(h>>12&7)+1)
			delta := float32(iq1Delta)
			if h&0x8000 != 0 {
				delta = -iq1Delta
			}
			for l := range 4 {
				putIQ1(yb[32*ib+8*l:], dl, int(qs[4*ib+l])|int(h>>(3*l)&7)<<8, delta)
			}
		}
		x, y = x[sizeIQ1_S:], y[QKK:]
	}
}

// IQ1MScale returns the f16 super-block scale of the IQ1_M block b,
// assembled from the top nibbles of its four scale words.
func IQ1MScale(b []byte) uint16 {
	var h uint16
	for j := range 4 {
		h |= binary.LittleEndian.Uint16(b[48+2*j:]) >> 12 << (4 * j)
	}
	return h
}

func dequantizeIQ1_M(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeIQ1_M], y[:QKK]
		d := FP16ToFP32(IQ1MScale(b))
		qs, qh := b[0:32], b[32:48]
		for ib := range QKK / 32 {
			sc := binary.LittleEndian.Uint16(b[48+2*(ib/2):]) >> (6 * (ib % 2))
			dl1 := d * float32(2*int(sc&7)+1)
			dl2 := d * float32(2*int(sc>>3&7)+1)
			for l := range 4 {
				h := qh[2*ib+l/2] >> (4 * (l % 2))
				delta := float32(iq1Delta)
				if h&8 != 0 {
					delta = -iq1Delta
				}
				dl := dl1
				if l >= 2 {
					dl = dl2
				}
				putIQ1(yb[32*ib+8*l:], dl, int(qs[4*ib+l])|int(h&7)<<8, delta)
			}
		}
		x, y = x[sizeIQ1_M:], y[QKK:]
	}
}

// RandomBlocks fills dst, whole blocks of the codebook type t (IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S or IQ1_M), with pseudo-random
// codes, signs and scale codes from seed, and gives each block an f16
// super-block scale of magnitude in [0.5, 1) with a random sign, so that
// rows of such blocks have norms of one order (a product's error
// statistics then do not hang on one row). Every such block is one ggml
// decodes to finite values; they stand in for quantized weights where no
// quantizer exists (CanQuantize). The bytes are a fixed function of seed
// (SplitMix64 draws, eight bytes each, little-endian, then one draw r per
// block for its scale, 0x3800 | r&0x3ff | (r>>32&1)<<15), so tests can pin
// them.
func RandomBlocks(t Type, dst []byte, seed uint64) error {
	ts := int(t.TypeSize())
	switch t {
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M:
	default:
		return fmt.Errorf("quant: random blocks of %v: not a codebook type", t)
	}
	if len(dst)%ts != 0 {
		return fmt.Errorf("quant: random blocks of %v: %d bytes is not a whole number of %d-byte blocks", t, len(dst), ts)
	}
	s := seed
	next := func() uint64 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	for i := 0; i < len(dst); i += 8 {
		r := next()
		for k := 0; k < 8 && i+k < len(dst); k++ {
			dst[i+k] = byte(r >> (8 * k))
		}
	}
	for b := dst; len(b) > 0; b = b[ts:] {
		r := next()
		h := 0x3800 | uint16(r&0x3ff) | uint16(r>>32&1)<<15
		if t != IQ1_M {
			binary.LittleEndian.PutUint16(b, h)
			continue
		}
		for j := range 4 {
			w := binary.LittleEndian.Uint16(b[48+2*j:])&0x0fff | (h>>(4*j)&15)<<12
			binary.LittleEndian.PutUint16(b[48+2*j:], w)
		}
	}
	return nil
}
