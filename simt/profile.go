package simt

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"unsafe"
)

// The profiler counts what each launch asks of the memory system, the way
// an NVIDIA GPU serves it, from the accesses a checked module reports to
// the runtime. The lanes of a warp (a Metal simdgroup) run one after
// another in the emulator; their accesses are grouped by static site
// (the code address of the access) and dynamic instance (the n-th time
// the lane reached it), so that one group is one warp-level request as
// the hardware issues it. Counters are properties of the kernel's access
// pattern: they say nothing of time.

// Indices of kbs_prof.c (kbsimt_host.h's KBS_PC_*).
const (
	pcBlocks = iota
	pcBlocksRun
	pcInstrumented
	pcWarps
	pcGldReq
	pcGldSectors
	pcGldBytes
	pcGldLanes
	pcGstReq
	pcGstSectors
	pcGstBytes
	pcGstLanes
	pcAtomReq
	pcAtomSectors
	pcAtomLanes
	pcAtomSame
	pcSldReq
	pcSldWaves
	pcSldIdeal
	pcSldLanes
	pcSstReq
	pcSstWaves
	pcSstIdeal
	pcSstLanes
	pcSatomReq
	pcSatomLanes
	pcBarriers
	pcCollectives
	pcMMA
	pcN = pcMMA + mmaKinds
)

// mmaKinds is KBS_MMA_KINDS.
const mmaKinds = 8

// cProf is kbs_prof.
type cProf struct {
	Kernel    unsafe.Pointer
	Module    unsafe.Pointer
	Grid      Dim3
	Block     Dim3
	Pad       uint32
	DynShared uint64
	NBufs     uint64
	NStatic   uint64
	C         [pcN]uint64
}

// cProfBuf is kbs_prof_buf.
type cProfBuf struct {
	Base, Size, ReadSectors, WriteSectors uint64
}

// An MMAKind is a shape and input type of warp-wide matrix product.
type MMAKind struct {
	Name    string // "m16n8k16.f16", "simdgroup8x8x8.f32"
	M, N, K int
}

// FLOPs returns the floating-point (or integer) operations of one
// product: a multiply-add counts 2.
func (k MMAKind) FLOPs() float64 { return 2 * float64(k.M) * float64(k.N) * float64(k.K) }

// MMAKindNamed returns the matrix-product kind of that name
// ("m16n8k32.s8"), and whether there is one.
func MMAKindNamed(name string) (MMAKind, bool) {
	for _, k := range mmaKindTable {
		if k.Name == name && name != "" {
			return k, true
		}
	}
	return MMAKind{}, false
}

// mmaKindTable names KBS_MMA_* (kbsimt_abi.h: the kinds CUDA device
// code passes to __kbsimt_mma), by index.
var mmaKindTable = [mmaKinds]MMAKind{
	{"m16n8k16.f16", 16, 8, 16},
	{"m16n8k16.bf16", 16, 8, 16},
	{"m16n8k16.s8", 16, 8, 16},
	{"m16n8k32.s8", 16, 8, 32},
	{"m16n8k8.tf32", 16, 8, 8},
	{"simdgroup8x8x8.f32", 8, 8, 8},
	{"simdgroup8x8x8.f16", 8, 8, 8},
	{"", 0, 0, 0},
}

// GlobalCounters count global-memory requests of one kind.
type GlobalCounters struct {
	Requests uint64 `json:"requests"`
	Sectors  uint64 `json:"sectors"` // 32-byte sectors the requests touch
	Bytes    uint64 `json:"bytes"`   // bytes the lanes asked for
	Lanes    uint64 `json:"lanes"`   // active lanes, summed over requests
}

// SectorsPerRequest is 4 for 32 lanes reading consecutive 4-byte words,
// 32 for lanes 128 bytes or more apart.
func (g GlobalCounters) SectorsPerRequest() float64 { return ratio(g.Sectors, g.Requests) }

// Efficiency is the share of the transferred bytes (sectors x 32) that
// the lanes asked for.
func (g GlobalCounters) Efficiency() float64 { return ratio(g.Bytes, 32*g.Sectors) }

