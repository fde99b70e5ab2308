package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestGuidedRuns checks guidedRuns: taken one after another, the runs
// cover every item once, in order, the first a 2*nt-th of the items and
// the last one item; taken by concurrent threads, every item goes out
// exactly once.
func TestGuidedRuns(t *testing.T) {
	for _, nt := range []int{1, 2, 3} {
		for _, n := range []int{1, 2, 7, 40, 96, 500} {
			var g guidedRuns
			g.reset(int64(n), nt)
			next := 0
			var runs []int
			for lo, hi, ok := g.take(); ok; lo, hi, ok = g.take() {
				if lo != next || hi <= lo || hi > n {
					t.Fatalf("nt=%d n=%d: run [%d, %d) after %d", nt, n, lo, hi, next)
				}
				next = hi
				runs = append(runs, hi-lo)
			}
			if next != n {
				t.Fatalf("nt=%d n=%d: runs end at %d", nt, n, next)
			}
			if want := max(1, n/(2*nt)); runs[0] != want || runs[len(runs)-1] != 1 {
				t.Errorf("nt=%d n=%d: runs %v, want the first %d and the last 1", nt, n, runs, want)
			}

			g.reset(int64(n), nt)
			seen := make([]int, n)
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range nt {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for lo, hi, ok := g.take(); ok; lo, hi, ok = g.take() {
						mu.Lock()
						for i := lo; i < hi; i++ {
							seen[i]++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("nt=%d n=%d: item %d taken %d times", nt, n, i, c)
				}
			}
		}
	}
}

// TestX8GuidedRuns checks that the x8 path of MUL_MAT, whose threads take
// guided runs of items and compute a run's items of one batch in one
// kernel call per column, gives the plain layout's bits (Options.NoRepack,
// one thread) with one to three threads: row counts with and without a
// tail, items of one group and of several (runs that join), two batches.
func TestX8GuidedRuns(t *testing.T) {
	forEachTier(t, func(t *testing.T, ks *kernelSet) {
		for _, wt := range x8Types {
			if ks.x8[wt] == nil {
				continue
			}
			for _, m := range []int64{45, 203, 1000} {
				for _, n := range []int64{1, 3} {
					name := fmt.Sprintf("%s/%v/m=%d/n=%d", ks.name, wt, m, n)
					var want []float32
					for _, threads := range []int{0, 1, 2, 3} { // 0: plain, one thread
						b, err := NewWithOptions(Options{Threads: max(threads, 1), Tier: ks.name, NoRepack: threads == 0})
						if err != nil {
							t.Fatal(err)
						}
						rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
						k := 2 * x8Block(wt)
						a := weightsLeaf(t, b, rng, wt, k, m, 2)
						x := mxLeaf(t, b, rng, "x", quant.F32, k, n, 2)
						node := mustNode(t)(ops.MulMat(a, x))
						mxAlloc(t, b, node, 0)
						for range 2 { // the second from the copy made by the first
							if err := b.Compute(node); err != nil {
								t.Fatal(err)
							}
						}
						if threads > 0 && x8Count(b) != 1 {
							t.Fatalf("%s threads=%d: %d copies, want 1", name, threads, x8Count(b))
						}
						raw, _ := node.HostBytes()
						got := slices.Clone(f32s(raw, 0, node.NumElements()))
						b.Close()
						if want == nil {
							want = got
							continue
						}
						for i := range want {
							if !sameFloat(got[i], want[i]) {
								t.Fatalf("%s threads=%d: output %d = %g, plain %g", name, threads, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}
