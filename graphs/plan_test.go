package graphs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

func TestAllocator(t *testing.T) {
	type op struct {
		alloc    bool
		size     int64
		off      int64 // for release; for alloc, the offset wanted
		wantEnd  int64
		wantFree []block
	}
	a := func(size, off, end int64, free ...block) op { return op{true, size, off, end, free} }
	r := func(off, size, end int64, free ...block) op { return op{false, size, off, end, free} }
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"grow", []op{a(64, 0, 64), a(128, 64, 192), a(0, 0, 192)}},
		{"reuse freed", []op{a(64, 0, 64), a(64, 64, 128), r(0, 64, 128, block{0, 64}), a(64, 0, 128)}},
		{"best fit", []op{
			a(128, 0, 128), a(64, 128, 192), a(64, 192, 256), a(64, 256, 320),
			r(0, 128, 320, block{0, 128}), r(192, 64, 320, block{0, 128}, block{192, 64}),
			a(64, 192, 320, block{0, 128}), // the 64-byte hole fits exactly
			a(64, 0, 320, block{64, 64}),
		}},
		{"merge both sides", []op{
			a(64, 0, 64), a(64, 64, 128), a(64, 128, 192),
			r(0, 64, 192, block{0, 64}), r(128, 64, 192, block{0, 64}, block{128, 64}),
			r(64, 64, 192, block{0, 192}),
			a(192, 0, 192),
		}},
		{"extend last free block", []op{
			a(64, 0, 64), a(64, 64, 128), r(64, 64, 128, block{64, 64}),
			a(192, 64, 256),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var al allocator
			for i, o := range tc.ops {
				if o.alloc {
					off, err := al.alloc(o.size)
					if err != nil {
						t.Fatal(err)
					}
					if off != o.off {
						t.Fatalf("op %d: alloc(%d) = %d, want %d", i, o.size, off, o.off)
					}
				} else {
					al.release(o.off, o.size)
				}
				if al.end != o.wantEnd {
					t.Fatalf("op %d: end %d, want %d", i, al.end, o.wantEnd)
				}
				if fmt.Sprint(al.free) != fmt.Sprint(o.wantFree) && len(al.free)+len(o.wantFree) > 0 {
					t.Fatalf("op %d: free %v, want %v", i, al.free, o.wantFree)
				}
			}
		})
	}
	var al allocator
	if _, err := al.alloc(1 << 62); err != nil {
		t.Fatal(err)
	}
	if _, err := al.alloc(1 << 62); err == nil {
		t.Error("allocating past int64 succeeded")
	}
}

// checkPlan fails unless no two values of p that are live at the same
// step share bytes, except a node computed in place in its dying source,
// and every value lies inside its backend's arena.
func checkPlan(t *testing.T, p *Plan) {
	t.Helper()
	end := func(v *value) int {
		if v.output {
			return len(p.steps)
		}
		return v.last
	}
	for i, a := range p.values {
		if a.off < 0 || a.off+a.size > p.mem[a.be].Size {
			t.Errorf("%s at [%d,%d) outside the %d-byte arena", a.t.Label(), a.off, a.off+a.size, p.mem[a.be].Size)
		}
		for _, b := range p.values[i+1:] {
			if a.be != b.be || a.size == 0 || b.size == 0 {
				continue
			}
			if a.def > end(b) || b.def > end(a) {
				continue // never live together
			}
			if a.off >= b.off+b.size || b.off >= a.off+a.size {
				continue // disjoint bytes
			}
			inPlace := a.off == b.off && (a.donated && a.last == b.def || b.donated && b.last == a.def)
			if !inPlace {
				t.Errorf("%s [%d,%d) live %d..%d overlaps %s [%d,%d) live %d..%d",
					a.t.Label(), a.off, a.off+a.size, a.def, end(a), b.t.Label(), b.off, b.off+b.size, b.def, end(b))
			}
		}
	}
}

