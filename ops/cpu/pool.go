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
// (several per thread) that the threads take in turn from a shared
// counter, so a thread the OS deschedules on a busy machine delays only
// its current chunk. The pool runs one parallel region at a time (the
// backend serializes Compute), which lets it reuse its state: a region
// whose job is a pointer to a long-lived struct allocates nothing. Between
// regions a worker polls for the next one for a while (spin) before it
// parks on its channel, and the caller polls for the workers' last
// chunks before it waits: a parked goroutine's wake-up (a futex round
// trip) costs about as much as a decode-sized op's share of work.
type pool struct {
	threads int
	// spin is how long an idle worker polls for the next region, and the
	// caller for the workers' last chunks, before parking (0: park at
	// once).
	spin time.Duration
	work []chan task
	done sync.WaitGroup
	wg   sync.WaitGroup
	once sync.Once

	// The current region: its job, size and chunk, and the next item to
	// hand out.
	j        job
	n, chunk int
	next     atomic.Int64
	// pending counts the woken workers still draining the region.
	pending atomic.Int32

	// panicMu guards the first panic a job raised in the current region,
	// which run re-raises on the caller's goroutine once every worker has
	// stopped (a panic on a worker goroutine would otherwise end the
	// process, and the caller could not report it).
	panicMu  sync.Mutex
	panicked error
}

// A job is the body of a parallel region: do handles items [lo, hi) on
// worker w, in [0, threads).
type job interface {
	do(w, lo, hi int)
}

// funcJob adapts a function to job.
type funcJob func(w, lo, hi int)

func (f funcJob) do(w, lo, hi int) { f(w, lo, hi) }

// task wakes a worker for the current region.
type task struct{}

func newPool(threads int, spin time.Duration) *pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if threads > runtime.GOMAXPROCS(0) {
		// More threads than processors: a polling goroutine would hold a
		// processor another one needs.
		spin = 0
	}
	p := &pool{threads: threads, spin: max(spin, 0), work: make([]chan task, threads-1)}
	for i := range p.work {
		ch := make(chan task, 1)
		p.work[i] = ch
		p.wg.Add(1)
		go func(worker int) {
			defer p.wg.Done()
			for p.await(ch) {
				p.safeDrain(worker)
				p.pending.Add(-1)
				p.done.Done()
			}
		}(i + 1)
	}
	return p
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
	if minPerThread < 1 {
		minPerThread = 1
	}
	nt := p.threads
	if m := n / minPerThread; m < nt {
		nt = m
	}
	if nt <= 1 {
		j.do(0, 0, n)
		return
	}
	p.j, p.n = j, n
	p.chunk = max(minPerThread, (n+nt*chunksPerThread-1)/(nt*chunksPerThread))
	p.next.Store(0)
	p.done.Add(nt - 1)
	p.pending.Store(int32(nt - 1))
	for w := 1; w < nt; w++ {
		p.work[w-1] <- task{}
	}
	p.safeDrain(0)
	// Spin a little for the workers' last chunks before parking: being
	// woken by the last worker costs the caller a futex round trip, as
	// much as a decode-sized op's whole share.
	spinUntil(p.spin, func() bool { return p.pending.Load() == 0 })
	p.done.Wait()
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
			p.next.Store(int64(p.n))
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
	for {
		lo := int(p.next.Add(int64(p.chunk))) - p.chunk
		if lo >= p.n {
			return
		}
		p.j.do(w, lo, min(lo+p.chunk, p.n))
	}
}

func (p *pool) close() {
	p.once.Do(func() {
		for _, ch := range p.work {
			close(ch)
		}
		p.wg.Wait()
	})
}

// await returns once a region's task reaches ch, true, or ch is closed,
// false: it polls ch for up to p.spin, then blocks on it.
func (p *pool) await(ch chan task) bool {
	var ok, got bool
	spinUntil(p.spin, func() bool {
		select {
		case _, ok = <-ch:
			got = true
		default:
		}
		return got
	})
	if got {
		return ok
	}
	_, ok = <-ch
	return ok
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
