package cpu

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// TestPoolCoversRange checks that a region hands every item to exactly
// one worker, in chunks of at least minPerThread items (but the last),
// with worker indices in range, and that regions can follow each other.
func TestPoolCoversRange(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := newPool(threads, DefaultSpin)
		for _, c := range []struct{ n, minPer int }{{0, 1}, {1, 1}, {7, 1}, {100, 3}, {1000, 1}, {5, 4}, {64, 100}} {
			counts := make([]atomic.Int32, c.n)
			var bad atomic.Int32
			p.parallelFor(c.n, c.minPer, func(w, lo, hi int) {
				if w < 0 || w >= threads || lo >= hi || (hi-lo < c.minPer && hi != c.n) {
					bad.Add(1)
				}
				for i := lo; i < hi; i++ {
					counts[i].Add(1)
				}
			})
			if bad.Load() != 0 {
				t.Errorf("threads=%d %+v: %d bad chunks", threads, c, bad.Load())
			}
			for i := range counts {
				if counts[i].Load() != 1 {
					t.Fatalf("threads=%d %+v: item %d ran %d times", threads, c, i, counts[i].Load())
				}
			}
		}
		p.close()
	}
}

// TestPoolHandoffs checks that no region is lost between the caller and
// the workers: a region published before a worker's goroutine first runs,
// regions with fewer threads than the pool's (whose idle workers must
// still see the next one), and regions back to back with spinning and
// with parking at once. A lost region hangs its caller; the test fails
// after a deadline instead.
func TestPoolHandoffs(t *testing.T) {
	done := make(chan string, 1)
	go func() {
		for _, spin := range []time.Duration{0, DefaultSpin} {
			for range 300 {
				p := newPool(4, spin)
				for _, n := range []int{64, 2, 3, 64, 4, 64} {
					var items atomic.Int32
					p.parallelFor(n, 1, func(w, lo, hi int) { items.Add(int32(hi - lo)) })
					if int(items.Load()) != n {
						done <- fmt.Sprintf("spin %v: region of %d items ran %d", spin, n, items.Load())
						return
					}
				}
				p.close()
			}
		}
		done <- ""
	}()
	select {
	case msg := <-done:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a region never finished: the pool lost a hand-off")
	}
}

// TestPoolPanic checks that a job panicking on any worker is re-raised on
// the caller's goroutine after all workers stopped, and that the pool
// still works afterwards.
func TestPoolPanic(t *testing.T) {
	p := newPool(3, 0)
	defer p.close()
	for _, bad := range []int{0, 50, 99} {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok || !strings.Contains(err.Error(), "kernel panicked") || !strings.Contains(err.Error(), "boom") {
					t.Errorf("item %d: recovered %v, want the worker's panic", bad, r)
				}
			}()
			p.parallelFor(100, 1, func(w, lo, hi int) {
				if lo <= bad && bad < hi {
					panic("boom")
				}
			})
			t.Errorf("item %d: parallelFor returned normally", bad)
		}()
	}
	var sum atomic.Int64
	p.parallelFor(100, 1, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			sum.Add(int64(i))
		}
	})
	if sum.Load() != 4950 {
		t.Errorf("after panics: sum %d, want 4950", sum.Load())
	}
}

// spinJob busies each item for about iters multiply-adds.
type spinJob struct {
	iters int
	sink  [64]float64
}

func (j *spinJob) do(w, lo, hi int) {
	x := float64(lo + 1)
	for range (hi - lo) * j.iters {
		x = x*1.0000001 + 1e-9
	}
	j.sink[w*8] += x
}

// BenchmarkPoolRegion measures a parallel region of two short items (a
// few microseconds each) on two threads, with the workers parking at once
// (spin=0) and polling first: the pool's wake-up and join latency, which
// decode-sized ops pay every call.
func BenchmarkPoolRegion(b *testing.B) {
	for _, spin := range []time.Duration{0, DefaultSpin} {
		p := newPool(2, spin)
		for _, iters := range []int{1000, 10000} {
			j := &spinJob{iters: iters}
			b.Run(fmt.Sprintf("spin=%v/iters=%d", spin, iters), func(b *testing.B) {
				for b.Loop() {
					p.run(2, 1, j)
				}
			})
		}
		p.close()
	}
}

