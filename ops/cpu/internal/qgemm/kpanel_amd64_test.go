//go:build amd64 && !purego

package qgemm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// A kPanel is a K-format panel kernel with its repack and twin.
type kPanel struct {
	typ        quant.Type
	panelBytes int
	repack     func(panel, w []byte, ld, nb int64)
	asm, twin  func(nb int, panel, y []byte, ldy int, out *[32]float32)
}

var kPanels = []kPanel{
	{quant.Q4_K, PanelQ4_K, RepackQ4_KAVX2, Q4_KAVX2, TwinQ4_K},
	{quant.Q5_K, PanelQ4_K, RepackQ5_KAVX2, Q5_KAVX2, TwinQ5_K},
	{quant.Q6_K, PanelQ6_K, RepackQ6_KAVX2, Q6_KAVX2, TwinQ6_K},
}

// kCase draws eight weight rows of kp's type and four q8_K activation
// rows of nb super-blocks (quantized from Gaussian values, so scales,
// mins and bsums are as real rows have them), and returns the repacked
// panel, the activation rows with ldy bytes per row (padded past a row's
// end, so that the kernel must honour ldy), and the rows as float32
// values.
func kCase(t testing.TB, rng *rand.Rand, kp kPanel, nb int, pad int) (panel, y []byte, ldy int, wf, yf [][]float32) {
	t.Helper()
	k := nb * quant.QKK
	rowW := nb * int(kp.typ.TypeSize())
	w := make([]byte, 8*rowW)
	for r := range 8 {
		x := make([]float32, k)
		scale := float32(rng.ExpFloat64() + 0.01)
		for i := range x {
			x[i] = scale * float32(rng.NormFloat64())
		}
		if err := quant.QuantizeRow(kp.typ, x, w[r*rowW:(r+1)*rowW]); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, k)
		if err := quant.DequantizeRow(kp.typ, w[r*rowW:(r+1)*rowW], back); err != nil {
			t.Fatal(err)
		}
		wf = append(wf, back)
	}
	panel = make([]byte, nb*kp.panelBytes)
	kp.repack(panel, w, int64(rowW), int64(nb))
	ldy = nb*simd.BytesQ8_K + pad
	y = make([]byte, 4*ldy)
	for c := range 4 {
		x := make([]float32, k)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		if c == 3 {
			clear(x[:k/2]) // a row with all-zero blocks
		}
		if err := quant.QuantizeRow(quant.Q8_K, x, y[c*ldy:c*ldy+nb*simd.BytesQ8_K]); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, k)
		if err := quant.DequantizeRow(quant.Q8_K, y[c*ldy:c*ldy+nb*simd.BytesQ8_K], back); err != nil {
			t.Fatal(err)
		}
		yf = append(yf, back)
	}
	return panel, y, ldy, wf, yf
}

// TestKPanels checks each AVX2 kernel bit for bit against its twin, and
// the twin against the float64 dot product of the dequantized rows (the
// kernels' integer sums are exact; only the final float32 terms round),
// for several super-block counts and starting outputs.
func TestKPanels(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, kp := range kPanels {
		for _, nb := range []int{1, 2, 5, 16} {
			for _, pad := range []int{0, 36} {
				t.Run(fmt.Sprintf("%v/nb=%d/pad=%d", kp.typ, nb, pad), func(t *testing.T) {
					panel, y, ldy, wf, yf := kCase(t, rng, kp, nb, pad)
					var start [32]float32
					for i := range start {
						start[i] = float32(rng.NormFloat64())
					}
					got, want := start, start
					kp.asm(nb, panel, y, ldy, &got)
					kp.twin(nb, panel, y, ldy, &want)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("out[%d] = %v, twin %v", i, got[i], want[i])
						}
					}
					for c := range 4 {
						for r := range 8 {
							ref := float64(start[8*c+r])
							var mag float64
							for i := range wf[r] {
								ref += float64(wf[r][i]) * float64(yf[c][i])
								mag += math.Abs(float64(wf[r][i]) * float64(yf[c][i]))
							}
							if d := math.Abs(float64(want[8*c+r]) - ref); d > 1e-5*(mag+math.Abs(ref))+1e-6 {
								t.Errorf("row %d col %d: %v, float64 dot %v (|x||y| %v)", r, c, want[8*c+r], ref, mag)
							}
						}
					}
				})
			}
		}
	}
}

