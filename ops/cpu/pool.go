package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// pool is a fixed set of long-lived worker goroutines that split a range
// of work items. The calling goroutine takes part as worker 0, so a pool of
// n threads starts n-1 goroutines. The range is cut into contiguous chunks
// (several per thread), handed out in home parts (homeParts): each thread
// takes the chunks of its own contiguous share of the range first, so
// that region after region it works on the same items, whose data stays
// in its own L2 (a decode step's recurrent state, the rows one op writes
// and the next reads), then takes what is left of the others' shares,
// so a thread the OS deschedules on a busy machine delays only its
// current chunk; runGuided hands out shrinking runs instead
// (guidedRuns). The pool runs one parallel region at a time (the
// backend serializes Compute), which lets it reuse its state: a region
// whose job is a pointer to a long-lived struct allocates nothing.
//
// A region is published by one atomic store (gen: a sequence number and
// the number of threads taking part), which workers polling for it see
// at once; between regions a worker polls for the next one for a while
// (spin) before it parks, and the caller polls for the workers' last
// chunks before it parks. Only a parked goroutine costs a wake-up (a
// futex round trip, about as much as a decode-sized op's share of work),
// so the nodes of a graph computed back to back wake the workers once.
type pool struct {
	threads int
	// spin is how long an idle worker polls for the next region, and the
	// caller for the workers' last chunks, before parking (0: park at
	// once).
	spin    time.Duration
	workers []parker // workers 1..threads-1
	caller  parker
	wg      sync.WaitGroup
	once    sync.Once
	closed  atomic.Bool
	seq     uint64

	// gen publishes a region: its sequence number times genActive plus
	// the number of threads taking part (the caller included). The
	// region's job, size and chunk are written before gen and not again
	// until every thread taking part has drained it.
	gen      atomic.Uint64
	j        job
	n, chunk int
	// home hands out the fixed chunks, by chunk index, each thread its
	// own contiguous share first (homeParts); pending counts the workers
	// still draining the region.
	home    homeParts
	pending atomic.Int32
	// guided: the region hands out guided runs (runs, see runGuided)
	// instead of fixed chunks.
	guided bool
	runs   guidedRuns

	// panicMu guards the first panic a job raised in the current region,
	// which run re-raises on the caller's goroutine once every worker has
	// stopped (a panic on a worker goroutine would otherwise end the
	// process, and the caller could not report it).
	panicMu  sync.Mutex
	panicked error
}

// genActive is the factor of gen's sequence number: the low bits hold a
// region's thread count (at most cli.MaxThreads, 4096).
const genActive = 1 << 16

// A job is the body of a parallel region: do handles items [lo, hi) on
// worker w, in [0, threads).
type job interface {
	do(w, lo, hi int)
}

// funcJob adapts a function to job.
type funcJob func(w, lo, hi int)

func (f funcJob) do(w, lo, hi int) { f(w, lo, hi) }

// A parker lets one goroutine sleep until a condition another goroutine
// makes true, with no channel operation unless it really sleeps: the
// sleeper announces itself (sleeping) before it checks the condition one
// last time, and the waker, after making the condition true, sends a
// token only to an announced sleeper it takes the announcement from.
type parker struct {
	sleeping atomic.Bool
	ch       chan struct{} // buffered 1
}

func newParker() parker { return parker{ch: make(chan struct{}, 1)} }

// sleep returns once cond holds, blocking while it does not.
func (k *parker) sleep(cond func() bool) {
	for !cond() {
		k.sleeping.Store(true)
		if cond() {
			if k.sleeping.CompareAndSwap(true, false) {
				return
			}
			<-k.ch // a waker took the announcement and sent a token
			return
		}
		<-k.ch
	}
}

// wake wakes the sleeper, if one is announced; call it after making its
// condition true.
func (k *parker) wake() {
	if k.sleeping.CompareAndSwap(true, false) {
		k.ch <- struct{}{}
	}
}

