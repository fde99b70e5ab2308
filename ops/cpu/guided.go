package cpu

import "sync/atomic"

// guidedRuns hands out n work items to nt threads in runs of consecutive
// items that shrink as the items run out (guided self-scheduling): each
// take gets a 2*nt-th of what is left, at least one item. The first runs
// are long (a job can join a run's items into few kernel calls), the last
// ones an item each, so the threads finish within about an item of each
// other whichever started late or ran slower. The pool's regions hand
// out items this way from runGuided (the x8 matrix-vector path,
// MUL_MAT_ID); run's fixed chunks (a 4*nt-th of the items each) can
// instead leave one thread a whole chunk to stream alone while the
// others wait: for the 32000-row output matrix, an eighth of its 20 MB
// with two threads. Which thread takes an item never changes what is
// computed.
type guidedRuns struct {
	taken atomic.Int64
	n, nt int64
}

// reset starts handing out n items to nt threads.
func (g *guidedRuns) reset(n int64, nt int) {
	g.n, g.nt = n, int64(max(nt, 1))
	g.taken.Store(0)
}

// take returns the next run [lo, hi), or ok false when no item is left.
func (g *guidedRuns) take() (lo, hi int, ok bool) {
	for {
		l := g.taken.Load()
		if l >= g.n {
			return 0, 0, false
		}
		h := l + max(1, (g.n-l)/(2*g.nt))
		if g.taken.CompareAndSwap(l, h) {
			return int(l), int(h), true
		}
	}
}
