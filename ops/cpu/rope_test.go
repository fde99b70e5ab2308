package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// tolRope is ROPE's NMSE tolerance: the cos/sin cache is computed in
// float64 and rounded once, then each rotation rounds a few times in
// float32, NMSE about 1e-14 at any position.
const tolRope = 1e-11

func TestRope(t *testing.T) {
	type build = func(e *rowOpEnv) *ops.Tensor
	f32 := func(ne ...int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.f32(ne...) }
	}
	// positions returns the i32 positions vals, or random ones in [0, 2000).
	positions := func(n int64, vals ...float64) func(e *rowOpEnv) *ops.Tensor {
		return func(e *rowOpEnv) *ops.Tensor {
			if vals == nil {
				vals = e.uniform(n, 0, 2000)
				for i := range vals {
					vals[i] = math.Floor(vals[i])
				}
			}
			return e.leaf(quant.I32, []int64{n}, vals)
		}
	}
	rope := func(a, pos, ff build, p ops.RopeParams) build {
		return func(e *rowOpEnv) *ops.Tensor {
			var f *ops.Tensor
			if ff != nil {
				f = ff(e)
			}
			return mustNode(e.t)(ops.Rope(a(e), pos(e), f, p))
		}
	}
	factors := func(n int64) build {
		return func(e *rowOpEnv) *ops.Tensor { return e.leaf(quant.F32, []int64{n}, e.uniform(n, 1, 8)) }
	}
	params := func(nDims, mode int, edit func(p *ops.RopeParams)) ops.RopeParams {
		p := ops.DefaultRopeParams(nDims, mode)
		if edit != nil {
			edit(&p)
		}
		return p
	}
	yarn := func(p *ops.RopeParams) {
		p.FreqScale, p.ExtFactor, p.NCtxOrig, p.AttnFactor = 0.25, 1, 4096, 1
	}
	var cases []rowOpCase
	for _, mode := range []struct {
		name string
		mode int
	}{{"normal", ops.RopeNormal}, {"neox", ops.RopeNeoX}} {
		m := mode.mode
		cases = append(cases, []rowOpCase{
			{mode.name + "/full", rope(f32(64, 4, 5), positions(5), nil, params(64, m, nil))},
			{mode.name + "/partial", rope(f32(64, 3, 4), positions(4), nil, params(32, m, nil))},
			{mode.name + "/partial-odd-rest", rope(f32(18, 2, 3), positions(3), nil, params(6, m, nil))},
			{mode.name + "/pos-100000", rope(f32(128, 2, 4), positions(4, 100000, 99999, 65536, 0), nil, params(128, m, nil))},
			{mode.name + "/negative-pos", rope(f32(32, 2, 3), positions(3, -5, -1, -1000), nil, params(32, m, nil))},
			{mode.name + "/freq-factors", rope(f32(64, 2, 3), positions(3), factors(32), params(64, m, nil))},
			{mode.name + "/long-freq-factors", rope(f32(64, 2, 3), positions(3), factors(40), params(48, m, nil))},
			{mode.name + "/base-500000", rope(f32(128, 2, 3), positions(3, 100000, 7, 50000), nil, params(128, m, func(p *ops.RopeParams) { p.FreqBase = 500000 }))},
			{mode.name + "/linear-scale", rope(f32(64, 2, 3), positions(3), nil, params(64, m, func(p *ops.RopeParams) { p.FreqScale = 0.5 }))},
			{mode.name + "/yarn", rope(f32(128, 2, 4), positions(4, 100000, 8000, 3, 0), nil, params(128, m, yarn))},
			{mode.name + "/yarn-partial-factors", rope(f32(96, 2, 3), positions(3), factors(32), params(64, m, func(p *ops.RopeParams) {
				yarn(p)
				p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow = 0.5, 0.8, 16, 2
			}))},
			{mode.name + "/yarn-no-ctx", rope(f32(32, 2, 2), positions(2), nil, params(32, m, func(p *ops.RopeParams) {
				p.ExtFactor, p.FreqScale = 1, 0.5
			}))},
			{mode.name + "/attn-factor", rope(f32(16, 2, 2), positions(2), nil, params(16, m, func(p *ops.RopeParams) { p.AttnFactor = 0.5 }))},
			{mode.name + "/permuted", rope(func(e *rowOpEnv) *ops.Tensor { return e.permuted([]int64{32, 5, 3}, 0, 2, 1, 3) }, positions(5), nil, params(32, m, nil))},
			{mode.name + "/strided", rope(func(e *rowOpEnv) *ops.Tensor { return e.strided([4]int64{16, 3, 2, 1}, 2, 1) }, positions(2), nil, params(12, m, nil))},
			{mode.name + "/one-pair", rope(f32(2), positions(1, 3), nil, params(2, m, nil))},
			{mode.name + "/no-heads", rope(f32(8, 0, 3), positions(3), nil, params(8, m, nil))},
			{mode.name + "/no-tokens", rope(f32(8, 2, 0), positions(0), nil, params(8, m, nil))},
		}...)
	}
	runRowOpCases(t, tolRope, cases)
}

