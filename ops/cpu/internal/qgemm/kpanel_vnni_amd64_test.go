//go:build amd64 && !purego

package qgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/quant"
)

// kPanelsVNNI are the VNNI K-format panel kernels with their repacking
// and twins.
var kPanelsVNNI = []kPanel{
	{quant.Q4_K, PanelQ4_K, RepackQ4_KAVX2, Q4_KVNNI, TwinQ4_K},
	{quant.Q5_K, PanelQ4_K, RepackQ5_KAVX2, Q5_KVNNI, TwinQ5_K},
	{quant.Q6_K, PanelQ6_K, RepackQ6_KAVX2, Q6_KVNNI, TwinQ6_K},
}

// randKPanel returns a panel of nb super-blocks of typ with arbitrary
// codes in the type's range, scales and mins (q6_K: signed scales, in the
// layout's three copies) and finite d, as the fuzzers of the AVX2 kernels
// draw them.
func randKPanel(rng *rand.Rand, typ quant.Type, nb int) []byte {
	put32 := func(b []byte, v float32) {
		u := math.Float32bits(v)
		b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	if typ == quant.Q6_K {
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
				put32(p[8*panelSubQ6_K+4*i:], float32(rng.NormFloat64()))
			}
		}
		return panel
	}
	codes := 16
	if typ == quant.Q5_K {
		codes = 32
	}
	panel := make([]byte, nb*PanelQ4_K)
	for b := range nb {
		p := panel[b*PanelQ4_K:]
		for s := range 8 {
			sp := p[s*panelSubQ4_K:]
			for i := range 256 {
				sp[i] = byte(rng.IntN(codes))
			}
			for r := range 8 {
				sc, m := byte(rng.IntN(64)), byte(rng.IntN(64))
				sp[256+4*r], sp[256+4*r+2] = sc, sc
				sp[288+4*r], sp[288+4*r+2] = m, m
			}
		}
		for i := range 16 {
			put32(p[8*panelSubQ4_K+4*i:], float32(rng.NormFloat64()))
		}
	}
	return panel
}

// checkKVNNI runs kp's VNNI kernel and its twin from the same outputs
// and compares them bit for bit (NaN matching NaN).
func checkKVNNI(t *testing.T, kp kPanel, nb int, panel, y []byte, ldy int, start [32]float32) {
	t.Helper()
	got, want := start, start
	kp.asm(nb, panel, y, ldy, &got)
	kp.twin(nb, panel, y, ldy, &want)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%v nb=%d: out[%d] = %v, twin %v", kp.typ, nb, i, got[i], want[i])
		}
	}
}

// TestKPanelsVNNI checks each VNNI K-format kernel bit for bit against
// its twin: on quantized Gaussian rows (kCase: real scales, mins and
// bsums, an all-zero activation half, padded activation rows), and on
// arbitrary panels and activations (codes at the ends of their range,
// arbitrary bsums), for several super-block counts and starting outputs.
func TestKPanelsVNNI(t *testing.T) {
	simdtest.NeedVNNI(t)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, kp := range kPanelsVNNI {
		for _, nb := range []int{1, 2, 3, 5, 16} {
			for _, pad := range []int{0, 36} {
				t.Run(fmt.Sprintf("%v/nb=%d/pad=%d", kp.typ, nb, pad), func(t *testing.T) {
					panel, y, ldy, _, _ := kCase(t, rng, kp, nb, pad)
					var start [32]float32
					for i := range start {
						start[i] = float32(rng.NormFloat64())
					}
					checkKVNNI(t, kp, nb, panel, y, ldy, start)
					for range 20 {
						panel := randKPanel(rng, kp.typ, nb)
						y, ldy := fuzzActs(rng, nb)
						checkKVNNI(t, kp, nb, panel, y, ldy, start)
					}
					// Extreme codes: every weight code at its top, every
					// activation code -128 or 127.
					top := map[quant.Type]byte{quant.Q4_K: 15, quant.Q5_K: 31, quant.Q6_K: 63}[kp.typ]
					panel = randKPanel(rng, kp.typ, nb)
					sub := panelSubQ4_K
					if kp.typ == quant.Q6_K {
						sub = panelSubQ6_K
					}
					for b := range nb {
						for s := range 8 {
							for i := range 256 {
								panel[b*kp.panelBytes+s*sub+i] = top
							}
						}
					}
					for _, a := range []byte{0x80, 0x7f} {
						y, ldy := fuzzActs(rng, nb)
						for c := range 4 {
							for b := range nb {
								for i := 4; i < 260; i++ {
									y[c*ldy+b*292+i] = a
								}
							}
						}
						checkKVNNI(t, kp, nb, panel, y, ldy, start)
					}
				})
			}
		}
	}
}

// FuzzKPanelsVNNI compares the VNNI K-format kernels with their twins on
// arbitrary panels (codes in range) and activations.
func FuzzKPanelsVNNI(f *testing.F) {
	simdtest.NeedVNNI(f)
	f.Add(uint64(1), uint8(1), uint8(0))
	f.Add(uint64(7), uint8(3), uint8(1))
	f.Add(uint64(9), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, nbb, kind uint8) {
		kp := kPanelsVNNI[int(kind)%len(kPanelsVNNI)]
		nb := int(nbb%4) + 1
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		panel := randKPanel(rng, kp.typ, nb)
		y, ldy := fuzzActs(rng, nb)
		checkKVNNI(t, kp, nb, panel, y, ldy, [32]float32{})
	})
}

// BenchmarkKPanelsVNNI measures the VNNI K-format kernels beside the
// AVX2 ones, as BenchmarkKPanels (k = 4096, GOP/s counting a
// multiply-add as 2 operations; cpu-GOP/s by process CPU time).
func BenchmarkKPanelsVNNI(b *testing.B) {
	simdtest.NeedVNNI(b)
	const nb = 16
	for i, kp := range kPanelsVNNI {
		for _, k := range []struct {
			name string
			f    func(nb int, panel, y []byte, ldy int, out *[32]float32)
		}{{"avx2", kPanels[i].asm}, {"vnni", kp.asm}} {
			b.Run(kp.typ.String()+"/"+k.name, func(b *testing.B) {
				panel, y, ldy, _, _ := kCase(b, rand.New(rand.NewPCG(1, 2)), kp, nb, 0)
				var out [32]float32
				cpu0 := simdtest.ProcessCPUSeconds()
				for b.Loop() {
					k.f(nb, panel, y, ldy, &out)
				}
				ops := float64(2*8*4*nb*quant.QKK) * float64(b.N)
				if cpu := simdtest.ProcessCPUSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(ops/cpu/1e9, "cpu-GOP/s")
				}
				b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOP/s")
			})
		}
	}
}
