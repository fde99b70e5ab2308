package simt

import (
	"math"
	"testing"
)

// profiled runs one launch under the profiler and returns its profile.
func profiled(t *testing.T, k *Kernel, l Launch, o ProfileOptions) KernelProfile {
	t.Helper()
	d := device(t)
	if err := d.StartProfile(o); err != nil {
		t.Fatal(err)
	}
	_, err := k.Launch(l)
	ps := d.StopProfile()
	if err != nil {
		t.Fatalf("launch of %s: %v", k.Name, err)
	}
	if len(ps) != 1 || ps[0].Kernel != k.Name {
		t.Fatalf("want one profile of %s, got %d: %+v", k.Name, len(ps), ps)
	}
	if !ps[0].Instrumented {
		t.Fatalf("profile of %s: module not instrumented", k.Name)
	}
	return ps[0]
}

// TestProfileKnownAnswers checks each counter against the value worked
// out by hand in testdata/profile.cu.
func TestProfileKnownAnswers(t *testing.T) {
	mod := load(t, "profile.cu", Checked)
	full := func(req uint64) GlobalCounters { return GlobalCounters{req, 4 * req, 128 * req, 32 * req} }
	for _, tc := range []struct {
		name   string
		launch func(k *Kernel) Launch
		check  func(t *testing.T, p KernelProfile)
	}{
		{"copy_f32", func(k *Kernel) Launch {
			return Launch{Grid: d1(16), Block: d1(256), Args: []any{alloc(t, 4*4096), alloc(t, 4*4096), int32(4096)}}
		}, func(t *testing.T, p KernelProfile) {
			// 4096 floats: 128 warps, one load and one store each.
			if p.GlobalLoads != full(128) || p.GlobalStores != full(128) {
				t.Errorf("loads %+v stores %+v, want %+v each", p.GlobalLoads, p.GlobalStores, full(128))
			}
			if p.GlobalLoads.SectorsPerRequest() != 4 || p.GlobalLoads.Efficiency() != 1 {
				t.Errorf("sectors/request %v efficiency %v, want 4 and 1", p.GlobalLoads.SectorsPerRequest(), p.GlobalLoads.Efficiency())
			}
			if p.Warps != 128 || p.WarpEfficiency() != 1 {
				t.Errorf("warps %d efficiency %v, want 128 and 1", p.Warps, p.WarpEfficiency())
			}
			// Each buffer: 16384 bytes, 512 sectors, once.
			if len(p.Buffers) != 2 || p.DRAMBytes() != 2*16384 {
				t.Errorf("buffers %+v (DRAM bytes %v), want 512 sectors read of one and written of the other", p.Buffers, p.DRAMBytes())
			}
			for _, b := range p.Buffers {
				if b.ReadSectors+b.WriteSectors != 512 {
					t.Errorf("buffer %+v: want 512 sectors", b)
				}
			}
		}},
		{"stride32", func(k *Kernel) Launch {
			return Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4*32*32), alloc(t, 4*32)}}
		}, func(t *testing.T, p KernelProfile) {
			if want := (GlobalCounters{1, 32, 128, 32}); p.GlobalLoads != want {
				t.Errorf("loads %+v, want %+v", p.GlobalLoads, want)
			}
			if p.GlobalLoads.SectorsPerRequest() != 32 || p.GlobalStores.SectorsPerRequest() != 4 {
				t.Errorf("sectors/request: loads %v stores %v, want 32 and 4", p.GlobalLoads.SectorsPerRequest(), p.GlobalStores.SectorsPerRequest())
			}
			if p.GlobalLoads.Efficiency() != 0.125 {
				t.Errorf("load efficiency %v, want 128/1024", p.GlobalLoads.Efficiency())
			}
		}},
		{"transpose32", func(k *Kernel) Launch {
			return Launch{Grid: d1(1), Block: Dim3{32, 32, 1}, Args: []any{alloc(t, 4096), alloc(t, 4096)}}
		}, func(t *testing.T, p KernelProfile) {
			if want := (SharedCounters{32, 32, 32, 1024}); p.SharedStores != want {
				t.Errorf("shared stores %+v, want %+v", p.SharedStores, want)
			}
			if want := (SharedCounters{32, 32 * 32, 32, 1024}); p.SharedLoads != want {
				t.Errorf("shared loads %+v, want %+v (32-way conflicts)", p.SharedLoads, want)
			}
			if p.SharedLoads.BankConflicts() != 31*32 {
				t.Errorf("bank conflicts %d, want %d", p.SharedLoads.BankConflicts(), 31*32)
			}
			if p.Barriers != 1 || p.StaticShared != 4096 {
				t.Errorf("barriers %d static shared %d, want 1 and 4096", p.Barriers, p.StaticShared)
			}
		}},
		{"transpose33", func(k *Kernel) Launch {
			return Launch{Grid: d1(1), Block: Dim3{32, 32, 1}, Args: []any{alloc(t, 4096), alloc(t, 4096)}}
		}, func(t *testing.T, p KernelProfile) {
			if want := (SharedCounters{32, 32, 32, 1024}); p.SharedLoads != want || p.SharedStores != want {
				t.Errorf("shared loads %+v stores %+v, want %+v each (no conflicts)", p.SharedLoads, p.SharedStores, want)
			}
			if p.StaticShared != 32*33*4 {
				t.Errorf("static shared %d, want %d", p.StaticShared, 32*33*4)
			}
		}},
		{"half_branch", func(k *Kernel) Launch {
			return Launch{Grid: d1(1), Block: d1(64), Args: []any{alloc(t, 256), alloc(t, 256)}}
		}, func(t *testing.T, p KernelProfile) {
			if want := (GlobalCounters{2, 8, 128, 32}); p.GlobalLoads != want || p.GlobalStores != want {
				t.Errorf("loads %+v stores %+v, want %+v each", p.GlobalLoads, p.GlobalStores, want)
			}
			if p.WarpEfficiency() != 0.5 {
				t.Errorf("warp efficiency %v, want 0.5", p.WarpEfficiency())
			}
		}},
		{"atomic_same", func(k *Kernel) Launch {
			return Launch{Grid: d1(1), Block: d1(32), Args: []any{alloc(t, 4)}}
		}, func(t *testing.T, p KernelProfile) {
			if want := (AtomicCounters{1, 1, 32, 31}); p.Atomics != want {
				t.Errorf("atomics %+v, want %+v", p.Atomics, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kernel(t, mod, tc.name)
			tc.check(t, profiled(t, k, tc.launch(k), ProfileOptions{}))
		})
	}
}