func newPool(threads int, spin time.Duration) *pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if threads > runtime.GOMAXPROCS(0) {
		// More threads than processors: a polling goroutine would hold a
		// processor another one needs.
		spin = 0
	}
	p := &pool{threads: threads, spin: max(spin, 0), workers: make([]parker, threads-1), caller: newParker()}
	for i := range p.workers {
		p.workers[i] = newParker()
		p.wg.Add(1)
		go func(w int) {
			defer p.wg.Done()
			p.work(w)
		}(i + 1)
	}
	return p
}

// work is worker w's loop: wait for a region, drain it when w takes part,
// and tell the caller when it was the last.
func (p *pool) work(w int) {
	k := &p.workers[w-1]
	// gen is 0 until the first region: a worker that starts after the
	// caller published one must still take part in it.
	var seen uint64
	changed := func() bool { return p.gen.Load() != seen }
	for {
		if !spinUntil(p.spin, changed) {
			k.sleep(changed)
		}
		seen = p.gen.Load()
		if p.closed.Load() {
			return
		}
		if w < int(seen%genActive) {
			p.safeDrain(w)
			if p.pending.Add(-1) == 0 {
				p.caller.wake()
			}
		}
	}
}

// parallelFor splits [0, n) into contiguous chunks and runs fn(worker,
// lo, hi) on each, worker in [0, threads), a chunk holding at least
// minPerThread items. Small ranges (n < minPerThread*2) run on the caller
// alone. It returns when all are done.
func (p *pool) parallelFor(n, minPerThread int, fn func(worker, lo, hi int)) {
	p.run(n, minPerThread, funcJob(fn))
}

// chunksPerThread is how many chunks each thread gets on average.
const chunksPerThread = 4

// run is parallelFor for a job.
func (p *pool) run(n, minPerThread int, j job) {
	if n <= 0 {
		return
	}
	nt := p.threadsFor(n, minPerThread)
	if nt <= 1 {
		j.do(0, 0, n)
		return
	}
	p.chunk = max(minPerThread, (n+nt*chunksPerThread-1)/(nt*chunksPerThread))
	p.home.reset(nt, int64((n+p.chunk-1)/p.chunk))
	p.guided = false
	p.region(j, n, nt)
}

// threadsFor returns how many threads run shares n items among with at
// least minPerThread items each (one where n is smaller).
func (p *pool) threadsFor(n, minPerThread int) int {
	return max(1, min(p.threads, n/max(minPerThread, 1)))
}

// runGuided runs j over [0, n) as run does, but hands out guided runs
// (guidedRuns: a 2*threads-th of what is left per take, down to one
// item) instead of fixed chunks, so the threads finish within about an
// item of each other and a job can join a long run's items into few
// kernel calls.
func (p *pool) runGuided(n int, j job) {
	if n <= 0 {
		return
	}
	nt := min(p.threads, n)
	if nt <= 1 {
		j.do(0, 0, n)
		return
	}
	p.runs.reset(int64(n), nt)
	p.guided = true
	p.region(j, n, nt)
}

// region publishes job j over n items to nt threads (the caller
// included), drains it on the caller and returns when every thread is
// done, re-raising a panic of the job.
func (p *pool) region(j job, n, nt int) {
	p.j, p.n = j, n
	p.pending.Store(int32(nt - 1))
	p.seq++
	p.gen.Store(p.seq*genActive + uint64(nt))
	for w := 1; w < nt; w++ {
		p.workers[w-1].wake()
	}
	p.safeDrain(0)
	// Poll a little for the workers' last chunks before parking: being
	// woken by the last worker costs the caller a futex round trip, as
	// much as a decode-sized op's whole share.
	done := func() bool { return p.pending.Load() == 0 }
	if !spinUntil(p.spin, done) {
		p.caller.sleep(done)
	}
	p.j = nil
	if err := p.panicked; err != nil {
		p.panicked = nil
		panic(err)
	}
}