// TestResolveSpin: Options.Spin wins, then $KERNBENCH_SPIN, then
// DefaultSpin; a bad value is an error naming the variable.
func TestResolveSpin(t *testing.T) {
	tests := []struct {
		opt  time.Duration
		env  string
		want time.Duration
		bad  bool
	}{
		{0, "", DefaultSpin, false},
		{20 * time.Microsecond, "0", 20 * time.Microsecond, false},
		{-1, "", 0, false},
		{0, "0", 0, false},
		{0, "200us", 200 * time.Microsecond, false},
		{0, "fast", 0, true},
		{0, "-5us", 0, true},
	}
	for _, tt := range tests {
		t.Setenv(EnvSpin, tt.env)
		got, err := resolveSpin(tt.opt)
		if tt.bad {
			if err == nil || !strings.Contains(err.Error(), EnvSpin) {
				t.Errorf("Spin %v, $%s=%q: got %v, %v; want an error naming the variable", tt.opt, EnvSpin, tt.env, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Spin %v, $%s=%q: got %v, %v; want %v", tt.opt, EnvSpin, tt.env, got, err, tt.want)
		}
	}
}

// TestHomeParts checks that homeParts hands out every item exactly once,
// each worker starting with its own part, whatever the order in which
// the workers ask (here one at a time, round robin, and a worker that
// takes everything before the others start).
func TestHomeParts(t *testing.T) {
	for _, nt := range []int{1, 2, 3, 5} {
		for _, n := range []int64{0, 1, 2, 7, 64, 101} {
			for order := range 3 {
				var h homeParts
				h.reset(nt, n)
				seen := make([]int, n)
				ks := make([]int, nt)
				first := make([]int64, nt)
				for w := range first {
					first[w] = -2
				}
				take := func(w int) bool {
					it := h.take(w, &ks[w])
					if first[w] == -2 {
						first[w] = it
					}
					if it < 0 {
						return false
					}
					seen[it]++
					return true
				}
				switch order {
				case 0:
					for w := range nt {
						for take(w) {
						}
					}
				case 1:
					for more := true; more; {
						more = false
						for w := range nt {
							more = take(w) || more
						}
					}
				case 2:
					for take(nt - 1) {
					}
					for w := range nt - 1 {
						take(w)
					}
				}
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("nt=%d n=%d order %d: item %d handed out %d times", nt, n, order, i, c)
					}
				}
				if order == 1 && n >= int64(nt) { // no part empty: none is robbed first
					for w := range nt {
						if start := int64(w) * n / int64(nt); start < (int64(w)+1)*n/int64(nt) && first[w] != start {
							t.Errorf("nt=%d n=%d: worker %d started at %d, want its part's first item %d", nt, n, w, first[w], start)
						}
					}
				}
			}
		}
	}
}

// TestQuadOutLines: each worker's four-row kernel outputs lie on cache
// lines of their own (a shared line made MUL_MAT_ID decode 1.7x slower
// in some processes: the workers wrote it on every kernel call).
func TestQuadOutLines(t *testing.T) {
	b, err := NewWithOptions(Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q := b.scratch.quad
	if len(q) != 4 {
		t.Fatalf("%d quad outputs for 4 threads", len(q))
	}
	const line = 64
	for w := 1; w < len(q); w++ {
		prev := uintptr(unsafe.Pointer(&q[w-1].v[3])) / line
		cur := uintptr(unsafe.Pointer(&q[w].v[0])) / line
		if cur <= prev+1 {
			t.Errorf("workers %d and %d write lines %d and %d: not a line apart", w-1, w, prev, cur)
		}
	}
}
