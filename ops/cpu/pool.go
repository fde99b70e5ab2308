package cpu

import (
	"runtime"
	"sync"
)

// pool is a fixed set of long-lived worker goroutines that split a range
// of work items. The calling goroutine takes part as worker 0, so a pool of
// n threads starts n-1 goroutines.
type pool struct {
	threads int
	work    []chan task
	wg      sync.WaitGroup
	once    sync.Once
}

type task struct {
	fn     func(worker, lo, hi int)
	lo, hi int
	done   *sync.WaitGroup
}

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
			for t := range ch {
				t.fn(worker, t.lo, t.hi)
				t.done.Done()
			}
		}(i + 1)
	}
	return p
}

// parallelFor splits [0, n) into at most threads contiguous chunks and runs
// fn(worker, lo, hi) on each, worker in [0, threads). Small ranges (n <
// minPerThread*2) run on the caller alone. It returns when all are done.
func (p *pool) parallelFor(n, minPerThread int, fn func(worker, lo, hi int)) {
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
		fn(0, 0, n)
		return
	}
	var done sync.WaitGroup
	done.Add(nt - 1)
	chunk := (n + nt - 1) / nt
	for w := 1; w < nt; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			done.Done()
			continue
		}
		p.work[w-1] <- task{fn: fn, lo: lo, hi: hi, done: &done}
	}
	fn(0, 0, min(chunk, n))
	done.Wait()
}

func (p *pool) close() {
	p.once.Do(func() {
		for _, ch := range p.work {
			close(ch)
		}
		p.wg.Wait()
	})
}
