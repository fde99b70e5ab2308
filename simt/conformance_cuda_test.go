package simt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// The CUDA conformance tests: each kernel of testdata/conformance.cu,
// in both build modes, against answers computed here from CUDA's
// documented semantics.

func TestCUDABarrierReduction(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "block_sum")
		const n, blocks, threads = 5000, 4, 256
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i % 17)
		}
		out := alloc(t, 4*blocks)
		st := launch(t, k, Launch{Grid: d1(blocks), Block: d1(threads), Args: []any{f32Buf(t, x), out, n}})
		got := f32s(out)
		for b := 0; b < blocks; b++ {
			var want float32
			for i := range x {
				if (i/threads)%blocks == b {
					want += x[i]
				}
			}
			if got[b] != want {
				t.Errorf("block %d: sum %v, want %v", b, got[b], want)
			}
		}
		// 1 + log2(256) barriers per block.
		if st.Blocks != blocks || st.Barriers != blocks*9 {
			t.Errorf("stats %+v: want %d blocks, %d barriers", st, blocks, blocks*9)
		}
		if m == Checked && st.Accesses == 0 {
			t.Errorf("checked module counted no accesses")
		}
	})
}

func TestCUDAShuffles(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "shuffles")
		const threads, src, delta = 64, 5, 3
		out := alloc(t, 4*threads*12)
		launch(t, k, Launch{Grid: d1(1), Block: d1(threads), Args: []any{out, src, delta}})
		got := i32s(out)
		v := func(t int) int32 { return int32(t*7 + 3) }
		for tid := 0; tid < threads; tid++ {
			lane, base := tid%32, tid/32*32
			for w, width := range []int{32, 16, 8} {
				seg := lane & (width - 1)
				want := [4]int32{
					v(base + (lane &^ (width - 1)) + ((src + lane) & (width - 1))),
					v(tid), v(tid), v(tid),
				}
				if seg >= delta {
					want[1] = v(tid - delta)
				}
				if seg+delta < width {
					want[2] = v(tid + delta)
				}
				if x := lane ^ delta; x < (lane/width+1)*width {
					want[3] = v(base + x)
				}
				for j, name := range []string{"shfl", "shfl_up", "shfl_down", "shfl_xor"} {
					if g := got[tid*12+4*w+j]; g != want[j] {
						t.Errorf("thread %d width %d %s: %d, want %d", tid, width, name, g, want[j])
					}
				}
			}
		}
	})
}

func TestCUDAShuffleTypes(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "shuffle_types")
		of, oh, od, sum := alloc(t, 4*32), alloc(t, 4*32), alloc(t, 8*32), alloc(t, 4*32)
		launch(t, k, Launch{Grid: d1(1), Block: d1(32), Args: []any{of, oh, od, sum}})
		f, h, s := f32s(of), u16s(oh), f32s(sum)
		for l := 0; l < 32; l++ {
			if want := float32(l^1) * 0.5; f[l] != want {
				t.Errorf("float lane %d: %v, want %v", l, f[l], want)
			}
			src := l
			if l+2 < 32 {
				src = l + 2
			}
			if lo, hi := quant.FP16ToFP32(h[2*l]), quant.FP16ToFP32(h[2*l+1]); lo != float32(src) || hi != -float32(src) {
				t.Errorf("half2 lane %d: (%v, %v), want (%d, -%d)", l, lo, hi, src, src)
			}
			d := math.Float64frombits(binary.LittleEndian.Uint64(od.Bytes()[8*l:]))
			if want := float64(31-l) * 1.25; d != want {
				t.Errorf("double lane %d: %v, want %v", l, d, want)
			}
			if s[l] != 496 {
				t.Errorf("warp sum at lane %d: %v, want 496", l, s[l])
			}
		}
	})
}

