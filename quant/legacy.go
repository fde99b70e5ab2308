package quant

import (
	"encoding/binary"
	"math"
)

// Codecs for the legacy 32-element formats. Each function handles a whole
// row whose lengths the caller has already checked: len(x) is a multiple
// of QK and len(y) the matching row size.

// absMaxSigned returns the element of x with the largest magnitude (the
// first one on ties, sign kept) and that magnitude.
func absMaxSigned(x []float32) (vmax, amax float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax = a
			vmax = v
		}
	}
	return vmax, amax
}

// minMax returns the smallest and largest elements of x, starting from
// ±math.MaxFloat32 as ggml does.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// inverse returns 1/d, or 0 when d is zero.
func inverse(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

func quantizeQ4_0(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ4_0]
		vmax, _ := absMaxSigned(xb)
		d := vmax / -8
		id := inverse(d)
		putF16(b[0:], d)
		for j := range QK / 2 {
			q0 := min(15, int(int8(truncInt32(float32(xb[j]*id)+8.5))))
			q1 := min(15, int(int8(truncInt32(float32(xb[j+QK/2]*id)+8.5))))
			b[2+j] = uint8(q0) | uint8(q1<<4)
		}
		x, y = x[QK:], y[sizeQ4_0:]
	}
}

func dequantizeQ4_0(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ4_0], y[:QK]
		d := getF16(b[0:])
		for j := range QK / 2 {
			yb[j] = float32(int(b[2+j]&0x0f)-8) * d
			yb[j+QK/2] = float32(int(b[2+j]>>4)-8) * d
		}
		x, y = x[sizeQ4_0:], y[QK:]
	}
}

func quantizeQ4_1(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ4_1]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		id := inverse(d)
		putF16(b[0:], d)
		putF16(b[2:], lo)
		for j := range QK / 2 {
			q0 := min(15, int(int8(truncInt32(float32((xb[j]-lo)*id)+0.5))))
			q1 := min(15, int(int8(truncInt32(float32((xb[j+QK/2]-lo)*id)+0.5))))
			b[4+j] = uint8(q0) | uint8(q1<<4)
		}
		x, y = x[QK:], y[sizeQ4_1:]
	}
}

func dequantizeQ4_1(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ4_1], y[:QK]
		d, m := getF16(b[0:]), getF16(b[2:])
		for j := range QK / 2 {
			yb[j] = float32(float32(b[4+j]&0x0f)*d) + m
			yb[j+QK/2] = float32(float32(b[4+j]>>4)*d) + m
		}
		x, y = x[sizeQ4_1:], y[QK:]
	}
}

func quantizeQ5_0(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ5_0]
		vmax, _ := absMaxSigned(xb)
		d := vmax / -16
		id := inverse(d)
		putF16(b[0:], d)
		var qh uint32
		for j := range QK / 2 {
			q0 := uint8(min(31, int(int8(truncInt32(float32(xb[j]*id)+16.5)))))
			q1 := uint8(min(31, int(int8(truncInt32(float32(xb[j+QK/2]*id)+16.5)))))
			b[6+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0&0x10) >> 4 << j
			qh |= uint32(q1&0x10) >> 4 << (j + QK/2)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
		x, y = x[QK:], y[sizeQ5_0:]
	}
}

func dequantizeQ5_0(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ5_0], y[:QK]
		d := getF16(b[0:])
		qh := binary.LittleEndian.Uint32(b[2:])
		for j := range QK / 2 {
			h0 := int(qh>>j&1) << 4
			h1 := int(qh>>(j+QK/2)&1) << 4
			yb[j] = float32((int(b[6+j]&0x0f)|h0)-16) * d
			yb[j+QK/2] = float32((int(b[6+j]>>4)|h1)-16) * d
		}
		x, y = x[sizeQ5_0:], y[QK:]
	}
}

func quantizeQ5_1(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ5_1]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		id := inverse(d)
		putF16(b[0:], d)
		putF16(b[2:], lo)
		var qh uint32
		for j := range QK / 2 {
			// ggml does not clamp here: (x-min)*id never exceeds 31.5.
			q0 := uint8(truncInt32(float32((xb[j]-lo)*id) + 0.5))
			q1 := uint8(truncInt32(float32((xb[j+QK/2]-lo)*id) + 0.5))
			b[8+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0&0x10) >> 4 << j
			qh |= uint32(q1&0x10) >> 4 << (j + QK/2)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
		x, y = x[QK:], y[sizeQ5_1:]
	}
}

func dequantizeQ5_1(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ5_1], y[:QK]
		d, m := getF16(b[0:]), getF16(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		for j := range QK / 2 {
			q0 := int(b[8+j]&0x0f) | int(qh>>j&1)<<4
			q1 := int(b[8+j]>>4) | int(qh>>(j+QK/2)&1)<<4
			yb[j] = float32(float32(q0)*d) + m
			yb[j+QK/2] = float32(float32(q1)*d) + m
		}
		x, y = x[sizeQ5_1:], y[QK:]
	}
}

// absMax returns the largest |v| in x, accumulated as ggml's
// MAX(amax, fabsf(v)) does.
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		a := abs32(v)
		if !(amax > a) {
			amax = a
		}
	}
	return amax
}

// roundInt8 rounds f half away from zero (C's roundf) and converts the
// result to int8 as ggml's x86 build does.
func roundInt8(f float32) int8 {
	return int8(truncInt32(float32(math.Round(float64(f)))))
}

func quantizeQ8_0(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ8_0]
		d := absMax(xb) / 127
		id := inverse(d)
		putF16(b[0:], d)
		for j, v := range xb {
			b[2+j] = uint8(roundInt8(v * id))
		}
		x, y = x[QK:], y[sizeQ8_0:]
	}
}

func dequantizeQ8_0(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ8_0], y[:QK]
		d := getF16(b[0:])
		for j := range yb {
			yb[j] = float32(int8(b[2+j])) * d
		}
		x, y = x[sizeQ8_0:], y[QK:]
	}
}

func quantizeQ8_1(x []float32, y []byte) {
	for len(x) > 0 {
		xb, b := x[:QK], y[:sizeQ8_1]
		d := absMax(xb) / 127
		id := inverse(d)
		putF16(b[0:], d)
		sum := 0
		for j, v := range xb {
			q := roundInt8(v * id)
			b[4+j] = uint8(q)
			sum += int(q)
		}
		// ggml sums the stored int8 codes as int, then multiplies in
		// float32.
		putF16(b[2:], float32(sum)*d)
		x, y = x[QK:], y[sizeQ8_1:]
	}
}

func dequantizeQ8_1(x []byte, y []float32) {
	for len(x) > 0 {
		b, yb := x[:sizeQ8_1], y[:QK]
		d := getF16(b[0:])
		for j := range yb {
			yb[j] = float32(int8(b[4+j])) * d
		}
		x, y = x[sizeQ8_1:], y[QK:]
	}
}
