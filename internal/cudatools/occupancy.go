package cudatools

import (
	"fmt"
	"strings"
)

// A GPU is the per-multiprocessor limits that set a kernel's theoretical
// occupancy, as NVIDIA's occupancy calculator (cuda_occupancy.h) uses
// them.
type GPU struct {
	Name string
	Arch string // the architecture its cubins are built for
	// Regs is the 32-bit registers per SM, split evenly over
	// SubPartitions; a warp's registers are allocated in units of
	// RegUnit and a thread has at most MaxRegs.
	Regs, SubPartitions, RegUnit, MaxRegs int
	// Shared is the most shared memory per SM (the largest carveout),
	// allocated per block in units of SharedUnit, with ReservedShared
	// bytes per block kept by the system.
	Shared, SharedUnit, ReservedShared int
	// MaxThreads and MaxBlocks are the resident threads and blocks per SM.
	MaxThreads, MaxBlocks int
}

// GPUs are the named GPUs occupancy is computed for.
var GPUs = []GPU{
	{Name: "H100", Arch: "sm_90", Regs: 65536, SubPartitions: 4, RegUnit: 256, MaxRegs: 255,
		Shared: 228 << 10, SharedUnit: 128, ReservedShared: 1024, MaxThreads: 2048, MaxBlocks: 32},
	{Name: "A100", Arch: "sm_80", Regs: 65536, SubPartitions: 4, RegUnit: 256, MaxRegs: 255,
		Shared: 164 << 10, SharedUnit: 128, ReservedShared: 1024, MaxThreads: 2048, MaxBlocks: 32},
}

// GPUByName returns the GPU of GPUs with that name (case-insensitive).
func GPUByName(name string) (GPU, error) {
	var names []string
	for _, g := range GPUs {
		if strings.EqualFold(g.Name, name) {
			return g, nil
		}
		names = append(names, g.Name)
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(names, ", "))
}

// Occupancy is a launch's theoretical occupancy on one GPU.
type Occupancy struct {
	// BlocksPerSM is the resident blocks per SM; Warps the resident
	// warps; Fraction the warps over the SM's most.
	BlocksPerSM, Warps int
	Fraction           float64
	// Limiter names what bounds BlocksPerSM: "threads", "blocks",
	// "registers" or "shared" (the first of them, in that order, when
	// several tie: a kernel at the SM's thread limit is not register-bound).
	Limiter string
}

func roundUp(x, unit int) int { return (x + unit - 1) / unit * unit }

// Occupancy returns the theoretical occupancy of blocks of threads
// threads, each thread using regs registers and each block shared bytes
// of shared memory (static plus dynamic; the system's reserve is added
// here). It fails when one block cannot fit at all.
func (g GPU) Occupancy(regs, threads, shared int) (Occupancy, error) {
	if threads <= 0 || threads > 1024 {
		return Occupancy{}, fmt.Errorf("%d threads per block (1 to 1024)", threads)
	}
	if regs <= 0 || regs > g.MaxRegs {
		return Occupancy{}, fmt.Errorf("%d registers per thread (1 to %d)", regs, g.MaxRegs)
	}
	if shared < 0 {
		return Occupancy{}, fmt.Errorf("%d bytes of shared memory", shared)
	}
	warpsPerBlock := (threads + 31) / 32
	maxWarps := g.MaxThreads / 32

	limits := []struct {
		name   string
		blocks int
	}{
		{"threads", maxWarps / warpsPerBlock}, {"blocks", g.MaxBlocks}, {"registers", 0}, {"shared", 0},
	}
	// Registers: whole warps per sub-partition.
	regsPerWarp := roundUp(regs*32, g.RegUnit)
	warpsByRegs := (g.Regs / g.SubPartitions / regsPerWarp) * g.SubPartitions
	limits[2].blocks = warpsByRegs / warpsPerBlock
	// Shared memory.
	perBlock := roundUp(shared+g.ReservedShared, g.SharedUnit)
	limits[3].blocks = g.Shared / perBlock
	best := limits[0]
	for _, l := range limits[1:] {
		if l.blocks < best.blocks {
			best = l
		}
	}
	if best.blocks == 0 {
		return Occupancy{Limiter: best.name}, fmt.Errorf("a block of %d threads, %d registers each and %d bytes of shared memory does not fit an %s SM (%s)",
			threads, regs, shared, g.Name, best.name)
	}
	o := Occupancy{BlocksPerSM: best.blocks, Warps: best.blocks * warpsPerBlock, Limiter: best.name}
	o.Fraction = float64(o.Warps) / float64(maxWarps)
	return o, nil
}