// randGraph builds a random graph over [16, 4] f32 activations: unary,
// binary and matrix nodes, transposed copies and reshaped views, with a
// few outputs. Leaves are allocated on b.
func randGraph(t *testing.T, r *rand.Rand, b ops.Backend, n int) *Graph {
	m := must(t)
	vals := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	w := leaf(t, b, "w", quant.F32, []int64{16, 16}, vals(256))
	wq := leaf(t, b, "wq", quant.F32, []int64{16, 16}, vals(256))
	acts := []*ops.Tensor{leaf(t, b, "x0", quant.F32, []int64{16, 4}, vals(64)), leaf(t, b, "x1", quant.F32, []int64{16, 4}, vals(64))}
	pick := func() *ops.Tensor {
		// Favour recent nodes so that chains form, but reach back too.
		if r.IntN(3) == 0 {
			return acts[r.IntN(len(acts))]
		}
		return acts[max(0, len(acts)-1-r.IntN(3))]
	}
	var outs []*ops.Tensor
	g := &Graph{}
	for i := range n {
		var x *ops.Tensor
		switch r.IntN(12) {
		case 0:
			x = m(ops.Add(pick(), pick()))
		case 1:
			x = m(ops.Mul(pick(), pick()))
		case 2:
			x = m(ops.Scale(pick(), 0.5, 0.25))
		case 3:
			x = m(ops.Silu(pick()))
		case 4:
			x = m(ops.Gelu(pick()))
		case 5:
			x = m(ops.SwiGLU(pick(), pick(), false))
		case 6:
			x = m(ops.RMSNorm(pick(), 1e-5))
		case 7:
			x = m(ops.MulMat(w, pick()))
		case 8:
			x = m(ops.MulMat(wq, pick()))
		case 9: // a transposed copy read back through a reshaped view
			c := m(ops.Cont(m(ops.Transpose(pick()))))
			x = m(ops.Reshape(c, 16, 4))
		case 10: // an elementwise node over a view of a node
			x = m(ops.Silu(m(ops.Reshape(m(ops.Reshape(pick(), 64)), 16, 4))))
		default: // a CPY into the second half of a computed node
			dst := pick()
			if owner(dst).Op == ops.OpNone {
				dst = m(ops.Scale(dst, 1, 0))
			}
			half := m(ops.View(dst, []int64{16, 2}, []int64{0, dst.Nb[1]}, 2*dst.Nb[1]))
			src := m(ops.View(m(ops.Silu(pick())), []int64{16, 2}, []int64{0, 64}, 0))
			cp := m(ops.Cpy(src, half))
			x = m(ops.Add(dst, pick()))
			if err := g.After(x, cp); err != nil {
				t.Fatal(err)
			}
		}
		x.SetName(fmt.Sprintf("n%d", i))
		acts = append(acts, x)
		if r.IntN(8) == 0 {
			outs = append(outs, x)
		}
	}
	outs = append(outs, acts[len(acts)-1])
	if err := g.Expand(outs...); err != nil {
		t.Fatal(err)
	}
	return g
}

// outputBytes returns a copy of the bytes of each output of g.
func outputBytes(t *testing.T, g *Graph) [][]byte {
	t.Helper()
	var out [][]byte
	for _, o := range g.Outputs() {
		raw, err := o.HostBytes()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(raw))
	}
	return out
}

func TestPlanRandomGraphs(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 2))
	reused, inPlace := 0, 0
	const graphs = 40
	for i := range graphs {
		g := randGraph(t, r, b, 10+r.IntN(30))
		var results [][][]byte
		for _, o := range []Options{{}, {NoInPlace: true}, {NoReuse: true}} {
			s, err := NewScheduler(o, b)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Compute(context.Background(), g); err != nil {
				t.Fatalf("graph %d %+v: %v", i, o, err)
			}
			p := g.Plan()
			checkPlan(t, p)
			m := p.Memory()[0]
			switch {
			case m.Size < m.PeakLive || m.PeakLive > m.Total || m.Size > m.Total:
				t.Errorf("graph %d %+v: size %d, peak live %d, total %d", i, o, m.Size, m.PeakLive, m.Total)
			case o.NoReuse && (m.Size != m.Total || m.InPlace != 0):
				t.Errorf("graph %d: without reuse the arena is %d of %d bytes, %d in place", i, m.Size, m.Total, m.InPlace)
			case o == Options{}:
				if m.Size < m.Total {
					reused++
				}
				inPlace += m.InPlace
			}
			results = append(results, outputBytes(t, g))
		}
		for k := 1; k < len(results); k++ {
			for j := range results[0] {
				if !bytes.Equal(results[0][j], results[k][j]) {
					t.Fatalf("graph %d: output %d (%s) differs between plan 0 and plan %d", i, j, g.Outputs()[j].Label(), k)
				}
			}
		}
	}
	t.Logf("%d of %d graphs reused memory; %d nodes in place", reused, graphs, inPlace)
	if reused < graphs/2 || inPlace == 0 {
		t.Errorf("only %d of %d graphs reused memory, %d nodes in place", reused, graphs, inPlace)
	}
}

// TestPlanViewsKeepBaseAlive: a node read only through a view must keep
// its bytes until the view's last reader.
func TestPlanViewsKeepBaseAlive(t *testing.T) {
	m := must(t)
	b := cputest.New(t, 1)
	defer b.Close()
	x := leaf(t, b, "x", quant.F32, []int64{8, 2}, ramp(16, 1))
	base := m(ops.Scale(x, 2, 0)).SetName("base")
	view := m(ops.Reshape(base, 16)).SetName("view")
	mid := m(ops.Silu(x)).SetName("mid")
	mid2 := m(ops.Scale(mid, 3, 0)).SetName("mid2")
	sum := m(ops.SumRows(view)).SetName("sum")
	out := m(ops.Add(sum, m(ops.SumRows(m(ops.Reshape(mid2, 16))))))
	g := must3(t)(New(out))
	if err := g.Compute(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	p := g.Plan()
	checkPlan(t, p)
	var vb *value
	for _, v := range p.values {
		if v.t == base {
			vb = v
		}
	}
	if vb == nil || p.steps[vb.last].node != sum {
		t.Fatalf("base lives until step %d, want the step of %s", vb.last, sum.Label())
	}
	got, err := out.HostBytes()
	if err != nil {
		t.Fatal(err)
	}
	// sum(2x) + sum(3 silu(x)) computed by hand.
	want := float32(0)
	for _, v := range ramp(16, 1) {
		want += 2*v + 3*(v/(1+expf(-v)))
	}
	if d := f32(got) - want; d > 1e-4 || d < -1e-4 {
		t.Errorf("out = %v, want %v", f32(got), want)
	}
}

func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// f32 returns the first float32 of raw.
func f32(raw []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(raw)) }
