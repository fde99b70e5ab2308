package bench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kernbench/kernbench/quant"
)

// Kinds of peak a roofline measures.
const (
	// KindF32FMA is float32 fused multiply-add throughput, in GFLOP/s
	// (a multiply-add counts 2).
	KindF32FMA = "f32-fma"
	// KindInt8Dot is the throughput of byte dot products as ggml's
	// quantized kernels compute them, in GOP/s (a byte product and its
	// addition count 2).
	KindInt8Dot = "int8-dot"
	// KindBF16Dot is the throughput of bfloat16 pair dot products
	// accumulated in float32 lanes (AVX512_BF16's VDPBF16PS), in GFLOP/s
	// (each product and its addition count 2): the ceiling of a bf16
	// matrix product on a CPU that has them.
	KindBF16Dot = "bf16-dot"
	// KindRead is streaming read bandwidth, in GB/s (1e9 bytes).
	KindRead = "read"
)

// Memory levels of a read peak.
const (
	LevelCache = "cache" // a buffer per thread that fits in its L2
	LevelL3    = "l3"    // a buffer that fits in the last-level cache and not in the L2s
	LevelDRAM  = "dram"  // a buffer many times the last-level cache
)

// A Peak is one measured ceiling of the machine.
type Peak struct {
	Kind string `json:"kind"`
	// Kernel says what ran: the instruction loop, or "go" code.
	Kernel  string `json:"kernel"`
	Threads int    `json:"threads"`
	// Level and BufferBytes (all threads together) describe a read.
	Level       string `json:"level,omitempty"`
	BufferBytes int64  `json:"buffer_bytes,omitempty"`
	// Best and Median are over the samples, in Unit.
	Best    float64 `json:"best"`
	Median  float64 `json:"median"`
	Unit    string  `json:"unit"`
	Samples int     `json:"samples"`
}

// A Roofline is a machine's measured compute and bandwidth ceilings, per
// thread count.
type Roofline struct {
	MachineID string    `json:"machine_id"`
	Date      time.Time `json:"date"`
	// Note says how it was measured.
	Note  string `json:"note"`
	Peaks []Peak `json:"peaks"`
}

// RooflineNote describes the measurement for the records.
const RooflineNote = "compute: register-resident loops with independent chains (no memory traffic); " +
	"read: each thread streams its own buffer (cache: half its L2, l3: a slice of half the L3, dram: a slice of a buffer >= 8x the L3; l3 and dram on transparent huge pages where the kernel gives them); " +
	"goroutines locked to OS threads and started together; best and median over the samples"

// Threads returns the thread counts measured, ascending.
func (r Roofline) Threads() []int {
	var out []int
	for _, p := range r.Peaks {
		if !slices.Contains(out, p.Threads) {
			out = append(out, p.Threads)
		}
	}
	slices.Sort(out)
	return out
}

// best returns the highest peak of a kind (and level) at a thread count.
func (r Roofline) best(kind, level string, threads int) (Peak, bool) {
	var out Peak
	found := false
	for _, p := range r.Peaks {
		if p.Kind == kind && p.Threads == threads && (level == "" || p.Level == level) && (!found || p.Best > out.Best) {
			out, found = p, true
		}
	}
	return out, found
}

// Compute returns the f32 FMA ceiling at a thread count: the fastest
// kernel measured.
func (r Roofline) Compute(threads int) (Peak, bool) { return r.best(KindF32FMA, "", threads) }

// Int8 returns the int8 dot-product ceiling at a thread count.
func (r Roofline) Int8(threads int) (Peak, bool) { return r.best(KindInt8Dot, "", threads) }

// BF16 returns the bf16 dot-product ceiling at a thread count; ok is
// false on a CPU without one (or a roofline measured before it was).
func (r Roofline) BF16(threads int) (Peak, bool) { return r.best(KindBF16Dot, "", threads) }

// Bandwidth returns the read ceiling of a memory level at a thread count.
func (r Roofline) Bandwidth(threads int, level string) (Peak, bool) {
	return r.best(KindRead, level, threads)
}

// ComputeKind returns the compute ceiling a record of op (by name) with
// element type typ is judged against: KindInt8Dot for the matrix
// products whose weights meet byte-quantized activations (q8_0, q8_1 or
// q8_K, as ggml converts them), whose inner loop is an integer dot
// product; KindBF16Dot for bf16 matrix products, whose inner loop on a
// CPU with AVX512_BF16 is a bf16 pair dot product (Attainable judges
// them by the f32 FMA peak where the roofline has no bf16 one);
// KindF32FMA otherwise.
func ComputeKind(op, typ string) string {
	if op != "MUL_MAT" && op != "MUL_MAT_ID" {
		return KindF32FMA
	}
	t, err := quant.ParseType(typ)
	if err != nil {
		return KindF32FMA
	}
	if t == quant.BF16 {
		return KindBF16Dot
	}
	switch t.VecDotType() {
	case quant.Q8_0, quant.Q8_1, quant.Q8_K:
		return KindInt8Dot
	}
	return KindF32FMA
}

