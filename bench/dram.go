package bench

import (
	"errors"
	"runtime"
	"time"
)

// A DRAMProbe measures the machine's DRAM read bandwidth again and again
// over one buffer, for runs that set a memory-bound program's measured
// bandwidth beside the machine's at the same time: on a shared host the
// DRAM bandwidth a VM gets moves by half or more within minutes, so a
// roofline measured once says little about a run an hour later. It reads
// with the fastest streaming read the CPU has (zmm, ymm, else Go's
// uint64 loads), each thread its share of the buffer, as MeasureRoofline
// does for its dram level.
type DRAMProbe struct {
	threads int
	buf     []uint64
	read    peakRead
}

// NewDRAMProbe allocates and touches the probe's buffer: bytes in all
// (DefaultDRAMBytes keeps it far out of any last-level cache), read by
// threads threads, on transparent huge pages where the kernel gives them.
func NewDRAMProbe(threads int, bytes int64) (*DRAMProbe, error) {
	if threads < 1 || threads > 4096 {
		return nil, errors.New("bench: DRAM probe: threads not in 1..4096")
	}
	if bytes < int64(threads)*4096 || bytes > 64<<30 {
		return nil, errors.New("bench: DRAM probe: buffer not in 4 KiB a thread .. 64 GiB")
	}
	p := &DRAMProbe{threads: threads, buf: readBuffer(bytes, true)}
	reads := peakReads()
	p.read = reads[len(reads)-1] // the widest the CPU has
	return p, nil
}

// Measure reads the buffer for about budget and returns the read peak
// (level dram; best and median over the samples, in GB/s).
func (p *DRAMProbe) Measure(budget time.Duration) Peak {
	pk := measureRead(p.read.name, p.read.f, LevelDRAM, threadSlices(p.buf, p.threads), budget)
	runtime.KeepAlive(p.buf)
	return pk
}