func TestCUDAVotes(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "votes")
		out := alloc(t, 4*64*7)
		launch(t, k, Launch{Grid: d1(1), Block: d1(64), Args: []any{out}})
		got := u32s(out)
		var ballot3 uint32
		for l := 0; l < 32; l += 3 {
			ballot3 |= 1 << l
		}
		for tid := 0; tid < 64; tid++ {
			lane := tid % 32
			want := []uint32{ballot3, 1, 1, 0, 0, 0xf << (4 * (lane / 4)), 496}
			if lane < 16 {
				want[4] = 0xaaaa
			}
			for j := range want {
				if g := got[tid*7+j]; g != want[j] {
					t.Errorf("thread %d vote %d: %#x, want %#x", tid, j, g, want[j])
				}
			}
		}
	})
}

func TestCUDAAtomicsUnderContention(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "atomics")
		const blocks, threads = 8, 128
		count, fsum, imax, cas, per := alloc(t, 4), alloc(t, 4), alloc(t, 4), alloc(t, 4), alloc(t, 4*blocks)
		launch(t, k, Launch{Grid: d1(blocks), Block: d1(threads), Args: []any{count, fsum, imax, cas, per}})
		wantMax := int32(0)
		for id := 0; id < blocks*threads; id++ {
			wantMax = max(wantMax, int32(id*3%1001))
		}
		if c := i32s(count)[0]; c != blocks*threads {
			t.Errorf("atomicAdd count %d, want %d", c, blocks*threads)
		}
		if s := f32s(fsum)[0]; s != blocks*threads/2 {
			t.Errorf("float atomicAdd %v, want %d", s, blocks*threads/2)
		}
		if x := i32s(imax)[0]; x != wantMax {
			t.Errorf("atomicMax %d, want %d", x, wantMax)
		}
		if c := u32s(cas)[0]; c != 2*blocks*threads {
			t.Errorf("atomicCAS loop %d, want %d", c, 2*blocks*threads)
		}
		for b, n := range i32s(per) {
			if n != threads {
				t.Errorf("block %d: shared atomicAdd %d, want %d", b, n, threads)
			}
		}
	})
}

func TestCUDADynamicShared(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "dyn_reverse")
		const blocks, n = 3, 100
		x := make([]float32, blocks*n)
		for i := range x {
			x[i] = float32(i)
		}
		out := alloc(t, 4*len(x))
		launch(t, k, Launch{Grid: d1(blocks), Block: d1(n), SharedBytes: 4 * n, Args: []any{f32Buf(t, x), out}})
		for i, g := range f32s(out) {
			b, j := i/n, i%n
			if want := x[b*n+n-1-j]; g != want {
				t.Fatalf("out[%d] = %v, want %v", i, g, want)
			}
		}
	})
}

// conversionInputs are floats at every rounding boundary of half and
// bfloat16, and random ones.
func conversionInputs() []float32 {
	in := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65519.99, 65520, -65520, 1e9,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1 + 1.0/2048, 1 + 3.0/2048, 1 + 1.0/4096, -(1 + 3.0/2048),
		float32(math.Ldexp(1, -24)), float32(math.Ldexp(1, -25)), float32(math.Ldexp(3, -26)), float32(math.Ldexp(1, -14)),
		float32(math.Ldexp(1023, -24)), float32(math.Ldexp(2047, -25)), 1e-8, 6e-8, -3e-5,
		1 + 1.0/256, 1 + 3.0/256, math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000), math.MaxFloat32,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for len(in) < 1000 {
		in = append(in, float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(12)-6))))
	}
	return in
}

