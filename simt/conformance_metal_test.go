package simt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// The Metal conformance tests: each kernel of testdata/conformance.metal
// in both build modes, against answers computed here from the Metal
// Shading Language specification's semantics.

func TestMetalBuiltins(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "builtins")
		grid, tg := Dim3{3, 2, 1}, Dim3{8, 4, 2}
		n := int(grid.count() * tg.count())
		out := alloc(t, 4*12*n)
		launch(t, k, Launch{Grid: grid, Block: tg, Buffers: []Binding{{Index: 0, Buf: out}}})
		got := u32s(out)
		w, h := tg.X*grid.X, tg.Y*grid.Y
		for gz := uint32(0); gz < grid.Z; gz++ {
			for gy := uint32(0); gy < grid.Y; gy++ {
				for gx := uint32(0); gx < grid.X; gx++ {
					for tz := uint32(0); tz < tg.Z; tz++ {
						for ty := uint32(0); ty < tg.Y; ty++ {
							for tx := uint32(0); tx < tg.X; tx++ {
								px, py, pz := gx*tg.X+tx, gy*tg.Y+ty, gz*tg.Z+tz
								idx := tx + ty*tg.X + tz*tg.X*tg.Y
								want := []uint32{px, py, pz, tx | ty<<8 | tz<<16, gx | gy<<8 | gz<<16,
									tg.X | tg.Y<<8 | tg.Z<<16, grid.X | grid.Y<<8 | grid.Z<<16,
									idx, idx % 32, idx / 32, 2, px + py*1000}
								g := px + py*w + pz*w*h
								for j, v := range want {
									if got[12*g+uint32(j)] != v {
										t.Fatalf("thread (%d,%d,%d) of threadgroup (%d,%d,%d): word %d = %d, want %d",
											tx, ty, tz, gx, gy, gz, j, got[12*g+uint32(j)], v)
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

func TestMetalSimdFunctions(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "simd_ops")
		const threads = 48 // a full simdgroup and one of 16 lanes
		out, ballots := alloc(t, 4*16*threads), alloc(t, 4*threads)
		launch(t, k, Launch{Grid: d1(1), Block: d1(threads), Buffers: []Binding{{Index: 0, Buf: out}, {Index: 1, Buf: ballots}}})
		got, gb := f32s(out), u32s(ballots)
		for tid := 0; tid < threads; tid++ {
			l := tid % 32
			n := 32
			if tid >= 32 {
				n = 16
			}
			v := float32(l + 1)
			own := func(src int) float32 {
				if src >= 0 && src < n {
					return float32(src + 1)
				}
				return v
			}
			b2i := func(b bool) int {
				if b {
					return 1
				}
				return 0
			}
			b2f := func(b bool) float32 {
				if b {
					return 1
				}
				return 0
			}
			up := -1
			if l >= 3 {
				up = l - 3
			}
			want := []float32{
				float32(n * (n + 1) / 2), float32(n), 1, 40320,
				float32((l + 1) * (l + 2) / 2), float32(l * (l + 1) / 2),
				own((l + 7) % n), own(l + 3*b2i(n == 32)), own(up), own(l ^ 5), 10,
				b2f(n == 32), b2f(n != 32), float32(16*(l/4) + 10), 1, float32(n * (n + 1)),
			}
			for j := range want {
				if g := got[16*tid+j]; g != want[j] {
					t.Errorf("thread %d result %d: %v, want %v", tid, j, g, want[j])
				}
			}
			wantBallot := uint32(0x11111111)
			if n == 16 {
				wantBallot = 0x1111
			}
			if gb[tid] != wantBallot {
				t.Errorf("thread %d simd_ballot: %#x, want %#x", tid, gb[tid], wantBallot)
			}
		}
	})
}

func TestMetalDivergentSimdFunctions(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "simd_divergent")
		out := alloc(t, 4*32)
		launch(t, k, Launch{Grid: d1(1), Block: d1(32), Buffers: []Binding{{Index: 0, Buf: out}}})
		for l, g := range f32s(out) {
			want := float32(31)
			if l < 12 {
				want = 12
			}
			if g != want {
				t.Errorf("lane %d: %v, want %v (active lanes only)", l, g, want)
			}
		}
	})
}

func TestMetalThreadgroupMemory(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "tg_memory")
		const groups, n = 3, 64
		x := make([]float32, groups*n)
		for i := range x {
			x[i] = float32(i)
		}
		out := alloc(t, 4*len(x))
		launch(t, k, Launch{Grid: d1(groups), Block: d1(n), Threadgroup: []int{4 * n},
			Buffers: []Binding{{Index: 0, Buf: f32Buf(t, x)}, {Index: 1, Buf: out}}})
		for i, g := range f32s(out) {
			b, j := i/n, i%n
			if want := x[b*n+n-1-j] + 2*x[b*n+(j+1)%n]; g != want {
				t.Fatalf("out[%d] = %v, want %v", i, g, want)
			}
		}
	})
}