// FuzzQ45_KTwin compares the q4_K and q5_K kernels with their twins on
// arbitrary panel codes, scales, mins and activation codes (bsums
// arbitrary too: the arithmetic must agree whatever they hold), with
// finite scales.
func FuzzQ45_KTwin(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint64(1), uint8(1))
	f.Add(uint64(7), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, nbb uint8) {
		nb := int(nbb%4) + 1
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		panel := make([]byte, nb*PanelQ4_K)
		for b := range nb {
			p := panel[b*PanelQ4_K:]
			for s := range 8 {
				sp := p[s*panelSubQ4_K:]
				for i := range 256 {
					sp[i] = byte(rng.IntN(32))
				}
				for r := range 8 {
					sc, m := byte(rng.IntN(64)), byte(rng.IntN(64))
					sp[256+4*r], sp[256+4*r+2] = sc, sc
					sp[288+4*r], sp[288+4*r+2] = m, m
				}
			}
			for i := range 16 {
				v := math.Float32bits(float32(rng.NormFloat64()))
				for q := range 4 {
					p[8*panelSubQ4_K+4*i+q] = byte(v >> (8 * q))
				}
			}
		}
		y, ldy := fuzzActs(rng, nb)
		// The codes are 5-bit (q5_K); q4_K's are their low four bits.
		panel4 := append([]byte(nil), panel...)
		for b := range nb {
			for s := range 8 {
				sp := panel4[b*PanelQ4_K+s*panelSubQ4_K:]
				for i := range 256 {
					sp[i] &= 15
				}
			}
		}
		for _, k := range []struct {
			name      string
			panel     []byte
			asm, twin func(nb int, panel, y []byte, ldy int, out *[32]float32)
		}{
			{"q4_K", panel4, Q4_KAVX2, TwinQ4_K},
			{"q5_K", panel, Q5_KAVX2, TwinQ5_K},
		} {
			var got, want [32]float32
			k.asm(nb, k.panel, y, ldy, &got)
			k.twin(nb, k.panel, y, ldy, &want)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%s: out[%d] = %v, twin %v", k.name, i, got[i], want[i])
				}
			}
		}
	})
}