// AtomicCounters count global atomics.
type AtomicCounters struct {
	Requests uint64 `json:"requests"`
	Sectors  uint64 `json:"sectors"`
	Lanes    uint64 `json:"lanes"`
	// SameAddress counts lanes whose address another lane of the same
	// request used before them: those updates serialize.
	SameAddress uint64 `json:"same_address"`
}

// SharedCounters count shared-memory requests of one kind under NVIDIA's
// banking (32 banks of 4 bytes).
type SharedCounters struct {
	Requests   uint64 `json:"requests"`
	Wavefronts uint64 `json:"wavefronts"`
	// Ideal is the wavefronts without bank conflicts: one per request of
	// 4 bytes or less a lane, 2 of 8 bytes (half-warps), 4 of 16
	// (quarter-warps), fewer where whole phases have no active lane.
	Ideal uint64 `json:"ideal"`
	Lanes uint64 `json:"lanes"`
}

// BankConflicts is the wavefronts beyond the ideal.
func (s SharedCounters) BankConflicts() uint64 { return s.Wavefronts - s.Ideal }

// BufferTraffic is a launch's traffic to one device buffer: the unique
// 32-byte sectors it read and wrote, a lower bound of its DRAM traffic.
type BufferTraffic struct {
	Label        string `json:"label,omitempty"`
	Size         int64  `json:"size"`
	ReadSectors  uint64 `json:"read_sectors"`
	WriteSectors uint64 `json:"write_sectors"`
}

// MMACount is the matrix products of one kind a launch did.
type MMACount struct {
	Kind     string  `json:"kind"`
	Products uint64  `json:"products"`
	FLOPs    float64 `json:"flops"`
}