// Attainable returns the roofline bound for a point at a thread count:
// min(compute peak, intensity x bandwidth), in GFLOP/s (GOP/s for the
// int8 ceiling), and which ceiling bounds it ("compute" for f32 FMA,
// "int8" for the integer dot product, "bf16" for the bf16 one, "cache",
// "l3" or "dram"). kind is the point's compute ceiling (ComputeKind); a
// roofline without an int8 or bf16 peak judges by the f32 one.
//
// The bandwidth is DRAM's unless the point's bytes fit in cacheBytes,
// the last-level cache (they stay cached, since benchmarks reuse their
// inputs): then it is the in-cache (L2) one when they also fit in the
// threads' L2s, taken as twice the in-cache read's buffer (half an L2 a
// thread), and the L3 read's otherwise. A roofline measured without an
// L3 read judges every point that fits by the in-cache one. ok is false
// when the roofline lacks that thread count.
func (r Roofline) Attainable(threads int, kind string, intensity float64, bytes, cacheBytes int64) (gflops float64, roof string, ok bool) {
	c, okc := r.Compute(threads)
	roof = "compute"
	switch kind {
	case KindInt8Dot:
		if i8, ok8 := r.Int8(threads); ok8 {
			c, okc, roof = i8, true, "int8"
		}
	case KindBF16Dot:
		if b16, okb := r.BF16(threads); okb {
			c, okc, roof = b16, true, "bf16"
		}
	}
	level := LevelDRAM
	if cacheBytes > 0 && bytes <= cacheBytes {
		level = LevelCache
		l2, ok2 := r.Bandwidth(threads, LevelCache)
		if _, ok3 := r.Bandwidth(threads, LevelL3); ok3 && ok2 && bytes > 2*l2.BufferBytes {
			level = LevelL3
		}
	}
	bw, okb := r.Bandwidth(threads, level)
	if !okc || !okb {
		return 0, "", false
	}
	mem := intensity * bw.Best
	if mem < c.Best {
		return mem, level, true
	}
	return c.Best, roof, true
}

// RooflineOptions configure MeasureRoofline. Zero fields take defaults.
type RooflineOptions struct {
	// Threads are the thread counts to measure; default 1 and every CPU.
	Threads []int
	// Time is spent on each kernel at each thread count; default 250ms.
	Time time.Duration
	// CacheBytes is each thread's in-cache buffer; default half the L2
	// (128 KiB when unknown).
	CacheBytes int64
	// DRAMBytes is the whole DRAM buffer, split between threads; default
	// DefaultDRAMBytes.
	DRAMBytes int64
	// L3Bytes is the whole last-level cache buffer, split between
	// threads; default half the L3. Negative, or an unknown L3, skips
	// the level.
	L3Bytes int64
}

// peakKernel is a register-resident loop: run(iters) does workPerIter
// operations per iteration.
type peakKernel struct {
	kind        string
	name        string
	workPerIter float64
	run         func(iters int)
}

// peakRead is a streaming read kernel: name and the loop over a buffer.
type peakRead struct {
	name string
	f    func(p []byte)
}

