//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// faSameBits reports whether a and b are the same float32, any NaN
// matching any NaN.
func faSameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// faRandHalf returns a random binary16 value: mostly normal values in
// (-2, 2), now and then (one in 64 with special) an Inf or NaN.
func faRandHalf(rng *rand.Rand, special bool) uint16 {
	if special && rng.IntN(64) == 0 {
		return [3]uint16{0x7c00, 0xfc00, 0x7e00}[rng.IntN(3)]
	}
	return quant.FP32ToFP16(4*rng.Float32() - 2)
}

// TestFAScoresAVX2 compares faScoresAVX2 and faScores1AVX2 with their
// twins bit for bit over row lengths that exercise the runs of 32, the
// runs of 8 past them and both, one to several groups of keys (the
// one-row kernel's blocks of 12 keys and groups of 3 left over), padded
// and zero strides (a key repeated, as a tile of under four keys passes
// it), with and without Inf/NaN keys; the one-row kernel must score a key
// as the three-row kernel does, and (finite keys) each score must be
// within float32 rounding of the float64 dot product.
func TestFAScoresAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{8, 16, 24, 32, 40, 56, 64, 72, 96, 120, 128, 136, 256, 264} {
		for trial := range 6 {
			special := trial >= 4
			nk := 4 * (1 + rng.IntN(12))
			ks := 2*n + 2*rng.IntN(4)
			if trial == 3 {
				ks = 0
			}
			var q [3][]float32
			for r := range q {
				q[r] = make([]float32, n)
				for i := range q[r] {
					q[r][i] = simd.HalfTable[faRandHalf(rng, false)]
				}
			}
			k := make([]byte, (nk-1)*ks+2*n)
			for i := 0; i+1 < len(k); i += 2 {
				h := faRandHalf(rng, special)
				k[i], k[i+1] = byte(h), byte(h>>8)
			}
			var got, want [3][]float32
			for r := range 3 {
				got[r], want[r] = make([]float32, nk), make([]float32, nk)
			}
			pf := trial%2 == 0 // with and without prefetching
			faScoresAVX2(q, k, ks, nk, got, pf)
			faScoresTwin(q, k, ks, nk, want, pf)
			// The one-row kernel on row 0, in groups of three keys.
			nk1 := nk / 4 * 3
			got1, want1 := make([]float32, nk1), make([]float32, nk1)
			faScores1AVX2(q[0], k, ks, nk1, got1, pf)
			faScores1Twin(q[0], k, ks, nk1, want1, pf)
			// The four-row kernel: rows 0..2 and row 0 again.
			q4 := [4][]float32{q[0], q[1], q[2], q[0]}
			var got4, want4 [4][]float32
			for r := range 4 {
				got4[r], want4[r] = make([]float32, nk), make([]float32, nk)
			}
			faScores4AVX2(q4, k, ks, nk, got4, pf)
			faScores4Twin(q4, k, ks, nk, want4, pf)
			for r := range 4 {
				for j := range nk {
					if !faSameBits(got4[r][j], want4[r][j]) || !faSameBits(got4[r][j], want[r%3][j]) {
						t.Fatalf("n=%d trial %d: four-row score[%d][%d] = %v, twin %v, three-row %v", n, trial, r, j, got4[r][j], want4[r][j], want[r%3][j])
					}
				}
			}
			for j := range nk1 {
				if !faSameBits(got1[j], want1[j]) || !faSameBits(got1[j], want[0][j]) {
					t.Fatalf("n=%d trial %d: one-row score[%d] = %v, twin %v, three-row %v", n, trial, j, got1[j], want1[j], want[0][j])
				}
			}
			for r := range 3 {
				for j := range nk {
					if !faSameBits(got[r][j], want[r][j]) {
						t.Fatalf("n=%d trial %d: score[%d][%d] = %v, twin %v", n, trial, r, j, got[r][j], want[r][j])
					}
					if special {
						continue
					}
					// Within float32 rounding of the exact dot product.
					kj := u16s(k, int64(j*ks), int64(n))
					var exact, mag float64
					for i := range n {
						p := float64(simd.HalfTable[kj[i]]) * float64(q[r][i])
						exact += p
						mag += math.Abs(p)
					}
					if e := math.Abs(float64(got[r][j]) - exact); e > float64(n)*0x1p-23*mag+1e-30 {
						t.Fatalf("n=%d trial %d: score[%d][%d] = %v, exact %v", n, trial, r, j, got[r][j], exact)
					}
				}
			}
		}
	}
}