// TestProfileMMA checks that a kernel whose products all go through mma
// reports tensor-core FLOPs equal to the op's, and that it computes them.
func TestProfileMMA(t *testing.T) {
	const m, n, k = 32, 16, 32
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 2
	}
	c := alloc(t, 4*m*n)
	kern := kernel(t, load(t, "profile.cu", Checked), "mma_gemm")
	p := profiled(t, kern, Launch{Grid: d1(m / 16 * n / 8), Block: d1(32), Args: []any{f32Buf(t, a), f32Buf(t, b), c, int32(m), int32(n), int32(k)}}, ProfileOptions{})
	if want := 2.0 * m * n * k; p.TensorFLOPs() != want || len(p.MMA) != 1 || p.MMA[0].Kind != "m16n8k16.f16" || p.MMA[0].Products != 8 {
		t.Errorf("mma %+v (%v FLOPs), want 8 m16n8k16.f16 products, %v FLOPs", p.MMA, p.TensorFLOPs(), want)
	}
	got := f32s(c)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*n+j]
			}
			if got[i*n+j] != s {
				t.Fatalf("C[%d][%d] = %v, want %v", i, j, got[i*n+j], s)
			}
		}
	}
}

// TestProfileSimdgroupMMA counts Metal simdgroup products.
func TestProfileSimdgroupMMA(t *testing.T) {
	a, b := make([]float32, 64), make([]float32, 64)
	for i := range a {
		a[i], b[i] = float32(i%3), float32(i%4)-1
	}
	c := alloc(t, 4*128)
	k := kernel(t, load(t, "profile.metal", Checked), "sg_mma")
	p := profiled(t, k, Launch{Grid: d1(1), Block: d1(64), Buffers: []Binding{{Index: 0, Buf: f32Buf(t, a)}, {Index: 1, Buf: f32Buf(t, b)}, {Index: 2, Buf: c}}}, ProfileOptions{})
	if len(p.MMA) != 1 || p.MMA[0].Kind != "simdgroup8x8x8.f32" || p.MMA[0].Products != 2 || p.TensorFLOPs() != 2*1024 {
		t.Errorf("mma %+v, want 2 simdgroup8x8x8.f32 products of 1024 FLOPs", p.MMA)
	}
	got := f32s(c)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			var s float32
			for l := 0; l < 8; l++ {
				s += a[i*8+l] * b[l*8+j]
			}
			if got[i*8+j] != s || got[64+i*8+j] != s {
				t.Fatalf("C[%d][%d] = %v, %v, want %v", i, j, got[i*8+j], got[64+i*8+j], s)
			}
		}
	}
}

