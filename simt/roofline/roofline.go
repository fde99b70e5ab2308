// Package roofline estimates, from a kernel launch's emulator counters
// (simt.KernelProfile), a lower bound of its time on a named GPU: the
// unique DRAM bytes over the memory bandwidth, tensor-core and FP32 FLOPs
// over their peaks (with the FP32 instructions the results of int8
// products need, Int8ResultInstructions each), and shared-memory
// wavefronts over the shared-memory bandwidth; the largest names the
// limiting resource. It also computes
// theoretical occupancy the way NVIDIA's occupancy calculator does.
//
// An estimate is never a time: it is what the hardware's published peaks
// allow at best, for the access pattern the emulator saw.
package roofline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kernbench/kernbench/simt"
)

// A GPU is the published peaks and per-SM limits of one device.
type GPU struct {
	Name   string // the name -gpu takes: "h100"
	Title  string // "NVIDIA H100 SXM5 80GB"
	Vendor string // "nvidia" or "apple"
	// DRAMBandwidth in bytes/s.
	DRAMBandwidth float64
	// FP32 is the non-tensor float32 peak in FLOP/s (a multiply-add is
	// 2). TensorF16, TensorTF32 and TensorInt8 are the dense tensor-core
	// peaks (f16/bf16 inputs with f32 accumulation, tf32, int8 in OP/s);
	// 0 where the device has none (Apple: simdgroup products run on the
	// ALUs, at SimdgroupF32 and SimdgroupF16).
	FP32, TensorF16, TensorTF32, TensorInt8 float64
	// SimdgroupF32 and SimdgroupF16 are the peaks of simdgroup matrix
	// products (Apple) with float inputs and with half or bfloat inputs
	// (float accumulators either way), in FLOP/s; 0 charges them at FP32.
	// They run on the same ALUs as the FP32 work, and their times add to
	// its time, except that where F16Pipe is set, f16 work issues on a
	// pipeline of its own beside the FP32 one and its time overlaps the
	// FP32 work's instead (a bound of its own, "fp16").
	SimdgroupF32, SimdgroupF16 float64
	F16Pipe                    bool
	// Cores (Apple GPU cores) and the per-core, per-clock rates the
	// Apple peaks above are derived from (FLOPs per core per clock: a
	// multiply-add is 2); 0 for NVIDIA.
	Cores                              int
	CoreFP32, CoreSimdF32, CoreSimdF16 float64
	// SMs and ClockHz give the shared-memory bandwidth: 32 banks of 4
	// bytes, one wavefront (128 bytes) per SM per clock. 0 where not
	// published (Apple).
	SMs     int
	ClockHz float64
	// Occupancy limits per SM (NVIDIA): warps, blocks, 32-bit registers,
	// shared memory in bytes (the largest carveout), the shared memory
	// the system reserves per block, and the allocation granularities.
	MaxWarpsPerSM, MaxBlocksPerSM, RegsPerSM int
	SharedPerSM, SharedReservedPerBlock      int
	SharedGranularity, RegGranularity        int
	// MaxThreadsPerBlock and MaxSharedPerBlock bound a launch.
	MaxThreadsPerBlock, MaxSharedPerBlock int
	// Source names where the numbers come from.
	Source string
}

// SharedBandwidth returns the shared-memory bandwidth in bytes/s, or 0
// where it is not published.
func (g GPU) SharedBandwidth() float64 { return 128 * float64(g.SMs) * g.ClockHz }