// TestFAValuesAVX2 compares faValuesAVX2 with its twin bit for bit over
// row lengths (chunks of 32 and of 8), key counts, strides, and weights
// with zeros, Inf and NaN.
func TestFAValuesAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{8, 16, 24, 32, 40, 64, 96, 104, 128, 136, 192, 264} {
		for _, nk := range []int{1, 2, 3, 7, 33, 64} {
			for trial := range 3 {
				special := trial == 2
				vs := 2*n + 2*rng.IntN(5)
				v := make([]byte, (nk-1)*vs+2*n)
				for i := 0; i+1 < len(v); i += 2 {
					h := faRandHalf(rng, special)
					v[i], v[i+1] = byte(h), byte(h>>8)
				}
				var got, want, p [3][]float32
				for r := range 3 {
					got[r], want[r], p[r] = make([]float32, n), make([]float32, n), make([]float32, nk)
					for i := range got[r] {
						got[r][i] = 2*rng.Float32() - 1
						want[r][i] = got[r][i]
					}
					for i := range p[r] {
						p[r][i] = rng.Float32()
						if rng.IntN(8) == 0 {
							p[r][i] = 0
						}
						if special && rng.IntN(16) == 0 {
							p[r][i] = float32(math.Inf(1))
						}
					}
				}
				acc1 := append([]float32(nil), got[0]...)
				faValuesAVX2(got, p, v, vs, nk)
				faValuesTwin(want, p, v, vs, nk)
				// The one-row kernel on row 0.
				want1 := append([]float32(nil), acc1...)
				faValues1AVX2(acc1, p[0], v, vs, nk)
				faValues1Twin(want1, p[0], v, vs, nk)
				for i := range n {
					if !faSameBits(acc1[i], want1[i]) || !faSameBits(acc1[i], want[0][i]) {
						t.Fatalf("n=%d nk=%d vs=%d trial %d: one-row acc[%d] = %v, twin %v, three-row %v", n, nk, vs, trial, i, acc1[i], want1[i], want[0][i])
					}
				}
				for r := range 3 {
					for i := range n {
						if !faSameBits(got[r][i], want[r][i]) {
							t.Fatalf("n=%d nk=%d vs=%d trial %d: acc[%d][%d] = %v, twin %v", n, nk, vs, trial, r, i, got[r][i], want[r][i])
						}
					}
				}
			}
		}
	}
}

// faRandQ8 returns nb random q8_0 blocks: scales in (0, 1) (now and
// then an Inf or NaN with special), codes in [-127, 127] and, in keys
// (extreme), now and then -128.
func faRandQ8(rng *rand.Rand, nb int, special, extreme bool) []byte {
	b := make([]byte, nb*simd.BytesQ8_0)
	for i := range nb {
		h := quant.FP32ToFP16(rng.Float32())
		if special && rng.IntN(16) == 0 {
			h = [2]uint16{0x7c00, 0x7e00}[rng.IntN(2)]
		}
		b[i*simd.BytesQ8_0], b[i*simd.BytesQ8_0+1] = byte(h), byte(h>>8)
		for j := range 32 {
			c := int8(rng.IntN(255) - 127)
			if extreme && rng.IntN(32) == 0 {
				c = -128
			}
			b[i*simd.BytesQ8_0+2+j] = byte(c)
		}
	}
	return b
}

