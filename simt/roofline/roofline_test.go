package roofline

import (
	"math"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/simt"
)

// TestOccupancy checks theoretical occupancy against NVIDIA's occupancy
// calculator's rules, worked by hand: warps per SM, blocks per SM,
// registers allocated per warp in units of 256, shared memory per block
// plus 1 KB reserved, in units of 128 bytes.
func TestOccupancy(t *testing.T) {
	h100, _ := Lookup("h100")
	a100, _ := Lookup("a100")
	l4, _ := Lookup("l4")
	for _, tc := range []struct {
		gpu                   GPU
		threads, regs, shared int
		blocks                int
		limiter               string
		fraction              float64
	}{
		// 8 warps a block: 64/8 = 8 blocks by warps; 32 regs = 1024 a
		// warp, 64 warps' worth: 8 blocks. 100%.
		{h100, 256, 32, 0, 8, "warps", 1},
		// 4 warps; 64 regs = 2048 a warp: 32 warps = 8 blocks; shared
		// 48 KB + 1 KB = 50176 bytes: 233472/50176 = 4 blocks. 16 of
		// 64 warps: 25%.
		{h100, 128, 64, 48 << 10, 4, "shared memory", 0.25},
		// 32 warps; 64 regs: 32 warps by registers = 1 block. 50%.
		{h100, 1024, 64, 0, 1, "registers", 0.5},
		// 101 KB a block of 164 KB: 1 block of 8 warps, 12.5%.
		{a100, 256, 32, 100 << 10, 1, "shared memory", 0.125},
		// 40 regs round to 1280 a warp: 65536/1280 = 51 warps, 12
		// blocks of 4; 48 warps by warps = 12 blocks too; 24 blocks
		// limit. 48 of 48 warps (the warps limit is met first).
		{l4, 128, 40, 0, 12, "warps", 1},
	} {
		o, err := tc.gpu.TheoreticalOccupancy(tc.threads, tc.regs, tc.shared)
		if err != nil {
			t.Fatal(err)
		}
		if o.BlocksPerSM != tc.blocks || o.Limiter != tc.limiter || o.Fraction != tc.fraction {
			t.Errorf("%s %d threads %d regs %d shared: %+v, want %d blocks by %s, %v", tc.gpu.Name, tc.threads, tc.regs, tc.shared, o, tc.blocks, tc.limiter, tc.fraction)
		}
	}
	if _, err := h100.TheoreticalOccupancy(2048, 32, 0); err == nil {
		t.Error("2048 threads a block: no error")
	}
	m2, _ := Lookup("m2max")
	if _, err := m2.TheoreticalOccupancy(256, 32, 0); err == nil {
		t.Error("Apple occupancy: no error")
	}
	if _, err := Lookup("h1000"); err == nil {
		t.Error("unknown GPU: no error")
	}
}

func TestEstimateBounds(t *testing.T) {
	h100, _ := Lookup("h100")
	for _, tc := range []struct {
		w       Work
		limiter string
		seconds float64
	}{
		{Work{DRAMBytes: 3.35e12}, "dram", 1},
		{Work{DRAMBytes: 1e9, TensorF16: 989.4e12}, "tensor", 1},
		{Work{DRAMBytes: 1e9, FP32FLOPs: 67e12 * 2}, "fp32", 2},
		// 128 bytes a wavefront, 132 SMs at 1.98 GHz.
		{Work{SharedWavefronts: 132 * 1.98e9}, "shared", 1},
		// Int8 results at two FP32 instructions each, 33.5T a second:
		// 2 s of FP32 work for 1 s of products.
		{Work{TensorInt8: 1978.9e12, Int8Results: 67e12 / 2}, "fp32", 2},
		{Work{TensorInt8: 1978.9e12, Int8Results: 67e12 / 2, FP32FLOPs: 67e12}, "fp32", 3},
	} {
		e := h100.Estimate(tc.w)
		if e.Limiter != tc.limiter || math.Abs(e.Seconds-tc.seconds) > 1e-12*tc.seconds {
			t.Errorf("%+v: %+v, want %v s by %s", tc.w, e, tc.seconds, tc.limiter)
		}
	}
	m2, _ := Lookup("m2max")
	e := m2.Estimate(Work{SimdgroupF32: 13.6e12, TensorF16: 13.6e12, SharedWavefronts: 1e6})
	if e.Limiter != "fp32" || math.Abs(e.Seconds-2) > 1e-12 || len(e.Unpriced) != 1 {
		t.Errorf("M2 Max: %+v, want 2 s of fp32 and threadgroup memory unpriced", e)
	}
}

