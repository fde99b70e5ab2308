package cpu

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/internal/machineid"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/tuning"
	"github.com/kernbench/kernbench/quant"
)

// tunedMatVec computes a q4_0 matrix-vector product on b, checks it
// against the reference, and returns the rows per task it ran with.
func tunedMatVec(t *testing.T, b *Backend) int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	a := mxLeaf(t, b, rng, "a", quant.Q4_0, 256, 512)
	x := mxLeaf(t, b, rng, "x", quant.F32, 256, 1)
	node, err := ops.MulMat(a, x)
	if err != nil {
		t.Fatal(err)
	}
	mxCheck(t, b, node, mxMatTol(quant.Q4_0))
	return b.mm.tm
}

// TestTunedFile checks that the backend loads the rows per task of the
// matrix-vector path from the tuned.json $KERNBENCH_TUNED names and runs
// with it, that "off" restores the default, that Options.Tuned overrides
// the environment, and that bad values are errors.
func TestTunedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), tuning.FileName)
	f := &tuning.File{Machine: machineid.Here(), Date: time.Now().UTC(),
		Params: []tuning.Result{{Name: GemvRows.Name, Value: 4, Default: GemvRows.Default}}}
	if err := tuning.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	open := func(o Options) *Backend {
		t.Helper()
		o.Threads = 2
		b, err := NewWithOptions(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}

	t.Setenv(tuning.Env, path)
	b := open(Options{})
	v, src := b.Tuned()
	if v[GemvRows.Name] != 4 || src != path {
		t.Errorf("KERNBENCH_TUNED=%s: values %v from %q", path, v, src)
	}
	if tm := tunedMatVec(t, b); tm != 4 {
		t.Errorf("tuned: %d rows per task, want 4", tm)
	}

	t.Setenv(tuning.Env, "off")
	b = open(Options{})
	if v, src := b.Tuned(); v[GemvRows.Name] != GemvRows.Default || src != "" {
		t.Errorf("off: values %v from %q", v, src)
	}
	if tm := tunedMatVec(t, b); tm != int64(GemvRows.Default) {
		t.Errorf("off: %d rows per task, want the default %d", tm, GemvRows.Default)
	}

	t.Setenv(tuning.Env, path)
	b = open(Options{Tuned: tuning.Values{GemvRows.Name: 32}})
	if tm := tunedMatVec(t, b); tm != 32 {
		t.Errorf("Options.Tuned 32 over the file's 4: %d rows per task", tm)
	}

	for _, o := range []Options{{Tuned: tuning.Values{GemvRows.Name: 5}}, {Tuned: tuning.Values{"cpu.nope": 1}}} {
		if _, err := NewWithOptions(o); err == nil || !strings.Contains(err.Error(), "tuned parameters") {
			t.Errorf("Options.Tuned %v: %v", o.Tuned, err)
		}
	}
	t.Setenv(tuning.Env, filepath.Join(t.TempDir(), "missing.json"))
	if _, err := New(1); err == nil || !strings.Contains(err.Error(), tuning.Env) {
		t.Errorf("a missing $KERNBENCH_TUNED file: %v", err)
	}
}

// TestTileSizesCap checks that the cap bounds the rows and that the
// shrinking still gives every thread several tiles.
func TestTileSizesCap(t *testing.T) {
	for _, c := range []struct {
		m, n, batches int64
		threads       int
		capRows       int64
	}{{4096, 1, 1, 2, 128}, {4096, 1, 1, 2, 4}, {64, 1, 1, 8, 64}, {7, 2, 1, 1, 16}} {
		tm, tn := tileSizesCap(c.m, c.n, c.batches, c.threads, c.capRows)
		tiles := c.batches * ceilDiv(c.m, tm) * ceilDiv(c.n, tn)
		if tm < 1 || tm > c.capRows || tn < 1 || (tiles < 4*int64(c.threads) && (tm > 1 || tn > 1)) {
			t.Errorf("%+v: %d x %d tiles (%d)", c, tm, tn, tiles)
		}
	}
}

// TestTunedSgemmRows checks that the packed float path takes its row
// blocks from SgemmRows: an f16 product of 1200 weight rows (200 groups)
// and 32 activation rows runs with blocks of the tuned height (evened
// out: 96 gives 13 blocks, made 14 for two threads, of 90 rows; 768 gives
// 2, made 8 for four items a thread, of 150), checked against the
// reference each time.
func TestTunedSgemmRows(t *testing.T) {
	for _, c := range []struct{ rows, want int }{{96, 90}, {768, 150}, {SgemmRows.Default, 150}} {
		b, err := NewWithOptions(Options{Threads: 2, Tuned: tuning.Values{SgemmRows.Name: c.rows}})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 8))
		a := mxLeaf(t, b, rng, "a", quant.F16, 256, 1200)
		x := mxLeaf(t, b, rng, "x", quant.F32, 256, 32)
		node, err := ops.MulMat(a, x)
		if err != nil {
			t.Fatal(err)
		}
		mxCheck(t, b, node, mxMatTol(quant.F16))
		if b.sg.grid.mc != int64(c.want) {
			t.Errorf("%s = %d: blocks of %d rows, want %d", SgemmRows.Name, c.rows, b.sg.grid.mc, c.want)
		}
		b.Close()
	}
}

