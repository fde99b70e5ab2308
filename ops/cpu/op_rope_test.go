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