// TestFAQ8KernelsAVX2 compares the q8_0 block kernels with their twins
// bit for bit: the scores (also against the tier's q8_0 dot kernel, the
// one-row path), the widening (also against quant.DequantizeRow), and
// the float32 value kernels.
func TestFAQ8KernelsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(73, 74))
	dot := avx2Kernels.dots[quant.Q8_0].dot
	for _, nb := range []int{1, 2, 3, 4, 5, 8} {
		n := 32 * nb
		for trial := range 4 {
			special := trial == 3
			nk := 2 * (1 + rng.IntN(5))
			ks := nb*simd.BytesQ8_0 + rng.IntN(5)
			if trial == 2 {
				ks = 0
			}
			k := faRandQ8(rng, (nk-1)*ks/simd.BytesQ8_0+nb+1, special, true)[:(nk-1)*ks+nb*simd.BytesQ8_0]
			var q [3][]byte
			var dq, got, want [3][]float32
			for r := range 3 {
				q[r] = faRandQ8(rng, nb, false, false)
				dq[r] = make([]float32, 8*nb)
				for b := range nb {
					for l := range 8 {
						dq[r][8*b+l] = simd.HalfAt(q[r], b*simd.BytesQ8_0)
					}
				}
				got[r], want[r] = make([]float32, nk), make([]float32, nk)
			}
			faScoresQ8AVX2(q, dq, k, ks, nk, got)
			faScoresQ8Twin(q, dq, k, ks, nk, want)
			// The one-row kernel on row 0, in groups of four keys.
			nk1 := nk / 4 * 4
			if nk1 > 0 {
				got1, want1 := make([]float32, nk1), make([]float32, nk1)
				faScores1Q8AVX2(q[0], dq[0], k, ks, nk1, got1)
				faScores1Q8Twin(q[0], dq[0], k, ks, nk1, want1)
				for j := range nk1 {
					if !faSameBits(got1[j], want1[j]) || !faSameBits(got1[j], want[0][j]) {
						t.Fatalf("nb=%d trial %d: one-row score[%d] = %v, twin %v, three-row %v", nb, trial, j, got1[j], want1[j], want[0][j])
					}
				}
			}
			for r := range 3 {
				for j := range nk {
					d := dot(n, k[j*ks:j*ks+nb*simd.BytesQ8_0], q[r])
					if !faSameBits(got[r][j], want[r][j]) || !faSameBits(got[r][j], d) {
						t.Fatalf("nb=%d trial %d: score[%d][%d] = %v, twin %v, dot %v", nb, trial, r, j, got[r][j], want[r][j], d)
					}
				}
			}
			// Widening.
			src := faRandQ8(rng, nb, special, true)
			gw, ww, dw := make([]float32, n), make([]float32, n), make([]float32, n)
			faDequantQ8VecAVX2(gw, src)
			faDequantQ8Twin(ww, src)
			if err := quant.DequantizeRow(quant.Q8_0, src, dw); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !faSameBits(gw[i], ww[i]) || !faSameBits(gw[i], dw[i]) {
					t.Fatalf("nb=%d trial %d: widened[%d] = %v, twin %v, DequantizeRow %v", nb, trial, i, gw[i], ww[i], dw[i])
				}
			}
		}
	}
	for _, n := range []int{8, 24, 32, 40, 64, 96, 128, 136, 256, 264} {
		for _, nk := range []int{1, 3, 17, 64} {
			vs := n + rng.IntN(3)
			v := make([]float32, (nk-1)*vs+n)
			for i := range v {
				v[i] = 4*rng.Float32() - 2
			}
			var got, want, p [3][]float32
			for r := range 3 {
				got[r], want[r], p[r] = make([]float32, n), make([]float32, n), make([]float32, nk)
				for i := range got[r] {
					got[r][i] = rng.Float32()
					want[r][i] = got[r][i]
				}
				for i := range p[r] {
					p[r][i] = rng.Float32()
				}
			}
			one := append([]float32(nil), got[0]...)
			faValuesF32AVX2(got, p, v, vs, nk)
			faValuesF32Twin(want, p, v, vs, nk)
			oneTwin := append([]float32(nil), one...)
			faValues1F32AVX2(one, p[0], v, vs, nk)
			faValues1F32Twin(oneTwin, p[0], v, vs, nk)
			for r := range 3 {
				for i := range n {
					if !faSameBits(got[r][i], want[r][i]) || r == 0 && (!faSameBits(one[i], want[0][i]) || !faSameBits(one[i], oneTwin[i])) {
						t.Fatalf("n=%d nk=%d: acc[%d][%d] = %v, twin %v (one row %v, twin %v)", n, nk, r, i, got[r][i], want[r][i], one[i], oneTwin[i])
					}
				}
			}
		}
	}
}