// GPUs are the devices the estimates know, by published peaks (dense,
// without sparsity, at the boost clock).
var GPUs = []GPU{
	{
		// NVIDIA H100 Tensor Core GPU datasheet (SXM5: 3.35 TB/s HBM3,
		// 67 TFLOPS FP32, 494.7 TF32, 989.4 FP16/BF16, 1978.9 INT8 TOPS,
		// dense) and the Hopper architecture whitepaper / CUDA C
		// Programming Guide table for compute capability 9.0 (132 SMs,
		// 1.98 GHz boost, 64 warps, 32 blocks, 64K registers and 228 KB
		// shared memory per SM, 227 KB per block, 1 KB reserved per
		// block).
		Name: "h100", Title: "NVIDIA H100 SXM5 80GB", Vendor: "nvidia",
		DRAMBandwidth: 3.35e12, FP32: 67e12, TensorF16: 989.4e12, TensorTF32: 494.7e12, TensorInt8: 1978.9e12,
		SMs: 132, ClockHz: 1.98e9,
		MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536,
		SharedPerSM: 228 << 10, SharedReservedPerBlock: 1024, SharedGranularity: 128, RegGranularity: 256,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 227 << 10,
		Source: "NVIDIA H100 datasheet (SXM5), CUDA C Programming Guide compute capability 9.0",
	},
	{
		// NVIDIA H200 datasheet (SXM: 4.8 TB/s HBM3e; the same compute
		// peaks as H100 SXM: 67 TFLOPS FP32, 989 FP16, 1979 INT8 dense);
		// compute capability 9.0 limits.
		Name: "h200", Title: "NVIDIA H200 SXM 141GB", Vendor: "nvidia",
		DRAMBandwidth: 4.8e12, FP32: 67e12, TensorF16: 989.4e12, TensorTF32: 494.7e12, TensorInt8: 1978.9e12,
		SMs: 132, ClockHz: 1.98e9,
		MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536,
		SharedPerSM: 228 << 10, SharedReservedPerBlock: 1024, SharedGranularity: 128, RegGranularity: 256,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 227 << 10,
		Source: "NVIDIA H200 datasheet (SXM), CUDA C Programming Guide compute capability 9.0",
	},
	{
		// NVIDIA A100 datasheet (80GB SXM: 2,039 GB/s HBM2e, 19.5 TFLOPS
		// FP32, 156 TF32, 312 FP16/BF16, 624 INT8 TOPS dense) and the
		// Ampere architecture whitepaper (108 SMs, 1.41 GHz boost);
		// compute capability 8.0: 64 warps, 32 blocks, 164 KB shared
		// memory per SM, 163 KB per block.
		Name: "a100", Title: "NVIDIA A100 SXM4 80GB", Vendor: "nvidia",
		DRAMBandwidth: 2.039e12, FP32: 19.5e12, TensorF16: 312e12, TensorTF32: 156e12, TensorInt8: 624e12,
		SMs: 108, ClockHz: 1.41e9,
		MaxWarpsPerSM: 64, MaxBlocksPerSM: 32, RegsPerSM: 65536,
		SharedPerSM: 164 << 10, SharedReservedPerBlock: 1024, SharedGranularity: 128, RegGranularity: 256,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 163 << 10,
		Source: "NVIDIA A100 datasheet (80GB SXM), Ampere whitepaper, CUDA C Programming Guide compute capability 8.0",
	},
	{
		// NVIDIA L4 datasheet (300 GB/s GDDR6, 30.3 TFLOPS FP32, 60 TF32,
		// 121 FP16, 242.5 INT8 TOPS dense) and the Ada whitepaper (58
		// SMs, 2.04 GHz boost); compute capability 8.9: 48 warps, 24
		// blocks, 100 KB shared memory per SM, 99 KB per block.
		Name: "l4", Title: "NVIDIA L4", Vendor: "nvidia",
		DRAMBandwidth: 300e9, FP32: 30.3e12, TensorF16: 121e12, TensorTF32: 60e12, TensorInt8: 242.5e12,
		SMs: 58, ClockHz: 2.04e9,
		MaxWarpsPerSM: 48, MaxBlocksPerSM: 24, RegsPerSM: 65536,
		SharedPerSM: 100 << 10, SharedReservedPerBlock: 1024, SharedGranularity: 128, RegGranularity: 256,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 99 << 10,
		Source: "NVIDIA L4 datasheet, Ada whitepaper, CUDA C Programming Guide compute capability 8.9",
	},
	apple(GPU{
		// Apple's M2 Max announcement (January 2023: 38-core GPU, 400
		// GB/s unified memory, 13.6 TFLOPS FP32: 38 cores x 256 FLOPs a
		// clock at about 1.4 GHz, a clock Apple does not publish); Metal
		// feature set tables (1024 threads and 32 KB threadgroup memory
		// per threadgroup). Per core and clock (Apple8, as Apple7): 128
		// FP32 lanes, 256 FLOPs. Half is no faster: Philip Turner's
		// metal-benchmarks measured an FP16/FP32 ratio of 1 on Apple7
		// (M1: "F16 is neither faster nor slower than F32", its table of
		// GOPS16 equal to GOPS32 for the M1 family); that Apple8 (M2)
		// keeps the ratio, and that simdgroup matrix products of either
		// type reach the ALUs' rate, are assumptions. So half tiles do
		// not move an M2 Max estimate's matrix bound; they move its
		// threadgroup-memory traffic, whose bandwidth is not published.
		// Occupancy rules are not published either.
		Name: "m2max", Title: "Apple M2 Max (38-core GPU)", Vendor: "apple",
		DRAMBandwidth: 400e9, FP32: 13.6e12,
		Cores: 38, CoreFP32: 256, CoreSimdF32: 256, CoreSimdF16: 256,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 32 << 10,
		Source: "Apple M2 Max announcement (Jan 2023), Metal feature set tables; FP16 and simdgroup rates per core from metal-benchmarks (M1, measured; M2 assumed equal)",
	}),
	apple(GPU{
		// Apple's M3 Max announcement (October 2023: 40-core GPU, 400
		// GB/s unified memory). Apple publishes no FLOPS figure: 16.4
		// TFLOPS FP32 is 40 cores x 128 FP32 lanes x 2 x 1.6 GHz, an
		// estimate; Metal feature set tables as for M2 Max. Apple's
		// "Explore GPU advancements in M3 and A17 Pro" (Apple9) says the
		// FP32, FP16 and integer pipelines issue instructions in
		// parallel: f16 simdgroup products overlap the FP32 work
		// (F16Pipe). Their per-core rate equal to FP32's (256 FLOPs a
		// clock) is an assumption (no figure is published).
		Name: "m3max", Title: "Apple M3 Max (40-core GPU)", Vendor: "apple",
		DRAMBandwidth: 400e9, FP32: 16.4e12,
		Cores: 40, CoreFP32: 256, CoreSimdF32: 256, CoreSimdF16: 256, F16Pipe: true,
		MaxThreadsPerBlock: 1024, MaxSharedPerBlock: 32 << 10,
		Source: "Apple M3 Max announcement (Oct 2023); FP32 peak derived from cores x lanes x clock (not published); FP16 pipeline beside FP32 from Apple's M3 GPU tech talk; simdgroup rates assumed",
	}),
}