func TestCUDAHalfAndBFloat16Rounding(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "convert")
		in := conversionInputs()
		n := len(in)
		h, b, hb, bb := alloc(t, 2*n), alloc(t, 2*n), alloc(t, 4*n), alloc(t, 4*n)
		launch(t, k, Launch{Grid: d1(uint32((n + 127) / 128)), Block: d1(128), Args: []any{f32Buf(t, in), h, b, hb, bb, n}})
		hs, bs, hbs, bbs := u16s(h), u16s(b), f32s(hb), f32s(bb)
		for i, x := range in {
			if x != x {
				if hs[i]&0x7c00 != 0x7c00 || hs[i]&0x3ff == 0 || bs[i]&0x7f80 != 0x7f80 || bs[i]&0x7f == 0 || hbs[i] == hbs[i] || bbs[i] == bbs[i] {
					t.Errorf("NaN: half %#04x, bfloat16 %#04x, back %v %v", hs[i], bs[i], hbs[i], bbs[i])
				}
				continue
			}
			if want := quant.FP32ToFP16(x); hs[i] != want {
				t.Errorf("half(%g = %#08x): %#04x, want %#04x", x, math.Float32bits(x), hs[i], want)
			}
			if want := quant.FP32ToBF16(x); bs[i] != want {
				t.Errorf("bfloat16(%g = %#08x): %#04x, want %#04x", x, math.Float32bits(x), bs[i], want)
			}
			if want := quant.FP16ToFP32(quant.FP32ToFP16(x)); math.Float32bits(hbs[i]) != math.Float32bits(want) {
				t.Errorf("float(half(%g)): %v, want %v", x, hbs[i], want)
			}
			if want := quant.BF16ToFP32(quant.FP32ToBF16(x)); math.Float32bits(bbs[i]) != math.Float32bits(want) {
				t.Errorf("float(bfloat16(%g)): %v, want %v", x, bbs[i], want)
			}
		}
	})
}

// roundHalf rounds x (normal in half) to the nearest half, ties to even,
// in one step.
func roundHalf(x float64) uint16 {
	if x == 0 {
		return quant.FP32ToFP16(float32(x))
	}
	frac, exp := math.Frexp(x)
	m := math.RoundToEven(frac * 2048)
	return quant.FP32ToFP16(float32(math.Ldexp(m, exp-11)))
}

func TestCUDAHalfArithmetic(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "half_ops")
		const n = 256
		r := rand.New(rand.NewPCG(3, 4))
		a, b := alloc(t, 2*n), alloc(t, 2*n)
		av, bv := make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			ha := quant.FP32ToFP16(float32(math.Ldexp(r.Float64()+0.5, r.IntN(8)-4) * float64(1-2*r.IntN(2))))
			hb := quant.FP32ToFP16(float32(math.Ldexp(r.Float64()+0.5, r.IntN(8)-4)))
			binary.LittleEndian.PutUint16(a.Bytes()[2*i:], ha)
			binary.LittleEndian.PutUint16(b.Bytes()[2*i:], hb)
			av[i], bv[i] = float64(quant.FP16ToFP32(ha)), float64(quant.FP16ToFP32(hb))
		}
		out := alloc(t, 2*4*n)
		launch(t, k, Launch{Grid: d1(1), Block: d1(n), Args: []any{a, b, out}})
		got := u16s(out)
		h := func(u uint16) float64 { return float64(quant.FP16ToFP32(u)) }
		for i := 0; i < n; i++ {
			x, y := av[i], bv[i]
			want := []uint16{roundHalf(x + y), roundHalf(x * y), roundHalf(x*y + x), roundHalf(h(roundHalf(x*y)) + h(roundHalf(y*y)))}
			for j := range want {
				if g := got[4*i+j]; g != want[j] {
					t.Errorf("op %d on (%v, %v): %#04x (%v), want %#04x (%v)", j, x, y, g, h(g), want[j], h(want[j]))
				}
			}
		}
	})
}