// KernelProfile is the profile of one launch.
type KernelProfile struct {
	Kernel  string  `json:"kernel"`
	Dialect Dialect `json:"-"`
	Grid    Dim3    `json:"grid"`
	Block   Dim3    `json:"block"`
	// DynShared is the launch's dynamic shared (threadgroup) memory;
	// StaticShared the bytes of the static __shared__ (threadgroup)
	// variables the kernel touched.
	DynShared    int64 `json:"dyn_shared"`
	StaticShared int64 `json:"static_shared"`
	// Blocks is the grid's size, BlocksRun how many were run and
	// counted. Where they differ, Extrapolate scales the counters.
	Blocks    uint64 `json:"blocks"`
	BlocksRun uint64 `json:"blocks_run"`
	// Instrumented is false for a module built Fast: it has no memory
	// counters.
	Instrumented bool `json:"instrumented"`
	// Extrapolated is set on a profile that Extrapolate scaled.
	Extrapolated bool `json:"extrapolated,omitempty"`

	Warps         uint64          `json:"warps"`
	GlobalLoads   GlobalCounters  `json:"global_loads"`
	GlobalStores  GlobalCounters  `json:"global_stores"`
	Atomics       AtomicCounters  `json:"atomics"`
	SharedLoads   SharedCounters  `json:"shared_loads"`
	SharedStores  SharedCounters  `json:"shared_stores"`
	SharedAtomics GlobalCounters  `json:"shared_atomics"` // Requests and Lanes
	Barriers      uint64          `json:"barriers"`
	Collectives   uint64          `json:"collectives"`
	MMA           []MMACount      `json:"mma,omitempty"`
	Buffers       []BufferTraffic `json:"buffers,omitempty"`
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Requests is every warp-level memory request.
func (p *KernelProfile) Requests() uint64 {
	return p.GlobalLoads.Requests + p.GlobalStores.Requests + p.Atomics.Requests + p.SharedLoads.Requests +
		p.SharedStores.Requests + p.SharedAtomics.Requests
}

// WarpEfficiency is the active lanes per warp-level memory instruction
// over 32: 1 when every lane of every warp takes part, 0.5 where a branch
// leaves half of them out. (The emulator sees memory instructions, not
// arithmetic: this is the efficiency of those.)
func (p *KernelProfile) WarpEfficiency() float64 {
	lanes := p.GlobalLoads.Lanes + p.GlobalStores.Lanes + p.Atomics.Lanes + p.SharedLoads.Lanes +
		p.SharedStores.Lanes + p.SharedAtomics.Lanes
	return ratio(lanes, 32*p.Requests())
}

// DRAMBytes is the unique sectors read plus those written, over every
// buffer, times 32: a lower bound of the launch's DRAM traffic (each
// sector crosses once, as if every cache held it between uses).
func (p *KernelProfile) DRAMBytes() float64 {
	var s uint64
	for _, b := range p.Buffers {
		s += b.ReadSectors + b.WriteSectors
	}
	return 32 * float64(s)
}

// TensorFLOPs is the FLOPs of the matrix products.
func (p *KernelProfile) TensorFLOPs() float64 {
	var f float64
	for _, m := range p.MMA {
		f += m.FLOPs
	}
	return f
}

// Extrapolate returns the profile scaled from the blocks run to the
// whole grid: each counter times Blocks/BlocksRun; a buffer's unique
// sectors likewise, capped at the buffer's size (blocks that read the
// same data do not add to it). It is p itself where every block ran.
func (p *KernelProfile) Extrapolate() KernelProfile {
	q := *p
	if p.BlocksRun == 0 || p.BlocksRun == p.Blocks {
		return q
	}
	f := float64(p.Blocks) / float64(p.BlocksRun)
	sc := func(v uint64) uint64 { return uint64(math.Round(float64(v) * f)) }
	scg := func(g GlobalCounters) GlobalCounters {
		return GlobalCounters{sc(g.Requests), sc(g.Sectors), sc(g.Bytes), sc(g.Lanes)}
	}
	scs := func(s SharedCounters) SharedCounters {
		return SharedCounters{sc(s.Requests), sc(s.Wavefronts), sc(s.Ideal), sc(s.Lanes)}
	}
	q.Extrapolated = true
	q.BlocksRun = p.Blocks
	q.Warps = sc(p.Warps)
	q.GlobalLoads, q.GlobalStores, q.SharedAtomics = scg(p.GlobalLoads), scg(p.GlobalStores), scg(p.SharedAtomics)
	q.Atomics = AtomicCounters{sc(p.Atomics.Requests), sc(p.Atomics.Sectors), sc(p.Atomics.Lanes), sc(p.Atomics.SameAddress)}
	q.SharedLoads, q.SharedStores = scs(p.SharedLoads), scs(p.SharedStores)
	q.Barriers, q.Collectives = sc(p.Barriers), sc(p.Collectives)
	q.MMA = make([]MMACount, len(p.MMA))
	for i, m := range p.MMA {
		q.MMA[i] = MMACount{m.Kind, sc(m.Products), m.FLOPs * f}
	}
	q.Buffers = make([]BufferTraffic, len(p.Buffers))
	for i, b := range p.Buffers {
		max := uint64(b.Size+31) / 32
		q.Buffers[i] = b
		q.Buffers[i].ReadSectors = min(sc(b.ReadSectors), max)
		q.Buffers[i].WriteSectors = min(sc(b.WriteSectors), max)
	}
	return q
}

// ProfileOptions set how StartProfile profiles.
type ProfileOptions struct {
	// SampleBlocks > 0 runs, of a launch with more blocks, only a
	// deterministic sample of about that many: the grid's corner blocks
	// and blocks spread evenly over it. The launch's results are then
	// not the kernel's (most blocks never ran); its counters are for
	// Extrapolate. 0 runs every block.
	SampleBlocks int
}

// StartProfile profiles every launch that follows on the device, by Go
// Launch or through the emulated CUDA driver, until StopProfile, which
// returns them. Modules built Checked give every counter; Fast ones only
// the launch geometry, barriers, collectives and matrix products.
func (d *Device) StartProfile(o ProfileOptions) error {
	if o.SampleBlocks < 0 {
		return fmt.Errorf("simt: negative SampleBlocks %d", o.SampleBlocks)
	}
	d.rt.profStart(uint64(o.SampleBlocks))
	return nil
}

// StopProfile ends profiling and returns a profile per launch since
// StartProfile, in launch order.
func (d *Device) StopProfile() []KernelProfile {
	n := int(d.rt.profStop())
	out := make([]KernelProfile, 0, n)
	for i := 0; i < n; i++ {
		var c cProf
		if d.rt.profGet(int32(i), &c, nil, nil) != 0 {
			break
		}
		bufs := make([]cProfBuf, c.NBufs+1)
		statics := make([]uint64, c.NStatic+1)
		if d.rt.profGet(int32(i), &c, &bufs[0], &statics[0]) != 0 {
			break
		}
		out = append(out, d.profile(&c, bufs[:c.NBufs], statics[:c.NStatic]))
	}
	return out
}

// profile turns the runtime's record into a KernelProfile.
func (d *Device) profile(c *cProf, bufs []cProfBuf, statics []uint64) KernelProfile {
	p := KernelProfile{
		Kernel: goString(c.Kernel), Grid: c.Grid, Block: c.Block, DynShared: int64(c.DynShared),
		Blocks: c.C[pcBlocks], BlocksRun: c.C[pcBlocksRun], Instrumented: c.C[pcInstrumented] != 0,
		Warps:         c.C[pcWarps],
		GlobalLoads:   GlobalCounters{c.C[pcGldReq], c.C[pcGldSectors], c.C[pcGldBytes], c.C[pcGldLanes]},
		GlobalStores:  GlobalCounters{c.C[pcGstReq], c.C[pcGstSectors], c.C[pcGstBytes], c.C[pcGstLanes]},
		Atomics:       AtomicCounters{c.C[pcAtomReq], c.C[pcAtomSectors], c.C[pcAtomLanes], c.C[pcAtomSame]},
		SharedLoads:   SharedCounters{c.C[pcSldReq], c.C[pcSldWaves], c.C[pcSldIdeal], c.C[pcSldLanes]},
		SharedStores:  SharedCounters{c.C[pcSstReq], c.C[pcSstWaves], c.C[pcSstIdeal], c.C[pcSstLanes]},
		SharedAtomics: GlobalCounters{Requests: c.C[pcSatomReq], Lanes: c.C[pcSatomLanes]},
		Barriers:      c.C[pcBarriers], Collectives: c.C[pcCollectives],
	}
	for k := 0; k < mmaKinds; k++ {
		if n := c.C[pcMMA+k]; n > 0 {
			p.MMA = append(p.MMA, MMACount{Kind: mmaKindTable[k].Name, Products: n, FLOPs: float64(n) * mmaKindTable[k].FLOPs()})
		}
	}
	for _, b := range bufs {
		t := BufferTraffic{Size: int64(b.Size), ReadSectors: b.ReadSectors, WriteSectors: b.WriteSectors}
		if buf := d.buffer(uintptr(b.Base)); buf != nil {
			t.Label = buf.Label
		}
		p.Buffers = append(p.Buffers, t)
	}
	// The runtime lists the buffers in the order of their addresses,
	// which change from run to run: largest first, so that a record's
	// text changes only where its counters do.
	slices.SortStableFunc(p.Buffers, func(a, b BufferTraffic) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(b.ReadSectors, a.ReadSectors),
			cmp.Compare(b.WriteSectors, a.WriteSectors), cmp.Compare(a.Label, b.Label))
	})
	if c.Module != nil {
		m := d.moduleOf(c.Module)
		p.Dialect = m.dialect
		p.StaticShared = m.staticShared(statics)
	}
	return p
}

// staticShared sums the sizes of the static shared variables that hold
// the given offsets of the module's shared memory, without their red
// zones.
func (m *Module) staticShared(offs []uint64) int64 {
	m.symOnce.Do(m.loadTLSSyms)
	seen := map[int]bool{}
	var n int64
	for _, o := range offs {
		i := sort.Search(len(m.tls), func(i int) bool { return m.tls[i].off > o }) - 1
		if i < 0 || o >= m.tls[i].off+m.tls[i].size || seen[i] || m.tls[i].name == "kbs_dyn_smem" {
			continue
		}
		seen[i] = true
		s := int64(m.tls[i].size)
		if m.tls[i].red {
			s -= redZoneBytes
		}
		n += s
	}
	return n
}

// redZoneBytes is KBS_SHARED_REDZONE: the red zone after each
// function-scope shared array.
const redZoneBytes = 64