// BenchmarkKPanels measures each kernel on a k = 4096 panel (16
// super-blocks, 42-46 KiB, in L2) against four activation rows in L1/L2;
// GOP/s counts a multiply-add as 2 operations.
func BenchmarkKPanels(b *testing.B) {
	simdtest.NeedAVX2(b)
	const nb = 16
	for _, kp := range kPanels {
		b.Run(kp.typ.String(), func(b *testing.B) {
			panel, y, ldy, _, _ := kCase(b, rand.New(rand.NewPCG(1, 2)), kp, nb, 0)
			var out [32]float32
			for b.Loop() {
				kp.asm(nb, panel, y, ldy, &out)
			}
			b.ReportMetric(float64(2*8*4*nb*quant.QKK)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}

// FuzzQ6_KTwin compares the q6_K kernel with its twin on arbitrary
// codes, signed scales (in the layout's three copies) and activations.
func FuzzQ6_KTwin(f *testing.F) {
	simdtest.NeedAVX2(f)
	f.Add(uint64(1), uint8(1))
	f.Add(uint64(9), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, nbb uint8) {
		nb := int(nbb%4) + 1
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		panel := make([]byte, nb*PanelQ6_K)
		put16 := func(b []byte, v int8) { b[0], b[1] = byte(v), byte(int16(v)>>8) }
		for b := range nb {
			p := panel[b*PanelQ6_K:]
			for s := range 8 {
				sp := p[s*panelSubQ6_K:]
				for i := range 256 {
					sp[i] = byte(rng.IntN(64))
				}
				for r := range 8 {
					sa, sb := int8(rng.Uint32()), int8(rng.Uint32())
					put16(sp[256+4*r:], sa)
					put16(sp[256+4*r+2:], sa)
					put16(sp[288+4*r:], sb)
					put16(sp[288+4*r+2:], sb)
					put16(sp[320+4*r:], sa)
					put16(sp[320+4*r+2:], sb)
				}
			}
			for i := range 8 {
				v := math.Float32bits(float32(rng.NormFloat64()))
				for q := range 4 {
					p[8*panelSubQ6_K+4*i+q] = byte(v >> (8 * q))
				}
			}
		}
		y, ldy := fuzzActs(rng, nb)
		var got, want [32]float32
		Q6_KAVX2(nb, panel, y, ldy, &got)
		TwinQ6_K(nb, panel, y, ldy, &want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("out[%d] = %v, twin %v", i, got[i], want[i])
			}
		}
	})
}

// fuzzActs returns four q8_K rows of nb super-blocks, a few bytes more
// than a row apart (returned as ldy), with positive finite scales and
// arbitrary codes and bsums.
func fuzzActs(rng *rand.Rand, nb int) ([]byte, int) {
	ldy := nb*simd.BytesQ8_K + rng.IntN(8)
	y := make([]byte, 4*ldy)
	for c := range 4 {
		for b := range nb {
			yb := y[c*ldy+b*simd.BytesQ8_K:]
			binary.LittleEndian.PutUint32(yb, math.Float32bits(float32(rng.ExpFloat64())))
			for i := 4; i < simd.BytesQ8_K; i++ {
				yb[i] = byte(rng.Uint32())
			}
		}
	}
	return y, ldy
}

// kRepacks are the assembly K-panel repackings with the Go ones they
// must match byte for byte.
var kRepacks = []struct {
	typ        quant.Type
	panelBytes int
	asm, ref   func(panel, w []byte, ld, nb int64)
}{
	{quant.Q4_K, PanelQ4_K, RepackQ4_KAVX2, RepackQ4_K},
	{quant.Q5_K, PanelQ4_K, RepackQ5_KAVX2, RepackQ5_K},
	{quant.Q6_K, PanelQ6_K, RepackQ6_KAVX2, RepackQ6_K},
}

// TestKRepackAVX2 checks the assembly K-panel repackings against the Go
// ones byte for byte: rows of random bytes (every 6-bit scale and min,
// qh bit and f16 d, NaN and Inf included), rows a random gap apart, 0 to
// 9 super-blocks, into panels whose bytes start random and differently
// so, so that a byte the assembly fails to write shows.
func TestKRepackAVX2(t *testing.T) {
	simdtest.NeedAVX2(t)
	rng := rand.New(rand.NewPCG(91, 92))
	for _, kr := range kRepacks {
		for range 60 {
			nb := rng.IntN(10)
			rowBytes := int64(nb) * int64(kr.typ.TypeSize())
			ld := rowBytes + int64(rng.IntN(48))
			w := simdtest.Row(rng, quant.I8, int(7*ld+rowBytes), rng.IntN(64), 0)
			got := simdtest.Row(rng, quant.I8, nb*kr.panelBytes, rng.IntN(64), 0)
			want := simdtest.Row(rng, quant.I8, nb*kr.panelBytes, 0, 0)
			kr.asm(got, w, ld, int64(nb))
			kr.ref(want, w, ld, int64(nb))
			for i := range got {
				if got[i] != want[i] {
					sub := (kr.panelBytes - 32) / 8 // 320 or 352, then d (and dmin)
					sb, off := i/kr.panelBytes, i%kr.panelBytes
					t.Fatalf("%v nb=%d ld=%d: super-block %d byte %d (sub-block %d byte %d): asm %#x, go %#x",
						kr.typ, nb, ld, sb, off, off/sub, off%sub, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkRepackK times the K-panel repackings of eight rows of eight
// super-blocks (k = 2048, an MoE expert's row), Go against assembly.
func BenchmarkRepackK(b *testing.B) {
	simdtest.NeedAVX2(b)
	rng := rand.New(rand.NewPCG(93, 94))
	const nb = 8
	for _, kr := range kRepacks {
		ld := int64(nb * kr.typ.TypeSize())
		w := simdtest.Row(rng, quant.I8, int(8*ld), 0, 0)
		panel := make([]byte, nb*kr.panelBytes)
		for _, f := range []struct {
			name string
			f    func(panel, w []byte, ld, nb int64)
		}{{"go", kr.ref}, {"avx2", kr.asm}} {
			b.Run(fmt.Sprintf("%v/%s", kr.typ, f.name), func(b *testing.B) {
				b.SetBytes(8 * ld)
				for b.Loop() {
					f.f(panel, w, ld, nb)
				}
			})
		}
	}
}
