package cuda

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/quant"
)

// quantizeInputs returns n (a multiple of 256) values, each run of 256 (a
// K super-block, 8 legacy blocks) drawn by one of the regimes the
// quantizers branch on: normal and uniform data at several scales, all
// zeros, a constant, values whose scales are f16 subnormals or overflow
// f16, one outlier, few distinct values (ties), one sign only, zeros
// mixed in, and blocks of zeros inside a super-block.
func quantizeInputs(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for c := 0; c < n/256; c++ {
		x := out[256*c : 256*(c+1)]
		regime := c % 14
		for i := range x {
			u := float32(2*rng.Float64() - 1)
			g := float32(rng.NormFloat64())
			switch regime {
			case 0:
				x[i] = g
			case 1:
				x[i] = u * 1e-3
			case 2:
				x[i] = 0
			case 3:
				x[i] = 0.5
			case 4:
				x[i] = u * 1e-7
			case 5:
				x[i] = u * 1e8
			case 6:
				x[i] = u
				if i == 77 {
					x[i] = 1e4
				}
			case 7:
				x[i] = float32(rng.IntN(7) - 3)
			case 8:
				x[i] = float32(rng.Float64())
			case 9:
				x[i] = -float32(rng.Float64()) * 3
			case 10:
				if rng.IntN(3) == 0 {
					x[i] = g
				}
			case 11:
				// Sub-blocks of zeros among data.
				if (i/16)%3 != 0 {
					x[i] = g * 10
				}
			case 12:
				x[i] = g*0.01 + 5
			case 13:
				x[i] = u * 1e-30
			}
		}
	}
	return out
}

// TestQuantizeBytes checks that CPY into every quantized type writes the
// bytes of package quant's reference quantizers, block for block, over
// inputs that take every branch of them, from f32, f16 and bf16 sources.
func TestQuantizeBytes(t *testing.T) {
	b := emulated(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 14 * 256 * 2
	vals := quantizeInputs(rng, n)
	for _, from := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		src := vals
		a := deviceF32(t, b, vals, 512, n/512)
		if from != quant.F32 {
			// The source in from's type; the reference quantizes its
			// values.
			raw := make([]byte, n*2)
			if err := quant.QuantizeRow(from, vals, raw); err != nil {
				t.Fatal(err)
			}
			src = make([]float32, n)
			if err := quant.DequantizeRow(from, raw, src); err != nil {
				t.Fatal(err)
			}
			a = rawDeviceTensor(t, b, from, raw, 512, n/512)
		}
		for _, to := range quantizeTypes {
			// From f16 and bf16 a legacy, a K format, and IQ4_NL, whose
			// blocks of zeros reread earlier blocks of the source.
			if from != quant.F32 && to != quant.Q8_0 && to != quant.Q4_K && to != quant.IQ4_NL {
				continue
			}
			dst, err := ops.NewTensor("dst", to, 1024, n/1024)
			if err != nil {
				t.Fatal(err)
			}
			buf, err := b.Alloc(dst.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			dst.Buffer = buf
			node, err := ops.Cpy(a, dst)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, dst.Bytes())
			if _, err := buf.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			want := gputest.QuantizeRows(t, to, src, 1024)
			bs, ts := int(to.BlockSize()), int(to.TypeSize())
			for k := 0; k < n/bs; k++ {
				if g, w := got[k*ts:(k+1)*ts], want[k*ts:(k+1)*ts]; !bytes.Equal(g, w) {
					t.Errorf("%v -> %v: block %d (regime %d) differs:\n got %x\nwant %x", from, to, k, (k*bs/256)%14, g, w)
					break
				}
			}
		}
	}
}

// TestCpyNewFormats checks CPY from f32 into the formats of issue 26
// that quant encodes (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0) against
// quant's quantizer, byte for byte, on rows of edge values: zeros, one
// large value among zeros, negative values only, values a tie away
// from a code, tiny and huge magnitudes, and zero blocks after data (IQ4_NL's reference
// keeps the codes of the block before, within a row only).
func TestCpyNewFormats(t *testing.T) {
	b := emulated(t)
	const ne0, rows = 512, 2
	rng := rand.New(rand.NewPCG(26, 1))
	inputs := gputest.QuantizerInputs(rng, ne0, rows)
	for _, to := range []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0} {
		for _, in := range inputs {
			t.Run(to.String()+"/"+in.Name, func(t *testing.T) {
				a := deviceF32(t, b, in.Vals, ne0, rows)
				dst, err := ops.NewTensor("dst", to, ne0, rows)
				if err != nil {
					t.Fatal(err)
				}
				buf, err := b.Alloc(dst.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				dst.Buffer = buf
				node, err := ops.Cpy(a, dst)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, dst.Bytes())
				if _, err := buf.ReadAt(got, 0); err != nil {
					t.Fatal(err)
				}
				want := gputest.QuantizeRows(t, to, in.Vals, ne0)
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

// rawDeviceTensor returns a packed tensor of type typ in b's memory
// holding raw.
func rawDeviceTensor(t *testing.T, b *Backend, typ quant.Type, raw []byte, ne ...int64) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor("x", typ, ne...)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := b.Alloc(int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buf.WriteAt(raw, 0); err != nil {
		t.Fatal(err)
	}
	x.Buffer = buf
	return x
}