// MeasureRoofline measures the machine's ceilings: f32 FMA (pure Go, and
// AVX2 and AVX-512 loops where the CPU has them), int8 dot products (AVX2,
// and AVX512_VNNI's), bf16 dot products (where the CPU has AVX512_BF16),
// and read bandwidth in the L2s, the L3 and from DRAM, at each thread
// count. Every kernel at every level takes about Time: 15 x Time per
// thread count on a CPU with all of them.
func MeasureRoofline(m Machine, o RooflineOptions) (Roofline, error) {
	if len(o.Threads) == 0 {
		o.Threads = []int{1}
		if n := runtime.NumCPU(); n > 1 {
			o.Threads = append(o.Threads, n)
		}
	}
	for _, t := range o.Threads {
		if t < 1 || t > 4096 {
			return Roofline{}, fmt.Errorf("bench: roofline: %d threads", t)
		}
	}
	if o.Time <= 0 {
		o.Time = 250 * time.Millisecond
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 128 << 10
		if m.L2 > 0 {
			o.CacheBytes = int64(m.L2) / 2
		}
	}
	if o.DRAMBytes <= 0 {
		o.DRAMBytes = DefaultDRAMBytes(m)
	}
	if o.L3Bytes == 0 && m.L3 > 0 {
		o.L3Bytes = int64(m.L3) / 2
	}
	if o.CacheBytes > 1<<30 || o.L3Bytes > 1<<30 || o.DRAMBytes > 64<<30 {
		return Roofline{}, errors.New("bench: roofline: buffer sizes above 1 GiB per thread in cache, 1 GiB in L3 or 64 GiB in DRAM")
	}
	r := Roofline{MachineID: m.ID, Date: time.Now().UTC().Truncate(time.Second), Note: RooflineNote}
	kernels := append([]peakKernel{{kind: KindF32FMA, name: goKernelName("go scalar float32 a*x+b, 12 chains"), workPerIter: 24, run: fmaGo}}, asmKernels()...)

	maxThreads := slices.Max(o.Threads)
	dram := readBuffer(o.DRAMBytes, true)
	caches := make([][]byte, maxThreads)
	for i := range caches {
		caches[i] = asBytes(readBuffer(o.CacheBytes, false))
	}
	var l3 []uint64
	if o.L3Bytes > 0 {
		l3 = readBuffer(o.L3Bytes, true)
	}
	reads := peakReads()

	for _, threads := range o.Threads {
		for _, k := range kernels {
			p := measureCompute(k, threads, o.Time)
			r.Peaks = append(r.Peaks, p)
		}
		// The L3 is read only where each thread's slice is larger than
		// its L2 buffer pair, so the level is not the L2's.
		l3Bufs := threadSlices(l3, threads)
		if len(l3)/threads*8 <= 2*len(caches[0]) {
			l3Bufs = nil
		}
		dramBufs := threadSlices(dram, threads)
		for _, rd := range reads {
			r.Peaks = append(r.Peaks, measureRead(rd.name, rd.f, LevelCache, caches[:threads], o.Time))
			if l3Bufs != nil {
				r.Peaks = append(r.Peaks, measureRead(rd.name, rd.f, LevelL3, l3Bufs, o.Time))
			}
			r.Peaks = append(r.Peaks, measureRead(rd.name, rd.f, LevelDRAM, dramBufs, o.Time))
		}
	}
	runtime.KeepAlive(dram)
	runtime.KeepAlive(l3)
	return r, nil
}

// DefaultDRAMBytes is the DRAM read's buffer on machine m when none is
// given: 8 times the last-level cache, at least 256 MiB.
func DefaultDRAMBytes(m Machine) int64 {
	return max(8*int64(max(m.L3, 0)), 256<<20)
}

// peakReads returns the streaming reads the CPU can run, Go's first and
// the widest last.
func peakReads() []peakRead {
	return append([]peakRead{{goKernelName("go uint64 loads, 4 accumulators"), readGo}}, asmReads()...)
}

// goKernelName appends the GOAMD64 level the binary was built for, which
// decides whether Go fuses a*x+b into an FMA (v3 and up).
func goKernelName(s string) string {
	if runtime.GOARCH != "amd64" {
		return s
	}
	level := "v1"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "GOAMD64" && st.Value != "" {
				level = st.Value
			}
		}
	}
	return s + " (GOAMD64=" + level + ")"
}

// readBuffer returns a buffer of n bytes (whole words) for the streaming
// reads, every page touched before timing; huge asks for transparent
// huge pages under it first (adviseHuge).
func readBuffer(n int64, huge bool) []uint64 {
	buf := make([]uint64, n/8)
	if huge {
		adviseHuge(asBytes(buf))
	}
	for i := range buf {
		buf[i] = uint64(i)
	}
	return buf
}

// threadSlices splits buf into threads equal slices, one a thread.
func threadSlices(buf []uint64, threads int) [][]byte {
	per := len(buf) / threads
	out := make([][]byte, threads)
	for t := range out {
		out[t] = asBytes(buf[t*per : (t+1)*per])
	}
	return out
}

func asBytes(u []uint64) []byte {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&u[0])), len(u)*8)
}

// measureCompute times kernel k on threads threads for about budget.
func measureCompute(k peakKernel, threads int, budget time.Duration) Peak {
	// Calibrate on one thread: an iteration count taking about 5 ms.
	iters := 1 << 10
	for {
		d := parallel(1, func(int) { k.run(iters) })
		if d >= 5*time.Millisecond || iters >= 1<<34 {
			break
		}
		iters *= 2
	}
	work := k.workPerIter * float64(iters) * float64(threads)
	rates := sample(budget, func() time.Duration {
		return parallel(threads, func(int) { k.run(iters) })
	}, work)
	unit := "GFLOP/s"
	if k.kind == KindInt8Dot {
		unit = "GOP/s"
	}
	return peakOf(k.kind, k.name, threads, unit, rates)
}