// apple fills an Apple GPU's simdgroup peaks from its per-core rates,
// at the clock its FP32 peak implies (FP32 / (Cores x CoreFP32)).
func apple(g GPU) GPU {
	clock := g.FP32 / (float64(g.Cores) * g.CoreFP32)
	g.SimdgroupF32 = float64(g.Cores) * g.CoreSimdF32 * clock
	g.SimdgroupF16 = float64(g.Cores) * g.CoreSimdF16 * clock
	return g
}

// Lookup returns the GPU called name (case-insensitive), or an error
// listing the known ones.
func Lookup(name string) (GPU, error) {
	var names []string
	for _, g := range GPUs {
		if strings.EqualFold(g.Name, name) {
			return g, nil
		}
		names = append(names, g.Name)
	}
	return GPU{}, fmt.Errorf("roofline: unknown GPU %q (known: %s)", name, strings.Join(names, ", "))
}

// Occupancy is a launch's theoretical occupancy on one GPU.
type Occupancy struct {
	BlocksPerSM int
	// Limiter names what bounds BlocksPerSM: "warps", "blocks",
	// "registers" or "shared memory".
	Limiter string
	// Fraction is active warps over the SM's maximum.
	Fraction float64
}

// TheoreticalOccupancy computes occupancy as NVIDIA's occupancy
// calculator does, from threads per block, registers per thread and
// shared memory per block (static plus dynamic, in bytes). It is an
// error for a GPU without published occupancy rules or a launch the GPU
// cannot run.
func (g GPU) TheoreticalOccupancy(threads, regsPerThread, sharedBytes int) (Occupancy, error) {
	if g.MaxWarpsPerSM == 0 {
		return Occupancy{}, fmt.Errorf("roofline: %s has no published occupancy rules", g.Title)
	}
	if threads <= 0 || threads > g.MaxThreadsPerBlock {
		return Occupancy{}, fmt.Errorf("roofline: %d threads per block on %s (at most %d)", threads, g.Title, g.MaxThreadsPerBlock)
	}
	if sharedBytes < 0 || sharedBytes > g.MaxSharedPerBlock {
		return Occupancy{}, fmt.Errorf("roofline: %d bytes of shared memory per block on %s (at most %d)", sharedBytes, g.Title, g.MaxSharedPerBlock)
	}
	if regsPerThread <= 0 || regsPerThread > 255 {
		return Occupancy{}, fmt.Errorf("roofline: %d registers per thread (1 to 255)", regsPerThread)
	}
	up := func(x, m int) int { return (x + m - 1) / m * m }
	warps := (threads + 31) / 32
	limits := []struct {
		n    int
		name string
	}{
		{g.MaxWarpsPerSM / warps, "warps"},
		{g.MaxBlocksPerSM, "blocks"},
		// Registers are allocated per warp in units of RegGranularity.
		{g.RegsPerSM / up(regsPerThread*32, g.RegGranularity) / warps, "registers"},
		{g.SharedPerSM / up(sharedBytes+g.SharedReservedPerBlock, g.SharedGranularity), "shared memory"},
	}
	best := limits[0]
	for _, l := range limits[1:] {
		if l.n < best.n {
			best = l
		}
	}
	return Occupancy{BlocksPerSM: best.n, Limiter: best.name, Fraction: float64(best.n*warps) / float64(g.MaxWarpsPerSM)}, nil
}