// TestStreamingCopyEstimate profiles a copy on the emulator: its H100
// estimate is its bytes (read once, written once) over 3.35 TB/s.
func TestStreamingCopyEstimate(t *testing.T) {
	d, err := simt.Open()
	if err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	src := `extern "C" __global__ void copy(const float4* in, float4* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[i];
}`
	mod, err := d.Load(simt.Program{Dialect: simt.CUDA, Main: simt.Source{Name: "copy.cu", Text: []byte(src)}}, simt.Checked)
	if err != nil {
		t.Fatal(err)
	}
	k, err := mod.Kernel("copy")
	if err != nil {
		t.Fatal(err)
	}
	const n = 64 * 256 // float4s
	in, _ := d.Alloc(16 * n)
	out, _ := d.Alloc(16 * n)
	defer in.Free()
	defer out.Free()
	d.StartProfile(simt.ProfileOptions{})
	_, err = k.Launch(simt.Launch{Grid: simt.Dim3{X: 64, Y: 1, Z: 1}, Block: simt.Dim3{X: 256, Y: 1, Z: 1}, Args: []any{in, out}})
	ps := d.StopProfile()
	if err != nil || len(ps) != 1 {
		t.Fatalf("launch: %v, %d profiles", err, len(ps))
	}
	h100, _ := Lookup("h100")
	e := h100.Estimate(FromProfile(ps[0], 0))
	want := 2 * 16 * n / 3.35e12
	if e.Limiter != "dram" || math.Abs(e.Seconds-want) > 1e-9*want {
		t.Errorf("copy of %d bytes: %+v, want %v s by dram", 16*n, e, want)
	}
	// 16-byte lanes: 512 bytes a request, 16 sectors.
	if s := ps[0].GlobalLoads.SectorsPerRequest(); s != 16 {
		t.Errorf("float4 copy: %v sectors a request, want 16", s)
	}
}

