package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// pool is a fixed set of long-lived worker goroutines that split a range
// of work items. The calling goroutine takes part as worker 0, so a pool of
// n threads starts n-1 goroutines. The range is cut into contiguous chunks
// (several per thread) that the threads take in turn from a shared
// counter, so a thread the OS deschedules on a busy machine delays only
// its current chunk. The pool runs one parallel region at a time (the
// backend serializes Compute), which lets it reuse its state: a region
// whose job is a pointer to a long-lived struct allocates nothing.
type pool struct {
	threads int
	work    []chan task
	done    sync.WaitGroup
	wg      sync.WaitGroup
	once    sync.Once

	// The current region: its job, size and chunk, and the next item to
	// hand out.
	j        job
	n, chunk int
	next     atomic.Int64

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

func newPool(threads int) *pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &pool{threads: threads, work: make([]chan task, threads-1)}
	for i := range p.work {
		ch := make(chan task, 1)
		p.work[i] = ch
		p.wg.Add(1)
		go func(worker int) {
			defer p.wg.Done()
			for range ch {
				p.safeDrain(worker)
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
	for w := 1; w < nt; w++ {
		p.work[w-1] <- task{}
	}
	p.safeDrain(0)
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
