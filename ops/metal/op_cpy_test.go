package metal

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/quant"
)

// floatSource returns a packed source tensor of type typ (f32, f16 or
// bf16) in b's memory holding vals converted to typ, and the values as
// the kernels read them back as float32.
func floatSource(t *testing.T, b *Backend, typ quant.Type, vals []float32, ne ...int64) (*ops.Tensor, []float32) {
	t.Helper()
	x, err := ops.NewTensor("a", typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	seen := make([]float32, len(vals))
	var raw []byte
	for i, v := range vals {
		switch typ {
		case quant.F16:
			h := quant.FP32ToFP16(v)
			raw = binary.LittleEndian.AppendUint16(raw, h)
			seen[i] = quant.FP16ToFP32(h)
		case quant.BF16:
			h := quant.FP32ToBF16(v)
			raw = binary.LittleEndian.AppendUint16(raw, h)
			seen[i] = quant.BF16ToFP32(h)
		default:
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
			seen[i] = v
		}
	}
	if _, err := x.Buffer.WriteAt(raw, 0); err != nil {
		t.Fatal(err)
	}
	return x, seen
}

// TestCpyNewFormats checks CPY into the formats of issue 26 that quant
// encodes (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, kernels/newquants.h)
// against quant's quantizer, byte for byte, on rows of edge values: zeros,
// one large value among zeros, negative values only, values a tie away
// from a code, tiny and huge magnitudes, block maxima a few ulps below a
// power of two and subnormal ones (MXFP4's exponent, a float32 log2 that
// the kernel decides without one), and zero blocks after data (IQ4_NL's
// reference keeps the codes of the block before, within a row only).
// Every input is copied from f32; some from f16 and bf16 as well.
func TestCpyNewFormats(t *testing.T) {
	b := emulated(t)
	const ne0, rows = 512, 2
	rng := rand.New(rand.NewPCG(26, 2))
	inputs := gputest.QuantizerInputs(rng, ne0, rows, gputest.QuantizerKind{Name: "below powers of two", At: func(r, i int) float32 {
		// Each 32-element block's maximum is k ulps below 2^p (k
		// 0..63 over the blocks, p from -149 to 127 over the rows and
		// blocks, subnormal maxima included), the rest smaller.
		blk := (r*ne0 + i) / 32
		p := -149 + (blk*37)%277
		top := math.Float32bits(float32(math.Ldexp(1, p)))
		k := uint32((blk * 5) % 64)
		if k >= top {
			k = 0
		}
		v := math.Float32frombits(top - k)
		if i%32 != 7 {
			v *= float32(rng.Float64())
		}
		if i%2 == 1 {
			v = -v
		}
		return v
	}})
	// Copied from f16 and bf16 too.
	halfs := map[string]bool{"gaussian": true, "ternary": true, "zero blocks after data": true}
	for _, to := range []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0} {
		for _, in := range inputs {
			from := []quant.Type{quant.F32}
			if halfs[in.Name] {
				from = append(from, quant.F16, quant.BF16)
			}
			for _, st := range from {
				t.Run(to.String()+"/"+in.Name+"/"+st.String(), func(t *testing.T) {
					a, seen := floatSource(t, b, st, in.Vals, ne0, rows)
					dst, err := ops.NewTensor("dst", to, ne0, rows)
					if err != nil {
						t.Fatal(err)
					}
					if err := ops.AllocTensor(b, dst, 0); err != nil {
						t.Fatal(err)
					}
					node, err := ops.Cpy(a, dst)
					if err != nil {
						t.Fatal(err)
					}
					if err := b.Compute(node); err != nil {
						t.Fatal(err)
					}
					got := make([]byte, dst.Bytes())
					if _, err := dst.Buffer.ReadAt(got, 0); err != nil {
						t.Fatal(err)
					}
					want := gputest.QuantizeRows(t, to, seen, ne0)
					ts, bs := int(to.TypeSize()), int(to.BlockSize())
					for k := 0; k < len(want)/ts; k++ {
						if g, w := got[k*ts:(k+1)*ts], want[k*ts:(k+1)*ts]; !bytes.Equal(g, w) {
							t.Fatalf("block %d (row %d) differs:\n got %x\nwant %x", k, k*bs/ne0, g, w)
						}
					}
				})
			}
		}
	}
}

// TestCpyMXFP4Exponents sweeps MXFP4's exponent choice: a block per
// maximum k ulps below 2^p (k 0..63, where the reference's float32 log2
// rounds up to p for the smallest k at large |p|) for exponents p across
// the range, subnormals included, against quant byte for byte.
func TestCpyMXFP4Exponents(t *testing.T) {
	b := emulated(t)
	ps := []int{-149, -140, -128, -127, -126, -125, -120, -100, -64, -17, -3, -2, -1, 0, 1, 2, 3, 5, 8, 16, 17, 33, 64, 65, 100, 120, 126, 127}
	const ne0 = 64 * 32
	vals := make([]float32, 0, ne0*len(ps))
	for _, p := range ps {
		top := math.Float32bits(float32(math.Ldexp(1, p)))
		for k := range uint32(64) {
			m := math.Float32frombits(top - min(k, top-1))
			for j := range 32 {
				v := m * float32(j) / 32
				if j == 5 {
					v = m
				}
				if j%2 == 1 {
					v = -v
				}
				vals = append(vals, v)
			}
		}
	}
	a, seen := floatSource(t, b, quant.F32, vals, ne0, int64(len(ps)))
	dst, err := ops.NewTensor("dst", quant.MXFP4, ne0, int64(len(ps)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, dst, 0); err != nil {
		t.Fatal(err)
	}
	node, err := ops.Cpy(a, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(node); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, dst.Bytes())
	if _, err := dst.Buffer.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	want := gputest.QuantizeRows(t, quant.MXFP4, seen, ne0)
	ts := int(quant.MXFP4.TypeSize())
	for k := 0; k < len(want)/ts; k++ {
		if g, w := got[k*ts:(k+1)*ts], want[k*ts:(k+1)*ts]; !bytes.Equal(g, w) {
			t.Errorf("2^%d less %d ulps: got %x, want %x", ps[k/64], k%64, g, w)
		}
	}
}