func TestMetalAtomicsUnderContention(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "atomics")
		const groups, n = 6, 64
		count, fsum, mx, per := alloc(t, 4), alloc(t, 4), alloc(t, 4), alloc(t, 4*groups)
		launch(t, k, Launch{Grid: d1(groups), Block: d1(n),
			Buffers: []Binding{{Index: 0, Buf: count}, {Index: 1, Buf: fsum}, {Index: 2, Buf: mx}, {Index: 3, Buf: per}}})
		wantMax := uint32(0)
		for i := 0; i < groups*n; i++ {
			wantMax = max(wantMax, uint32(i*7%501))
		}
		if c := i32s(count)[0]; c != groups*n {
			t.Errorf("count %d, want %d", c, groups*n)
		}
		if s := f32s(fsum)[0]; s != groups*n/4 {
			t.Errorf("float sum %v, want %d", s, groups*n/4)
		}
		if x := u32s(mx)[0]; x != wantMax {
			t.Errorf("max %d, want %d", x, wantMax)
		}
		for g, v := range i32s(per) {
			if v != 2*n {
				t.Errorf("threadgroup %d: %d, want %d", g, v, 2*n)
			}
		}
	})
}

func TestMetalHalfArithmetic(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "half_ops")
		const n = 256
		r := rand.New(rand.NewPCG(5, 6))
		a, b := alloc(t, 2*n), alloc(t, 2*n)
		av, bv := make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			ha := quant.FP32ToFP16(float32(math.Ldexp(r.Float64()+0.5, r.IntN(6)-3) * float64(1-2*r.IntN(2))))
			hb := quant.FP32ToFP16(float32(math.Ldexp(r.Float64()+0.5, r.IntN(6)-3)))
			binary.LittleEndian.PutUint16(a.Bytes()[2*i:], ha)
			binary.LittleEndian.PutUint16(b.Bytes()[2*i:], hb)
			av[i], bv[i] = float64(quant.FP16ToFP32(ha)), float64(quant.FP16ToFP32(hb))
		}
		out := alloc(t, 2*4*n)
		launch(t, k, Launch{Grid: d1(n / 64), Block: d1(64), Buffers: []Binding{{Index: 0, Buf: a}, {Index: 1, Buf: b}, {Index: 2, Buf: out}}})
		got := u16s(out)
		h := func(u uint16) float64 { return float64(quant.FP16ToFP32(u)) }
		for i := 0; i < n; i++ {
			x, y := av[i], bv[i]
			dot := roundHalf(h(roundHalf(h(roundHalf(x+y))+h(roundHalf(x*y)))) + 1)
			want := []uint16{roundHalf(x + y), roundHalf(x * y), roundHalf(x*y + x), dot}
			for j := range want {
				if g := got[4*i+j]; g != want[j] {
					t.Errorf("op %d on (%v, %v): %v, want %v", j, x, y, h(g), h(want[j]))
				}
			}
		}
	})
}