// TestTunedX8Prefetch checks that the repacked matrix-vector path passes
// X8Prefetch to its kernels, for MUL_MAT and MUL_MAT_ID, and that every
// candidate gives the reference's result.
func TestTunedX8Prefetch(t *testing.T) {
	for _, pfd := range X8Prefetch.Candidates {
		b, err := NewWithOptions(Options{Threads: 2, Tuned: tuning.Values{X8Prefetch.Name: pfd}})
		if err != nil {
			t.Fatal(err)
		}
		if b.kern.x8[quant.Q4_0] == nil {
			b.Close()
			t.Skipf("tier %s has no x8 kernels", b.Tier().Name)
		}
		rng := rand.New(rand.NewPCG(9, uint64(pfd)))
		a := weightsLeaf(t, b, rng, quant.Q4_0, 512, 64)
		x := mxLeaf(t, b, rng, "x", quant.F32, 512, 1)
		node, err := ops.MulMat(a, x)
		if err != nil {
			t.Fatal(err)
		}
		mxCheck(t, b, node, mxMatTol(quant.Q4_0))
		if b.mm.x8 == nil || b.mm.pfd != pfd {
			t.Errorf("MUL_MAT %s = %d: x8 path %v, prefetch %d", X8Prefetch.Name, pfd, b.mm.x8 != nil, b.mm.pfd)
		}

		w := weightsLeaf(t, b, rng, quant.Q4_0, 256, 64, 4)
		xs := mxLeaf(t, b, rng, "xs", quant.F32, 256, 1, 1)
		ids := mxIDs(t, b, "ids", []int32{3, 1}, 2, 1)
		id, err := ops.MulMatID(w, xs, ids)
		if err != nil {
			t.Fatal(err)
		}
		mxCheck(t, b, id, mxMatTol(quant.Q4_0))
		if b.mmid.x8 == nil || b.mmid.pfd != pfd {
			t.Errorf("MUL_MAT_ID %s = %d: x8 path %v, prefetch %d", X8Prefetch.Name, pfd, b.mmid.x8 != nil, b.mmid.pfd)
		}
		b.Close()
	}
}

// TestKernelSwaps checks every kernel swap of the tiers this CPU runs:
// its parameter is one of Tunables, its value a candidate other than the
// default (so that a backend opened with the defaults runs its tier's
// table as written: tuned returns the table itself), and applying it
// changes a copy, never the tier's table. A made-up set's swaps apply in
// order, each where its parameter has its value.
func TestKernelSwaps(t *testing.T) {
	known := map[string]tuning.Param{}
	for _, p := range Tunables() {
		known[p.Name] = p
	}
	for _, ks := range kernelSets() {
		for _, s := range ks.swaps {
			p, ok := known[s.param.Name]
			if !ok {
				t.Errorf("%s: swap of %s, not a tunable parameter", ks.name, s.param.Name)
				continue
			}
			if s.value == p.Default || !slices.Contains(p.Candidates, s.value) {
				t.Errorf("%s: swap of %s at %d: want a candidate other than the default %d (%v)", ks.name, p.Name, s.value, p.Default, p.Candidates)
			}
			before := fmt.Sprint(ks.gemv, ks.gemvSide, ks.gemm)
			swapped := ks.tuned(tuning.Values{p.Name: s.value})
			if swapped == ks {
				t.Errorf("%s: %s = %d returned the tier's table", ks.name, p.Name, s.value)
			}
			if fmt.Sprint(ks.gemv, ks.gemvSide, ks.gemm) != before {
				t.Errorf("%s: %s = %d changed the tier's table", ks.name, p.Name, s.value)
			}
		}
		if got := ks.tuned(tuning.Values{}); got != ks {
			t.Errorf("%s: the defaults applied a swap", ks.name)
		}
	}

	a := tuning.Param{Name: "test.a", Default: 0, Candidates: []int{0, 1}}
	b := tuning.Param{Name: "test.b", Default: 0, Candidates: []int{0, 1, 2}}
	mark := func(tag string) func(*kernelSet) {
		return func(ks *kernelSet) { ks.name += tag }
	}
	base := &kernelSet{name: "x", swaps: []kernelSwap{{a, 1, mark("+a")}, {b, 2, mark("+b")}, {b, 1, mark("+b1")}}}
	for _, c := range []struct {
		v    tuning.Values
		want string
	}{
		{tuning.Values{}, "x"},
		{tuning.Values{"test.a": 1}, "x+a"},
		{tuning.Values{"test.b": 2}, "x+b"},
		{tuning.Values{"test.a": 1, "test.b": 1}, "x+a+b1"},
		{tuning.Values{"test.a": 1, "test.b": 2}, "x+a+b"},
	} {
		if got := base.tuned(c.v).name; got != c.want {
			t.Errorf("tuned(%v): %q, want %q", c.v, got, c.want)
		}
	}
	if base.name != "x" {
		t.Errorf("tuned changed the set it was called on: %q", base.name)
	}
}