// TestChargeFP32: the op's FLOPs less its launches' matrix-product FLOPs
// go to the launch with the most global sectors, none to the others.
func TestChargeFP32(t *testing.T) {
	small := simt.KernelProfile{GlobalLoads: simt.GlobalCounters{Requests: 1, Sectors: 4}}
	big := simt.KernelProfile{GlobalLoads: simt.GlobalCounters{Requests: 10, Sectors: 40}, GlobalStores: simt.GlobalCounters{Requests: 1, Sectors: 4}}
	mma := simt.KernelProfile{GlobalLoads: simt.GlobalCounters{Requests: 2, Sectors: 8}, MMA: []simt.MMACount{{Kind: "mma.m16n8k16.f16", Products: 1, FLOPs: 4096}}}
	for _, tc := range []struct {
		name     string
		launches []simt.KernelProfile
		flops    float64
		want     []float64
	}{
		{"none", nil, 100, []float64{}},
		{"main second", []simt.KernelProfile{small, big}, 1000, []float64{0, 1000}},
		{"less tensor", []simt.KernelProfile{big, mma}, 5096, []float64{1000, 0}},
		{"all tensor", []simt.KernelProfile{mma}, 4096, []float64{0}},
		{"never negative", []simt.KernelProfile{mma}, 100, []float64{0}},
	} {
		got := ChargeFP32(tc.launches, tc.flops)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAppleSimdgroupRates checks the Apple peaks against the per-core
// rates they come from: cores x FLOPs a core a clock x the clock the
// FP32 peak implies; on M1/M2-class cores half and float products run at
// the same rate on the same ALUs.
func TestAppleSimdgroupRates(t *testing.T) {
	for _, name := range []string{"m2max", "m3max"} {
		g, _ := Lookup(name)
		clock := g.FP32 / (float64(g.Cores) * g.CoreFP32)
		if clock < 1e9 || clock > 2e9 {
			t.Errorf("%s: %v Hz implied by %v FLOP/s over %d cores", name, clock, g.FP32, g.Cores)
		}
		for _, c := range []struct{ peak, core float64 }{{g.SimdgroupF32, g.CoreSimdF32}, {g.SimdgroupF16, g.CoreSimdF16}} {
			if want := float64(g.Cores) * c.core * clock; c.peak == 0 || math.Abs(c.peak-want) > 1e-6*want {
				t.Errorf("%s: simdgroup peak %v, want %v", name, c.peak, want)
			}
		}
	}
}

// sgTile is a Metal kernel of simdgroup products on 8x8 tiles of T (half
// or float), float accumulators: each simdgroup does 16 of them.
const sgTile = `#include <metal_stdlib>
using namespace metal;
template <typename T>
kernel void tile(device const T* A [[buffer(0)]], device const T* B [[buffer(1)]],
                 device float* C [[buffer(2)]], uint sg [[simdgroup_index_in_threadgroup]]) {
	simdgroup_matrix<T, 8, 8> a, b;
	simdgroup_float8x8 c = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
	for (int i = 0; i < 16; i++) {
		simdgroup_load(a, A + 64 * (i % 4), 8);
		simdgroup_load(b, B + 64 * (i / 4), 8);
		simdgroup_multiply_accumulate(c, a, b, c);
	}
	simdgroup_store(c, C + 64 * sg, 8);
}
typedef decltype(tile<half>) tile_half_t;
typedef decltype(tile<float>) tile_float_t;
template [[host_name("tile_half")]] kernel tile_half_t tile<half>;
template [[host_name("tile_float")]] kernel tile_float_t tile<float>;
`

// TestHalfTileEstimate profiles the same simdgroup products on half and
// on float tiles on metal-emu: the emulator counts them by type, and the
// estimates follow each GPU's rates. On an M2 Max (half at the FP32 rate,
// on the same ALUs) the matrix bound is the same; on an M3 Max (an FP16
// pipeline beside the FP32 one) the half products overlap the op's other
// FP32 work, so the half kernel's estimate is below the float one's; on a
// GPU with double-rate half (as Apple GPUs before M1 had), half products
// take half the time.
func TestHalfTileEstimate(t *testing.T) {
	d, err := simt.Open()
	if err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	mod, err := d.Load(simt.Program{Dialect: simt.Metal, Main: simt.Source{Name: "tile.metal", Text: []byte(sgTile)}}, simt.Checked)
	if err != nil {
		t.Fatal(err)
	}
	const sgs = 4
	work := map[string]Work{}
	for _, name := range []string{"tile_half", "tile_float"} {
		k, err := mod.Kernel(name)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := d.Alloc(4 * 64 * 4)
		b, _ := d.Alloc(4 * 64 * 4)
		c, _ := d.Alloc(4 * 64 * sgs)
		d.StartProfile(simt.ProfileOptions{})
		_, err = k.Launch(simt.Launch{Grid: simt.Dim3{X: 1, Y: 1, Z: 1}, Block: simt.Dim3{X: 32 * sgs, Y: 1, Z: 1},
			Buffers: []simt.Binding{{Index: 0, Buf: a}, {Index: 1, Buf: b}, {Index: 2, Buf: c}}})
		ps := d.StopProfile()
		a.Free()
		b.Free()
		c.Free()
		if err != nil || len(ps) != 1 {
			t.Fatalf("%s: %v, %d profiles", name, err, len(ps))
		}
		kind := map[string]string{"tile_half": "simdgroup8x8x8.f16", "tile_float": "simdgroup8x8x8.f32"}[name]
		if len(ps[0].MMA) != 1 || ps[0].MMA[0].Kind != kind || ps[0].MMA[0].Products != 16*sgs {
			t.Fatalf("%s: products %+v, want %d of %s", name, ps[0].MMA, 16*sgs, kind)
		}
		// The op's other work: as many FP32 FLOPs as the products'.
		w := FromProfile(ps[0], ps[0].TensorFLOPs())
		w.DRAMBytes = 0 // compare the compute bounds alone
		work[name] = w
	}
	half, float := work["tile_half"], work["tile_float"]
	if half.SimdgroupF16 == 0 || half.SimdgroupF32 != 0 || float.SimdgroupF32 != half.SimdgroupF16 || float.SimdgroupF16 != 0 {
		t.Fatalf("work: half %+v, float %+v", half, float)
	}
	m2, _ := Lookup("m2max")
	m3, _ := Lookup("m3max")
	x2 := m2
	x2.SimdgroupF16 = 2 * x2.SimdgroupF32
	for _, c := range []struct {
		gpu   GPU
		ratio float64 // half's estimate over float's
	}{
		{m2, 1},    // (f + p) / (f + p), f = p
		{m3, 0.5},  // max(f, p) / (f + p)
		{x2, 0.75}, // (f + p/2) / (f + p)
	} {
		eh, ef := c.gpu.Estimate(half), c.gpu.Estimate(float)
		if got := eh.Seconds / ef.Seconds; math.Abs(got-c.ratio) > 1e-9 {
			t.Errorf("%s: half %+v, float %+v: ratio %v, want %v", c.gpu.Name, eh, ef, got, c.ratio)
		}
	}
}

// TestInt8Results: FromProfile counts the results of int8 products (16 x
// 8 outputs each, the extrapolated products) and no others, and their
// FP32 work shows in the estimate: for q4_0 4096x512x4096's 2^21
// m16n8k32 products on an H100, 16 us of FP32 against 8.7 us of
// products.
func TestInt8Results(t *testing.T) {
	const products = 1 << 21
	p := simt.KernelProfile{Blocks: 256, BlocksRun: 64, MMA: []simt.MMACount{
		{Kind: "m16n8k32.s8", Products: products / 4, FLOPs: products / 4 * 2 * 16 * 8 * 32},
		{Kind: "m16n8k16.f16", Products: 1000, FLOPs: 1000 * 2 * 16 * 8 * 16},
	}}
	w := FromProfile(p, 0)
	if w.Int8Results != products*128 || w.TensorInt8 != products*2*16*8*32 {
		t.Fatalf("Int8Results %g, TensorInt8 %g; want %d and %d", w.Int8Results, w.TensorInt8, products*128, products*2*16*8*32)
	}
	h100, _ := Lookup("h100")
	e := h100.Estimate(Work{TensorInt8: w.TensorInt8, Int8Results: w.Int8Results})
	want := map[string]float64{"fp32": 2 * products * 128 / 33.5e12, "tensor": products * 8192 / 1978.9e12}
	for _, b := range e.Bounds {
		if ws, ok := want[b.Resource]; !ok || math.Abs(b.Seconds-ws) > 1e-9*ws {
			t.Errorf("%s bound %g s, want %g", b.Resource, b.Seconds, ws)
		}
	}
	if e.Limiter != "fp32" || len(e.Bounds) != 2 {
		t.Errorf("%+v: want fp32 (16 us) over tensor (8.7 us)", e)
	}
	if _, ok := simt.MMAKindNamed(""); ok {
		t.Error(`MMAKindNamed("") found a kind`)
	}
}