// TestRopeRotation pins the rotation of one pair against cos and sin.
func TestRopeRotation(t *testing.T) {
	e := newRowOpEnv(t)
	a := e.leaf(quant.F32, []int64{4, 1, 1}, []float64{1, 0, 0, 1})
	pos := e.leaf(quant.I32, []int64{1}, []float64{3})
	got := e.run(mustNode(t)(ops.Rope(a, pos, nil, ops.DefaultRopeParams(4, ops.RopeNormal))))
	// Pair 0 turns by 3 radians, pair 1 by 3/100.
	want := []float64{math.Cos(3), math.Sin(3), -math.Sin(0.03), math.Cos(0.03)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Errorf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// BenchmarkRope measures ROPE of [128, 32 heads, n tokens] (positions
// 0..n-1, base 10000) in both modes on each tier, threads following
// GOMAXPROCS (-cpu 1,2). Bytes are the input read and the output written.
func BenchmarkRope(b *testing.B) {
	for _, ks := range benchTiers() {
		for _, mode := range []struct {
			name string
			mode int
		}{{"normal", ops.RopeNormal}, {"neox", ops.RopeNeoX}} {
			for _, n := range []int64{1, 512} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", ks.name, mode.name, n), func(b *testing.B) {
					be, err := NewWithOptions(Options{Tier: ks.name})
					if err != nil {
						b.Fatal(err)
					}
					defer be.Close()
					rng := rand.New(rand.NewPCG(7, 8))
					a := mxLeaf(b, be, rng, "a", quant.F32, 128, 32, n)
					pos := ropePositions(b, be, n)
					node, err := ops.Rope(a, pos, nil, ops.DefaultRopeParams(128, mode.mode))
					if err != nil {
						b.Fatal(err)
					}
					mxAlloc(b, be, node, 0)
					b.SetBytes(2 * 4 * node.NumElements())
					for b.Loop() {
						if err := be.Compute(node); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestRopeSinCos checks ropeSinCos against math.Sincos over the angles
// ROPE meets (positions up to 10⁶ times speeds up to 1, and a few up to
// ropeFastAngle): the difference must stay far below float32 rounding.
func TestRopeSinCos(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	thetas := []float64{0, math.Copysign(0, -1), 1e-300, math.Pi / 4, math.Pi / 2, math.Pi, -math.Pi, 1e6, -1e6, ropeFastAngle, -ropeFastAngle}
	for i := range 20000 {
		switch i % 3 {
		case 0:
			thetas = append(thetas, (rng.Float64()*2-1)*10)
		case 1:
			thetas = append(thetas, float64(rng.IntN(2000000)-1000000)*math.Pow(10000, -rng.Float64()))
		default:
			thetas = append(thetas, (rng.Float64()*2-1)*ropeFastAngle)
		}
	}
	for _, th := range thetas {
		s, c := ropeSinCos(th)
		ws, wc := math.Sincos(th)
		// Beyond 2^20 the float64 angle itself is only known to ~1e-10.
		lim := 4e-16
		if math.Abs(th) > 1<<20 {
			lim = 1e-15 * math.Abs(th) / (1 << 20)
		}
		if math.Abs(s-ws) > lim || math.Abs(c-wc) > lim {
			t.Fatalf("θ=%v: sin %v cos %v, want %v %v", th, s, c, ws, wc)
		}
	}
}

// TestRopeKernelsTwin compares each tier's ROPE kernels with their twins
// bit for bit: the cache (ropeAnglesTwin) for lengths around the runs of
// four, both layouts, any sign of position, and the head rotations
// (ropeNormGeneric, ropeNeoXGeneric per head) for head sizes around the
// runs of eight and sixteen, several heads at strides, in place or not,
// with NaN and infinities among the values.
func TestRopeKernelsTwin(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		rk := ks.rope
		if rk == genericKernels.rope {
			t.Skip("tier has no ROPE kernels of its own")
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for _, np := range []int{0, 1, 3, 4, 5, 8, 13, 16, 31, 64, 67} {
			for _, pos := range []float64{0, 1, -7, 511, 4095, 100000, -65536, 1 << 30} {
				for _, dup := range []bool{false, true} {
					w := make([]float64, np)
					for i := range w {
						w[i] = math.Pow(10000, -2*float64(i)/float64(2*np)) * (0.25 + rng.Float64())
					}
					if math.Abs(pos)*1.25 > ropeFastAngle {
						continue
					}
					mscale := 0.5 + rng.Float64()
					k := 1
					if dup {
						k = 2
					}
					gc, gs := make([]float32, k*np+1), make([]float32, k*np+1)
					wc, ws := make([]float32, k*np+1), make([]float32, k*np+1)
					gc[k*np], gs[k*np] = 7, 7
					rk.angles(gc, gs, w, pos, mscale, dup)
					ropeAnglesTwin(wc, ws, w, pos, mscale, dup)
					if gc[k*np] != 7 || gs[k*np] != 7 {
						t.Fatalf("np=%d: angles wrote past the cache", np)
					}
					for i := range k * np {
						if math.Float32bits(gc[i]) != math.Float32bits(wc[i]) || math.Float32bits(gs[i]) != math.Float32bits(ws[i]) {
							t.Fatalf("angles np=%d pos=%v dup=%v [%d]: (%v, %v), twin (%v, %v)", np, pos, dup, i, gc[i], gs[i], wc[i], ws[i])
						}
					}
				}
			}
		}
		special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40, 3e38}
		for _, nd := range []int{2, 4, 6, 8, 10, 16, 18, 24, 32, 34, 48, 64, 80, 128, 130} {
			for _, nh := range []int{1, 2, 5} {
				for _, inPlace := range []bool{false, true} {
					xstr := nd + rng.IntN(3)
					ostr := nd + rng.IntN(3)
					if inPlace {
						ostr = xstr
					}
					x := make([]float32, (nh-1)*xstr+nd)
					for i := range x {
						x[i] = rng.Float32()*4 - 2
						if rng.IntN(16) == 0 {
							x[i] = special[rng.IntN(len(special))]
						}
					}
					c, s := make([]float32, nd), make([]float32, nd)
					for i := range c {
						c[i], s[i] = rng.Float32()*2-1, rng.Float32()*2-1
					}
					for _, neox := range []bool{false, true} {
						got, want := make([]float32, (nh-1)*ostr+nd), make([]float32, (nh-1)*ostr+nd)
						for i := range got {
							got[i], want[i] = -3, -3
						}
						src := x
						if inPlace {
							copy(got, x)
							copy(want, x)
							src = got
						}
						if neox {
							rk.neox(got, src, ostr, xstr, nh, nd, c, s)
							genericKernels.rope.neox(want, x, ostr, xstr, nh, nd, c, s)
						} else {
							rk.norm(got, src, ostr, xstr, nh, nd, c, s)
							genericKernels.rope.norm(want, x, ostr, xstr, nh, nd, c, s)
						}
						for i := range got {
							if !sameFloat(got[i], want[i]) {
								t.Fatalf("neox=%v nd=%d nh=%d in-place=%v [%d]: %v, twin %v", neox, nd, nh, inPlace, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}

// TestRopeNoAllocs checks that computing a ROPE node again allocates
// nothing on any tier, in both modes, with two threads splitting it.
func TestRopeNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("AllocsPerRun is slow under -short")
	}
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		b, err := NewWithOptions(Options{Threads: 2, Tier: ks.name})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		rng := rand.New(rand.NewPCG(5, 6))
		for _, mode := range []int{ops.RopeNormal, ops.RopeNeoX} {
			a := mxLeaf(t, b, rng, "a", quant.F32, 64, 8, 64)
			pos := ropePositions(t, b, 64)
			node := mustNode(t)(ops.Rope(a, pos, nil, ops.DefaultRopeParams(64, mode)))
			mxAlloc(t, b, node, 0)
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(40, func() {
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("mode %d: %v allocations per Compute", mode, allocs)
			}
		}
	})
}

// ropePositions returns an allocated i32 leaf holding the positions 0..n-1.
func ropePositions(t testing.TB, b *Backend, n int64) *ops.Tensor {
	t.Helper()
	pos, err := ops.NewTensor("pos", quant.I32, n)
	if err != nil {
		t.Fatal(err)
	}
	mxAlloc(t, b, pos, 0)
	raw, err := pos.HostBytes()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(i))
	}
	return pos
}