// TestFAMaskLogitsAVX2 compares faMaskF16VecAVX2 and faLogitsVecAVX2
// with their twins over tile lengths 1..64, mask values with -Inf runs
// (causal), scattered -Inf, NaN and +Inf, and ALiBi slopes; the logits'
// maximum must match too (NaN for NaN).
func TestFAMaskLogitsAVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(69, 70))
	for n := 1; n <= 64; n++ {
		for trial := range 4 {
			m := make([]uint16, n)
			cut := rng.IntN(n + 1)
			for i := range m {
				switch {
				case trial == 0 && i >= cut, trial > 0 && rng.IntN(4) == 0:
					m[i] = 0xfc00 // -Inf
				case trial == 3 && rng.IntN(8) == 0:
					m[i] = [2]uint16{0x7e00, 0x7c00}[rng.IntN(2)] // NaN, +Inf
				default:
					m[i] = quant.FP32ToFP16(-2 * rng.Float32())
				}
			}
			slope := float32(1)
			if trial == 2 {
				slope = 0.0625
			}
			got, want := make([]float32, n), make([]float32, n)
			gb, wb := faMaskF16VecAVX2(got, m, slope), faMaskF16Twin(want, m, slope)
			if gb != wb {
				t.Fatalf("n=%d trial %d: mask bits %x, twin %x", n, trial, gb, wb)
			}
			dots := make([]float32, n)
			for i := range dots {
				dots[i] = 8*rng.Float32() - 4
				if trial == 3 && rng.IntN(16) == 0 {
					dots[i] = float32(math.Inf(1))
				}
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) {
					t.Fatalf("n=%d trial %d: mask[%d] = %v, twin %v", n, trial, i, got[i], want[i])
				}
			}
			gm, wm := faLogitsVecAVX2(got, dots, 0.125), faLogitsTwin(want, dots, 0.125)
			if gm != wm && !(gm != gm && wm != wm) {
				t.Fatalf("n=%d trial %d: logits max %v, twin %v", n, trial, gm, wm)
			}
			for i := range n {
				if !faSameBits(got[i], want[i]) {
					t.Fatalf("n=%d trial %d: logit[%d] = %v, twin %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}

// faBlockCases are FLASH_ATTN_EXT shapes that take the block kernels:
// causal prefill (whole tiles skipped, keys masked for part of a group),
// GQA, rows left over after the groups of three, scattered masks with a
// fully masked query and sinks, softcap and ALiBi, and head sizes that
// use the kernels' runs of 8.
var faBlockCases = []faCase{
	{name: "causal", d: 128, dv: 128, nQ: 40, nKV: 200, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "causal-gqa", d: 64, dv: 64, nQ: 13, nKV: 77, nHead: 8, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "scattered-sinks", d: 64, dv: 64, nQ: 10, nKV: 133, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 4, sinks: true},
	{name: "softcap-alibi", d: 96, dv: 96, nQ: 7, nKV: 66, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F32, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.125, Softcap: 5, MaxBias: 8}},
	{name: "d40-dv24", d: 40, dv: 24, nQ: 9, nKV: 70, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "short-tiles", d: 64, dv: 64, nQ: 6, nKV: 130, nHead: 1, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "three-keys", d: 64, dv: 64, nQ: 3, nKV: 3, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1},
	{name: "decode", d: 128, dv: 128, nQ: 1, nKV: 150, nHead: 4, nHeadKV: 4, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "decode-two-keys", d: 64, dv: 64, nQ: 1, nKV: 2, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1, sinks: true},
	{name: "prefill-d256", d: 256, dv: 256, nQ: 4, nKV: 96, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1},
	{name: "decode-gqa4", d: 128, dv: 128, nQ: 1, nKV: 150, nHead: 8, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	{name: "decode-gqa2-sinks", d: 64, dv: 64, nQ: 1, nKV: 70, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F32, maskRows: 2, maskedQuery: -1, sinks: true},
	{name: "nomask-dim3", d: 32, dv: 32, nQ: 6, nKV: 65, nHead: 2, nHeadKV: 1, q3: 2, k3: 1, noMask: true, maskedQuery: -1},
}

// faBlockTypes are the K/V type pairs the block kernels take.
var faBlockTypes = [][2]quant.Type{{quant.F16, quant.F16}, {quant.Q8_0, quant.Q8_0}, {quant.F16, quant.Q8_0}, {quant.Q8_0, quant.F16}}

// faComputeOut computes case c (operands from seed) on a fresh AVX2
// backend with the given threads and returns a copy of the output; it
// fails the test unless the block kernels were used exactly when
// faNoBlock is off.
func faComputeOut(t *testing.T, c faCase, seed uint64, threads int, kt, vt quant.Type) []float32 {
	t.Helper()
	b, err := NewWithOptions(Options{Threads: threads, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, kt, vt)
	if err := mxCompute(t, b, node); err != nil {
		t.Fatal(err)
	}
	if used := b.fa.blk != nil; used == faNoBlock {
		t.Fatalf("block kernels used: %v, faNoBlock %v", used, faNoBlock)
	}
	return append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
}

// TestFlashAttnBlockExact checks that FLASH_ATTN_EXT with the block
// kernels gives the same bits at 1, 2 and 3 threads (which group the rows
// differently into items and groups of three), the same bits as without
// them (each row alone through the row kernels) for q8_0 keys, and stays
// within the reference tolerance. (f16 keys are summed in the block
// order, not dot2F16's, so there only the tolerance applies.)
func TestFlashAttnBlockExact(t *testing.T) {
	needAVX2(t)
	if avx2Kernels.fa == nil {
		t.Skip("no block kernels")
	}
	rng := rand.New(rand.NewPCG(65, 66))
	for _, c := range faBlockCases {
		if c.params.Scale == 0 {
			c.params.Scale = 0.125
		}
		seed := rng.Uint64()
		for _, kv := range faBlockTypes {
			if (kv[0] == quant.Q8_0 || kv[1] == quant.Q8_0) && (c.d%32 != 0 || c.dv%32 != 0) {
				continue
			}
			t.Run(c.name+"/k="+kv[0].String()+",v="+kv[1].String(), func(t *testing.T) {
				want, what := faComputeOut(t, c, seed, 1, kv[0], kv[1]), "1 thread"
				if kv[0] == quant.Q8_0 {
					faNoBlock = true
					want, what = faComputeOut(t, c, seed, 2, kv[0], kv[1]), "one row"
					faNoBlock = false
				}
				for _, threads := range []int{1, 2, 3} {
					got := faComputeOut(t, c, seed, threads, kv[0], kv[1])
					for i := range want {
						if !faSameBits(got[i], want[i]) {
							t.Fatalf("threads %d: element %d: block %g, %s %g", threads, i, got[i], what, want[i])
						}
					}
				}
				b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, kv[0], kv[1])
				mxCheck(t, b, node, faTol(kv[0]))
			})
		}
	}
}

// TestFlashAttnBlockMaskedNaN checks that keys masked for a row do not
// reach it through the block kernels even when their K and V rows are
// NaN and other rows of its group take them: causal prefill with NaN keys
// and values that only the later queries see. The result must match the
// row path's (bit for bit for q8_0 keys, closely and NaN for NaN for f16
// keys, whose block order differs).
func TestFlashAttnBlockMaskedNaN(t *testing.T) {
	needAVX2(t)
	c := faCase{d: 64, dv: 64, nQ: 24, nKV: 90, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.125}}
	poison := []int64{70, 71, 72, 73, 88, 89} // seen from queries 4..7 and 22, 23 on
	for _, kv := range faBlockTypes {
		t.Run("k="+kv[0].String()+",v="+kv[1].String(), func(t *testing.T) {
			faMaskedNaN(t, c, poison, kv)
		})
	}
}

// faMaskedNaN runs TestFlashAttnBlockMaskedNaN's case c with K/V types
// kv, the keys poison NaN (every f16 element, or every q8_0 scale).
func faMaskedNaN(t *testing.T, c faCase, poison []int64, kv [2]quant.Type) {
	var outs [2][]float32
	for i, off := range []bool{true, false} {
		faNoBlock = off
		b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
		if err != nil {
			t.Fatal(err)
		}
		node := faBuild(t, b, rand.New(rand.NewPCG(71, 72)), c, kv[0], kv[1])
		for _, x := range []*ops.Tensor{node.Src[ops.FAK], node.Src[ops.FAV]} {
			raw, err := x.HostBytes()
			if err != nil {
				t.Fatal(err)
			}
			n, step := x.Ne[0], int64(2) // f16: every element
			if x.Type == quant.Q8_0 {
				n, step = x.Ne[0]/32, simd.BytesQ8_0 // q8_0: every block's scale
			}
			for _, ik := range poison {
				row := raw[ik*x.Nb[1]:]
				for e := range n {
					row[e*step], row[e*step+1] = 0x00, 0x7e // f16 NaN
				}
			}
		}
		if err := mxCompute(t, b, node); err != nil {
			t.Fatal(err)
		}
		outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
		b.Close()
	}
	faNoBlock = false
	nans := 0
	for i := range outs[0] {
		// f16 keys: the block order's scores differ from the row path's
		// in the last bits, so there the NaNs must match and the rest
		// agree closely; q8_0 keys: the same bits.
		a, b := outs[0][i], outs[1][i]
		same := faSameBits(a, b)
		if kv[0] == quant.F16 && !same && a == a && b == b {
			same = math.Abs(float64(a)-float64(b)) <= 1e-5*max(1, math.Abs(float64(a)))
		}
		if !same {
			t.Fatalf("element %d: block %g, one row %g", i, b, a)
		}
		if outs[1][i] != outs[1][i] {
			nans++
			if iq := int64(i) / (c.dv * c.nHead); iq < 4 {
				t.Fatalf("query %d, element %d: NaN from a masked key", iq, i)
			}
		}
	}
	if nans == 0 {
		t.Fatal("no NaN at all: the poisoned keys were not seen")
	}
}

// TestFlashAttnBlockNoAllocs checks that the block path allocates nothing
// once the scratch has grown: causal prefill (groups of three and a row
// left alone), one-row decode and GQA decode (four rows scored together).
func TestFlashAttnBlockNoAllocs(t *testing.T) {
	needAVX2(t)
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []faCase{faBlockCases[0], faBlockCases[1], faBlockCases[7], faBlockCases[10]} {
		c.params.Scale = 0.125
		node := faBuild(t, b, rand.New(rand.NewPCG(67, 68)), c, quant.F16, quant.F16)
		mxAlloc(t, b, node, 0)
		if err := b.Compute(node); err != nil {
			t.Fatal(err)
		}
		if b.fa.blk == nil {
			t.Fatalf("%s: block kernels not used", c.name)
		}
		if a := testing.AllocsPerRun(10, func() {
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s: %v allocations per Compute, want 0", c.name, a)
		}
	}
}

// BenchmarkFlashAttnBlock compares FLASH_ATTN_EXT with and without the
// block kernels (interleaved sub-benchmarks) at head size 128, 32 query
// heads, f16 and q8_0 K/V, with a causal mask as in prefill. GFLOP/s
// counts 4*d per (query, head, key), masked keys included.
func BenchmarkFlashAttnBlock(b *testing.B) {
	shapes := []struct{ nQ, nKV, nHeadKV int64 }{{512, 512, 32}, {512, 512, 8}, {64, 512, 8}, {1, 512, 32}, {1, 512, 8}}
	const d, nHead = 128, 32
	for _, typ := range []quant.Type{quant.F16, quant.Q8_0} {
		for _, s := range shapes {
			for _, path := range []string{"rows", "block"} {
				b.Run(fmt.Sprintf("%v/n%d_kv%d_kvheads%d/%s", typ, s.nQ, s.nKV, s.nHeadKV, path), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: "avx2"})
					if err != nil {
						b.Skip(err)
					}
					defer be.Close()
					faNoBlock = path == "rows"
					defer func() { faNoBlock = false }()
					c := faCase{d: d, dv: d, nQ: s.nQ, nKV: s.nKV, nHead: nHead, nHeadKV: s.nHeadKV, q3: 1, k3: 1, mask: quant.F16, causal: true, maskedQuery: -1, params: ops.FlashAttnParams{Scale: 0.088}}
					node := faBuild(b, be, rand.New(rand.NewPCG(1, 2)), c, typ, typ)
					benchCompute(b, be, node, float64(4*d*s.nQ*nHead*s.nKV))
				})
			}
		}
	}
}

// TestFARoundF16AVX2 compares faRoundF16VecAVX2 with its twin (and so
// with quant.FP32ToFP16) over random values of every magnitude, halfway
// cases between binary16 neighbours (ties to even), binary16 subnormals
// and values past its range, zeros, Inf and NaN.
func TestFARoundF16AVX2(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(81, 82))
	const n = 8 * 64
	src := make([]float32, n)
	for trial := range 20 {
		for i := range src {
			switch rng.IntN(6) {
			case 0: // any bits
				src[i] = math.Float32frombits(rng.Uint32())
			case 1: // a halfway case: a binary16 value plus half an ulp
				h := simd.HalfTable[faRandHalf(rng, false)]
				src[i] = math.Float32frombits(math.Float32bits(h) | 1<<12)
			case 2: // around the binary16 subnormals
				src[i] = float32(rng.NormFloat64() * 1e-6)
			case 3: // around the largest binary16 values
				src[i] = float32(rng.NormFloat64() * 65520)
			case 4:
				src[i] = [...]float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 65504, 65519.996, 65520}[rng.IntN(8)]
			default:
				src[i] = float32(rng.NormFloat64())
			}
		}
		m := 8 * (trial%64 + 1)
		got, want := make([]float32, m), make([]float32, m)
		faRoundF16VecAVX2(got, src[:m])
		faRoundF16Twin(want, src[:m])
		for i := range got {
			if !faSameBits(got[i], want[i]) {
				t.Fatalf("%v (%#x): got %v, twin %v", src[i], math.Float32bits(src[i]), got[i], want[i])
			}
		}
	}
}