func TestMetalVectors(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "vectors")
		const n = 8
		x := make([]float32, 4*n)
		for i := 0; i < n; i++ {
			copy(x[4*i:], []float32{float32(i + 1), -float32(i + 2), 0.5 * float32(i), 3})
		}
		out, hout := alloc(t, 4*8*n), alloc(t, 2*4*n)
		args := make([]byte, 8)
		binary.LittleEndian.PutUint32(args, 7)
		binary.LittleEndian.PutUint32(args[4:], math.Float32bits(0.5))
		launch(t, k, Launch{Grid: d1(1), Block: d1(n), Buffers: []Binding{{Index: 0, Buf: f32Buf(t, x)}, {Index: 1, Buf: out}, {Index: 2, Buf: hout}, {Index: 3, Bytes: args}}})
		got, gh := f32s(out), u16s(hout)
		kvals := []float32{1, 2, 4, 8}
		for i := 0; i < n; i++ {
			v := x[4*i : 4*i+4]
			w := []float32{v[2]*2 + 1, v[3]*2 + 1, v[0]*2 + 1, v[1]*2 + 1}
			p := []float32{v[0] + w[2], v[1] + w[3]}
			dot := v[0]*w[0] + v[1]*w[1]
			dot += v[2] * w[2]
			dot += v[3] * w[3]
			want := []float32{w[0], w[1], w[2], w[3], p[0], p[1], dot, max(v[0], v[3])*0.5 + kvals[i%4]}
			for j := range want {
				if g := got[8*i+j]; g != want[j] {
					t.Errorf("vector %d component %d: %v, want %v", i, j, g, want[j])
				}
			}
			for j := 0; j < 4; j++ {
				if gh[4*i+j] != quant.FP32ToFP16(v[j]) {
					t.Errorf("half4 %d component %d: %#04x, want %#04x", i, j, gh[4*i+j], quant.FP32ToFP16(v[j]))
				}
			}
		}
	})
}

func TestMetalSimdgroupMatrixProduct(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.metal", m), "matmul8")
		a, b, c := make([]float32, 64), make([]float32, 64), make([]float32, 64)
		ab, bb := alloc(t, 2*64), alloc(t, 2*64)
		for r := 0; r < 8; r++ {
			for j := 0; j < 8; j++ {
				a[r*8+j] = float32((r*8+j)%7 - 3)
				b[r*8+j] = float32((r+2*j)%5 - 2)
				c[r*8+j] = float32(r - j)
				binary.LittleEndian.PutUint16(ab.Bytes()[2*(r*8+j):], quant.FP32ToFP16(a[r*8+j]))
				binary.LittleEndian.PutUint16(bb.Bytes()[2*(r*8+j):], quant.FP32ToFP16(b[r*8+j]))
			}
		}
		d := alloc(t, 4*128)
		launch(t, k, Launch{Grid: d1(1), Block: d1(32), Threadgroup: []int{2 * 64},
			Buffers: []Binding{{Index: 0, Buf: ab}, {Index: 1, Buf: bb}, {Index: 2, Buf: f32Buf(t, c)}, {Index: 3, Buf: d}}})
		got := f32s(d)
		for r := 0; r < 8; r++ {
			for col := 0; col < 8; col++ {
				want, half := c[r*8+col], float32(0)
				for i := 0; i < 8; i++ {
					want += a[r*8+i] * b[col*8+i] // b loaded transposed
					half += a[r*8+i] * 0.5
				}
				if g := got[r*8+col]; g != want {
					t.Errorf("a*b^T+c [%d][%d] = %v, want %v", r, col, g, want)
				}
				if g := got[64+r*8+col]; g != half {
					t.Errorf("a*0.5 [%d][%d] = %v, want %v", r, col, g, half)
				}
			}
		}
	})
}