// safeDrain is drain that turns a panic of the job into the region's
// recorded panic and stops handing out further chunks.
func (p *pool) safeDrain(w int) {
	defer func() {
		if r := recover(); r != nil {
			p.home.stop()
			p.runs.taken.Store(int64(p.n))
			p.panicMu.Lock()
			if p.panicked == nil {
				p.panicked = fmt.Errorf("cpu: kernel panicked on worker %d: %v\n%s", w, r, debug.Stack())
			}
			p.panicMu.Unlock()
		}
	}()
	p.drain(w)
}

// drain runs chunks of the current region on worker w until none is
// left.
func (p *pool) drain(w int) {
	if p.guided {
		for lo, hi, ok := p.runs.take(); ok; lo, hi, ok = p.runs.take() {
			p.j.do(w, lo, hi)
		}
		return
	}
	k := 0
	for c := p.home.take(w, &k); c >= 0; c = p.home.take(w, &k) {
		lo := int(c) * p.chunk
		p.j.do(w, lo, min(lo+p.chunk, p.n))
	}
}

func (p *pool) close() {
	p.once.Do(func() {
		p.closed.Store(true)
		p.seq++
		p.gen.Store(p.seq * genActive)
		for i := range p.workers {
			p.workers[i].wake()
		}
		p.wg.Wait()
	})
}

// spinUntil polls cond until it holds or d has passed, and reports
// whether it held; d <= 0 polls once. The polls only read shared memory
// (an atomic load, a channel's length), so they do not slow the core
// that will write it.
func spinUntil(d time.Duration, cond func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if d <= 0 {
			return false
		}
		if i%64 == 0 {
			now := time.Now()
			if i == 0 {
				start = now
			} else if now.Sub(start) > d {
				return false
			}
			runtime.Gosched()
		}
	}
}

// homeParts hands out n work items to nt threads: the items are cut into
// nt contiguous parts, and worker w takes the items of part w in order,
// then what is left of the others. From call to call a thread so works
// on the same items (the same weight rows, which stay in the caches
// nearest to it, where the hardware gives each core a cache of its own)
// as long as the threads keep pace, and the work still balances when a
// thread starts late or is held up. A shared counter instead hands the
// same items to whichever thread asks first, a different one each call:
// on a Zen 5, SSM_SCAN's Mamba-2 decode step (a 1.5 MiB state) took
// 25 µs so against 20 µs in home parts, and ADD of two [4096, 512]
// rows 132 µs against 115 µs (BenchmarkSSMScan, BenchmarkEltLarge).
type homeParts struct {
	parts []partCounter
	n     int64
}

// A partCounter is the next item of one home part, alone on its cache
// line (each thread takes the items of its own part without sharing
// lines).
type partCounter struct {
	next atomic.Int64
	_    [56]byte
}

// reset starts a region of n items for nt threads (the counters are
// set before the pool hands the region out, which orders them before
// every take).
func (h *homeParts) reset(nt int, n int64) {
	if cap(h.parts) < nt {
		h.parts = make([]partCounter, nt)
	}
	h.parts, h.n = h.parts[:nt], n
	for p := range nt {
		h.parts[p].next.Store(int64(p) * n / int64(nt))
	}
}

// take returns worker w's next item, or -1 when none is left; *k (0 at
// the start) is how many parts, counting from w's own, it has emptied.
func (h *homeParts) take(w int, k *int) int64 {
	np := len(h.parts)
	for *k < np {
		p := (w + *k) % np
		end := int64(p+1) * h.n / int64(np)
		if t := h.parts[p].next.Add(1) - 1; t < end {
			return t
		}
		*k++
	}
	return -1
}

// stop makes every later take return -1 (a job panicked).
func (h *homeParts) stop() {
	for p := range h.parts {
		h.parts[p].next.Store(h.n)
	}
}