func TestCUDAGridAndBlockIndices(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "indices")
		grid, block := Dim3{3, 2, 2}, Dim3{4, 3, 2}
		n := int(grid.count() * block.count())
		out := alloc(t, 8*n)
		launch(t, k, Launch{Grid: grid, Block: block, Args: []any{out}})
		got := u32s(out)
		seen := 0
		for bz := uint32(0); bz < grid.Z; bz++ {
			for by := uint32(0); by < grid.Y; by++ {
				for bx := uint32(0); bx < grid.X; bx++ {
					for tz := uint32(0); tz < block.Z; tz++ {
						for ty := uint32(0); ty < block.Y; ty++ {
							for tx := uint32(0); tx < block.X; tx++ {
								b := bx + grid.X*(by+grid.Y*bz)
								g := b*uint32(block.count()) + tx + block.X*(ty+block.Y*tz)
								if got[2*g] != tx|ty<<8|tz<<16 || got[2*g+1] != bx|by<<8|bz<<16 {
									t.Fatalf("thread (%d,%d,%d) of block (%d,%d,%d): %#x %#x", tx, ty, tz, bx, by, bz, got[2*g], got[2*g+1])
								}
								seen++
							}
						}
					}
				}
			}
		}
		if seen != n {
			t.Fatalf("checked %d threads of %d", seen, n)
		}
	})
}

func TestCUDABarrierVotes(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "bar_votes")
		out := alloc(t, 12)
		launch(t, k, Launch{Grid: d1(1), Block: d1(200), Args: []any{out}})
		if got := i32s(out); got[0] != 40 || got[1] != 1 || got[2] != 1 {
			t.Errorf("__syncthreads_count/and/or: %v, want [40 1 1]", got)
		}
	})
}

func TestCUDAWarpSynchronousExchange(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "warp_sync_exchange")
		out := alloc(t, 4*64)
		st := launch(t, k, Launch{Grid: d1(1), Block: d1(64), Args: []any{out}})
		for i, g := range i32s(out) {
			j := i&^31 + 31 - i&31
			if g != int32(j*j) {
				t.Fatalf("out[%d] = %d, want %d", i, g, j*j)
			}
		}
		if st.Races != 0 {
			t.Errorf("__syncwarp orders the exchange, but %d races were reported", st.Races)
		}
	})
}

func TestCUDALocalArrayOnStack(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "local_array")
		out := alloc(t, 4*2*64)
		launch(t, k, Launch{Grid: d1(2), Block: d1(64), Args: []any{out}})
		for i, g := range f32s(out) {
			tid := i % 64
			var want float32
			for i := 0; i < 4096; i += 97 {
				want += float32(i ^ tid)
			}
			if g != want {
				t.Fatalf("thread %d: %v, want %v", tid, g, want)
			}
		}
	})
}

func TestCUDAAssemblyWithEmulatorImplementation(t *testing.T) {
	k := kernel(t, load(t, "conformance.cu", Fast), "lanes")
	out := alloc(t, 4*64)
	launch(t, k, Launch{Grid: d1(1), Block: d1(64), Args: []any{out}})
	for i, g := range u32s(out) {
		if g != uint32(i%32) {
			t.Fatalf("lane_id() of thread %d = %d", i, g)
		}
	}
}

func TestCUDAPartialWarp(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "partial_warp")
		out := alloc(t, 4*48)
		launch(t, k, Launch{Grid: d1(1), Block: d1(48), Args: []any{out}})
		for i, g := range i32s(out) {
			want := int32(496)
			if i >= 32 {
				want = 632 // 32 + ... + 47
			}
			if g != want {
				t.Errorf("thread %d: %d, want %d", i, g, want)
			}
		}
	})
}

func TestCUDAOneWorker(t *testing.T) {
	k := kernel(t, load(t, "conformance.cu", Fast), "block_sum")
	x := make([]float32, 4096)
	for i := range x {
		x[i] = 1
	}
	out := alloc(t, 4*16)
	st := launch(t, k, Launch{Grid: d1(16), Block: d1(256), Workers: 1, Args: []any{f32Buf(t, x), out, len(x)}})
	for b, g := range f32s(out) {
		if g != 256 {
			t.Errorf("block %d: %v, want 256", b, g)
		}
	}
	if st.Blocks != 16 {
		t.Errorf("ran %d blocks, want 16", st.Blocks)
	}
}