// Work is what a kernel launch does, for an estimate.
type Work struct {
	// DRAMBytes is the unique bytes it reads and writes.
	DRAMBytes float64
	// SharedWavefronts is its shared-memory wavefronts (128 bytes each).
	SharedWavefronts float64
	// Tensor FLOPs (OPs for int8) by input type: "f16" (and bf16),
	// "tf32", "int8".
	TensorF16, TensorTF32, TensorInt8 float64
	// SimdgroupF32 and SimdgroupF16 are the FLOPs of simdgroup matrix
	// products (Apple) with float inputs, and with half or bfloat ones.
	SimdgroupF32, SimdgroupF16 float64
	// FP32FLOPs is the FLOPs done outside the tensor cores.
	FP32FLOPs float64
	// Int8Results is the int32 results of int8 tensor-core products
	// (each product's outputs, summed over the products). Each becomes
	// FP32 work (Int8ResultInstructions of it), charged to the fp32
	// bound at one instruction per lane and clock (FP32/2 a second).
	Int8Results float64
}

// Int8ResultInstructions is the FP32 instructions Estimate charges per
// result of an int8 product: at least the conversion of the int32 to
// float and an FMA into the float accumulator with the product's scale.
// No int8 product of kernbench's can leave its results in int32 for the
// next: the activations are quantized with a float scale per 32
// elements, so no two products along k share a scale (kb_mmq128_* spend
// three, the magic-number FADD, the scales' FMUL and the FFMA). A kernel
// that did share scales across products (activations with one scale per
// 256, integer sub-scales folded into the codes) would need less, and
// the charge would then be pessimistic for it.
const Int8ResultInstructions = 2

// FromProfile takes a launch's work from its profile (extrapolated to
// the grid first); fp32 is the FLOPs it does outside matrix products,
// which the emulator does not count: the caller charges them (an op's
// FLOPs less its tensor-core FLOPs).
func FromProfile(p simt.KernelProfile, fp32 float64) Work {
	e := p.Extrapolate()
	w := Work{DRAMBytes: e.DRAMBytes(), SharedWavefronts: float64(e.SharedLoads.Wavefronts + e.SharedStores.Wavefronts), FP32FLOPs: fp32}
	for _, m := range e.MMA {
		sg := strings.HasPrefix(m.Kind, "simdgroup")
		switch {
		case sg && (strings.HasSuffix(m.Kind, ".f16") || strings.HasSuffix(m.Kind, ".bf16")):
			w.SimdgroupF16 += m.FLOPs
		case sg:
			w.SimdgroupF32 += m.FLOPs
		case strings.HasSuffix(m.Kind, ".f16"), strings.HasSuffix(m.Kind, ".bf16"):
			w.TensorF16 += m.FLOPs
		case strings.HasSuffix(m.Kind, ".tf32"):
			w.TensorTF32 += m.FLOPs
		case strings.HasSuffix(m.Kind, ".s8"):
			w.TensorInt8 += m.FLOPs
			if k, ok := simt.MMAKindNamed(m.Kind); ok {
				w.Int8Results += float64(m.Products) * float64(k.M*k.N)
			}
		default:
			w.SimdgroupF32 += m.FLOPs
		}
	}
	return w
}