// TestProfileSampling checks that the counters of a sample of a
// 4096-block launch, extrapolated, are within 2% of every block's. The
// last block is partial (15 of 32 lanes), so the sample is not exact.
func TestProfileSampling(t *testing.T) {
	const blocks, n = 4096, 4096*32 - 17
	k := kernel(t, load(t, "profile.cu", Checked), "copy_f32")
	in, out := alloc(t, 4*n), alloc(t, 4*n)
	l := Launch{Grid: d1(blocks), Block: d1(32), Args: []any{in, out, int32(n)}}
	all := profiled(t, k, l, ProfileOptions{})
	if all.BlocksRun != blocks || all.GlobalLoads.Lanes != n {
		t.Fatalf("every-block profile ran %d blocks, %d load lanes; want %d and %d", all.BlocksRun, all.GlobalLoads.Lanes, blocks, n)
	}
	s := profiled(t, k, l, ProfileOptions{SampleBlocks: 64})
	if s.BlocksRun < 64 || s.BlocksRun > 72 {
		t.Fatalf("sample ran %d blocks, want 64 to 72", s.BlocksRun)
	}
	e := s.Extrapolate()
	if !e.Extrapolated || e.Blocks != blocks {
		t.Errorf("extrapolated profile: %+v", e)
	}
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("%s: sampled %v, every block %v: more than 2%% apart", what, got, want)
		}
	}
	near("load requests", float64(e.GlobalLoads.Requests), float64(all.GlobalLoads.Requests))
	near("load sectors", float64(e.GlobalLoads.Sectors), float64(all.GlobalLoads.Sectors))
	near("load bytes", float64(e.GlobalLoads.Bytes), float64(all.GlobalLoads.Bytes))
	near("store sectors", float64(e.GlobalStores.Sectors), float64(all.GlobalStores.Sectors))
	near("warp efficiency", e.WarpEfficiency(), all.WarpEfficiency())
	near("DRAM bytes", e.DRAMBytes(), all.DRAMBytes())
}

// TestProfileFastModule: a module built Fast has no memory counters, and
// says so.
func TestProfileFastModule(t *testing.T) {
	d := device(t)
	k := kernel(t, load(t, "profile.cu", Fast), "transpose32")
	d.StartProfile(ProfileOptions{})
	_, err := k.Launch(Launch{Grid: d1(1), Block: Dim3{32, 32, 1}, Args: []any{alloc(t, 4096), alloc(t, 4096)}})
	ps := d.StopProfile()
	if err != nil || len(ps) != 1 {
		t.Fatalf("launch: %v, %d profiles", err, len(ps))
	}
	if ps[0].Instrumented || ps[0].Requests() != 0 || ps[0].Barriers != 1 {
		t.Errorf("fast module profile %+v: want not instrumented, no requests, one barrier", ps[0])
	}
}

// TestFaultMetalShuffleInactive: a Metal simd_shuffle that reads a lane
// which has returned is a fault; reading active lanes is not.
func TestFaultMetalShuffleInactive(t *testing.T) {
	mod := load(t, "profile.metal", Checked)
	out := alloc(t, 4*32)
	_, err := kernel(t, mod, "shuffle_inactive").Launch(Launch{Grid: d1(1), Block: d1(32), Buffers: []Binding{{Index: 0, Buf: out}}})
	fault(t, err, WarpMisuse, "simd_shuffle", "profile.metal:", "lane 0 reads lane 16, which is not active")
	_, err = kernel(t, mod, "shuffle_active").Launch(Launch{Grid: d1(1), Block: d1(32), Buffers: []Binding{{Index: 0, Buf: out}}})
	if err != nil {
		t.Fatalf("shuffle among active lanes: %v", err)
	}
	for i, v := range f32s(out)[:16] {
		if v != float32(15-i) {
			t.Fatalf("out[%d] = %v, want %d", i, v, 15-i)
		}
	}
}