func TestMetalTemplateInstantiations(t *testing.T) {
	mod := load(t, "conformance.metal", Fast)
	x := []float32{1, -2, 0.5, 1024}
	for _, name := range []string{"kernel_scale_f32", "kernel_scale_f16"} {
		k := kernel(t, mod, name)
		in := f32Buf(t, x)
		if name == "kernel_scale_f16" {
			in = alloc(t, 2*len(x))
			for i, v := range x {
				binary.LittleEndian.PutUint16(in.Bytes()[2*i:], quant.FP32ToFP16(v))
			}
		}
		y := alloc(t, 4*len(x))
		launch(t, k, Launch{Grid: d1(1), Block: d1(uint32(len(x))), Buffers: []Binding{{Index: 0, Buf: in}, {Index: 1, Buf: y}}})
		for i, g := range f32s(y) {
			if g != 3*x[i] {
				t.Errorf("%s: y[%d] = %v, want %v", name, i, g, 3*x[i])
			}
		}
	}
	k := kernel(t, mod, "kernel_scale_f16")
	if len(k.Params) != 3 || k.Params[0].Bind != BindBuffer || k.Params[2].Bind != BindBuiltin || k.Params[2].Builtin != "thread_position_in_grid" {
		t.Errorf("kernel_scale_f16 parameters: %+v", k.Params)
	}
}

func TestMetalFaults(t *testing.T) {
	m := load(t, "faults.metal", Checked)
	t.Run("missing barrier", func(t *testing.T) {
		_, err := kernel(t, m, "tg_no_barrier").Launch(Launch{Grid: d1(1), Block: d1(64),
			Buffers: []Binding{{Index: 0, Buf: f32Buf(t, make([]float32, 64))}, {Index: 1, Buf: alloc(t, 4*64)}}})
		fault(t, err, Race, "tg_no_barrier", "shared variable buf of tg_no_barrier", "faults.metal:8 (write)", "faults.metal:9 (read)")
	})
	t.Run("threadgroup overrun", func(t *testing.T) {
		_, err := kernel(t, m, "tg_overrun").Launch(Launch{Grid: d1(1), Block: d1(64), Threadgroup: []int{4 * 64},
			Buffers: []Binding{{Index: 0, Buf: alloc(t, 4*64)}}})
		fault(t, err, OutOfBounds, "threadgroup-memory write", "offset 256", "faults.metal:14 (write)")
	})
	t.Run("threadgroup array overrun", func(t *testing.T) {
		_, err := kernel(t, m, "tg_array_overrun").Launch(Launch{Grid: d1(1), Block: d1(64), Buffers: []Binding{{Index: 0, Buf: alloc(t, 4*64)}}})
		fault(t, err, OutOfBounds, "shared-memory read", "thread (63,0,0)", "byte 256 of shared array a of tg_array_overrun, which has 256 bytes", "faults.metal:32 (read)")
	})
	t.Run("divergent barrier", func(t *testing.T) {
		_, err := kernel(t, m, "tg_divergent_barrier").Launch(Launch{Grid: d1(1), Block: d1(64), Buffers: []Binding{{Index: 0, Buf: alloc(t, 4*64)}}})
		fault(t, err, DivergentBarrier, "tg_divergent_barrier", "threadgroup_barrier at faults.metal:22")
	})
	t.Run("unbound buffer", func(t *testing.T) {
		_, err := kernel(t, m, "tg_overrun").Launch(Launch{Grid: d1(1), Block: d1(64), Buffers: []Binding{{Index: 0, Buf: alloc(t, 4*64)}}})
		if err == nil || err.Error() != "simt: launch of tg_overrun: [[threadgroup(0)]] shm has no length" {
			t.Errorf("launch without threadgroup memory: %v", err)
		}
		_, err = kernel(t, m, "tg_overrun").Launch(Launch{Grid: d1(1), Block: d1(64), Threadgroup: []int{256}})
		if err == nil || err.Error() != "simt: launch of tg_overrun: [[buffer(0)]] out is not bound" {
			t.Errorf("launch without its buffer: %v", err)
		}
	})
}