// A Bound is the time one resource needs at its peak.
type Bound struct {
	Resource string  `json:"resource"` // "dram", "fp32", "fp16", "tensor", "shared"
	Seconds  float64 `json:"seconds"`
}

// Estimate is a lower bound of a launch's time on a GPU: the largest of
// its Bounds. It is an estimate from published peaks, never a measured
// time.
type Estimate struct {
	GPU     string  `json:"gpu"`
	Seconds float64 `json:"estimate_seconds"`
	// Limiter is the resource of the largest bound.
	Limiter string  `json:"limiter"`
	Bounds  []Bound `json:"bounds"`
	// Unpriced lists work the GPU has no published peak for (Apple's
	// threadgroup memory), left out of the estimate.
	Unpriced []string `json:"unpriced,omitempty"`
}

// Estimate returns the lower bound of w's time on g.
func (g GPU) Estimate(w Work) Estimate {
	e := Estimate{GPU: g.Name}
	add := func(res string, s float64) {
		if s > 0 {
			e.Bounds = append(e.Bounds, Bound{res, s})
		}
	}
	add("dram", w.DRAMBytes/g.DRAMBandwidth)
	fp32 := w.FP32FLOPs
	var tensor float64
	for _, t := range []struct {
		flops, peak float64
		what        string
	}{{w.TensorF16, g.TensorF16, "f16"}, {w.TensorTF32, g.TensorTF32, "tf32"}, {w.TensorInt8, g.TensorInt8, "int8"}} {
		if t.flops == 0 {
			continue
		}
		if t.peak == 0 {
			// No tensor cores: the products run on the FP32 ALUs.
			fp32 += t.flops
			continue
		}
		tensor += t.flops / t.peak
	}
	peak := func(p float64) float64 {
		if p == 0 {
			return g.FP32
		}
		return p
	}
	alu := fp32/g.FP32 + w.SimdgroupF32/peak(g.SimdgroupF32) + Int8ResultInstructions*w.Int8Results/(g.FP32/2)
	f16 := w.SimdgroupF16 / peak(g.SimdgroupF16)
	if g.F16Pipe {
		add("fp16", f16)
	} else {
		alu += f16
	}
	add("tensor", tensor)
	add("fp32", alu)
	if bw := g.SharedBandwidth(); bw > 0 {
		add("shared", w.SharedWavefronts*128/bw)
	} else if w.SharedWavefronts > 0 {
		e.Unpriced = append(e.Unpriced, "threadgroup memory (bandwidth not published)")
	}
	sort.SliceStable(e.Bounds, func(i, j int) bool { return e.Bounds[i].Seconds > e.Bounds[j].Seconds })
	if len(e.Bounds) > 0 {
		e.Seconds, e.Limiter = e.Bounds[0].Seconds, e.Bounds[0].Resource
	}
	return e
}

// ChargeFP32 returns, for the launches of one op (counters extrapolated
// to the grid), the FP32 FLOPs to charge each in its estimate: the
// emulator does not count arithmetic, so the op's FLOPs that no counted
// matrix product does all go to the launch with the most global sectors
// (its main kernel), and none to the others.
func ChargeFP32(launches []simt.KernelProfile, opFlops float64) []float64 {
	out := make([]float64, len(launches))
	var tensor float64
	main, most := -1, uint64(0)
	for i, p := range launches {
		tensor += p.TensorFLOPs()
		if s := p.GlobalLoads.Sectors + p.GlobalStores.Sectors + p.Atomics.Sectors; main < 0 || s > most {
			main, most = i, s
		}
	}
	if main >= 0 {
		out[main] = max(0, opFlops-tensor)
	}
	return out
}