// measureRead times streaming reads of bufs (one per thread).
func measureRead(name string, read func([]byte), level string, bufs [][]byte, budget time.Duration) Peak {
	var total int64
	for _, b := range bufs {
		total += int64(len(b))
	}
	// Passes over the buffers per sample: about 5 ms on one thread's
	// share, so DRAM samples are a pass or two and cache samples many.
	passes := 1
	for {
		d := parallel(1, func(int) {
			for i := 0; i < passes; i++ {
				read(bufs[0])
			}
		})
		if d >= 5*time.Millisecond || passes >= 1<<20 {
			break
		}
		passes *= 2
	}
	rates := sample(budget, func() time.Duration {
		return parallel(len(bufs), func(t int) {
			for i := 0; i < passes; i++ {
				read(bufs[t])
			}
		})
	}, float64(total)*float64(passes))
	p := peakOf(KindRead, name, len(bufs), "GB/s", rates)
	p.Level, p.BufferBytes = level, total
	return p
}

// sample runs f until budget has passed (at least 3 times) and returns the
// rates work/seconds/1e9 of the runs.
func sample(budget time.Duration, f func() time.Duration, work float64) []float64 {
	var rates []float64
	var spent time.Duration
	for len(rates) < 3 || spent < budget {
		d := f()
		spent += d
		rates = append(rates, work/max(d.Seconds(), 1e-9)/1e9)
		if len(rates) >= 10000 {
			break
		}
	}
	return rates
}

func peakOf(kind, name string, threads int, unit string, rates []float64) Peak {
	s := slices.Clone(rates)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Peak{Kind: kind, Kernel: name, Threads: threads, Best: s[len(s)-1], Median: med, Unit: unit, Samples: len(s)}
}

// parallel runs work(t) for t in [0, threads) on goroutines locked to OS
// threads, released together once all have started, and returns the time
// from the release until the last finishes.
func parallel(threads int, work func(t int)) time.Duration {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(threads)
	done.Add(threads)
	for t := 0; t < threads; t++ {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-start
			work(t)
			done.Done()
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	return time.Since(t0)
}

// fmaSink keeps fmaGo's result alive (float32 bits; threads race to
// store it, atomically).
var fmaSink atomic.Uint32

// fmaX and fmaB are fmaGo's operands, variables so that the compiler
// cannot fold the loop away.
var fmaX, fmaB = float32(0.999), float32(0.001)

// fmaGo runs iters iterations of 12 independent float32 a = a*x + b
// chains: 24 FLOPs per iteration. The chains converge to b/(1-x) = 1, so
// no value is ever denormal.
func fmaGo(iters int) {
	x, b := fmaX, fmaB
	a0, a1, a2, a3, a4, a5 := x, b, x+b, x-b, x*b, x+x
	a6, a7, a8, a9, a10, a11 := b+b, x*x, b*b, x+1, b+1, x*b+1
	for i := 0; i < iters; i++ {
		a0 = a0*x + b
		a1 = a1*x + b
		a2 = a2*x + b
		a3 = a3*x + b
		a4 = a4*x + b
		a5 = a5*x + b
		a6 = a6*x + b
		a7 = a7*x + b
		a8 = a8*x + b
		a9 = a9*x + b
		a10 = a10*x + b
		a11 = a11*x + b
	}
	fmaSink.Store(math.Float32bits(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11))
}

// readSink keeps readGo's result alive.
var readSink atomic.Uint64

// readGo sums p as uint64 words with four accumulators. p's length is a
// multiple of 8 and its start 8-byte aligned (buffers come from []uint64).
func readGo(p []byte) {
	if len(p) < 8 {
		return
	}
	u := unsafe.Slice((*uint64)(unsafe.Pointer(&p[0])), len(p)/8)
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+4 <= len(u); i += 4 {
		s0 += u[i]
		s1 += u[i+1]
		s2 += u[i+2]
		s3 += u[i+3]
	}
	for ; i < len(u); i++ {
		s0 += u[i]
	}
	readSink.Add(s0 + s1 + s2 + s3)
}

// Ridge returns the arithmetic intensity (FLOP/byte) where the bandwidth
// line meets the compute ceiling; 0 when either is missing.
func Ridge(compute, bandwidth Peak) float64 {
	if bandwidth.Best <= 0 {
		return 0
	}
	return compute.Best / bandwidth.Best
}
