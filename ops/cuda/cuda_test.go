package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/simt"
)

// emulated opens cuda-emu for t (gputest.Emulated).
func emulated(t *testing.T) *Backend {
	t.Helper()
	return gputest.Emulated(t, OpenEmulated)
}

func TestRegistered(t *testing.T) {
	e, err := registry.Lookup("cuda")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range e.Targets() {
		names = append(names, tg.Name())
		if tg.Variant == emuVariant && simt.Available() == nil && tg.Err() != nil {
			t.Errorf("cuda-emu unavailable although the emulator is: %v", tg.Err())
		}
	}
	if names[len(names)-1] != "cuda-emu" || !strings.HasPrefix(names[0], "cuda-0") {
		t.Errorf("targets %v, want cuda-0 ... cuda-emu", names)
	}
	// Without a GPU, "cuda" says why and does not fall back to the
	// emulator.
	if _, _, err := gpus(); err != nil {
		_, err2 := registry.Open("cuda", registry.Config{})
		if err2 == nil || !strings.Contains(err2.Error(), "cuda-emu runs the kernels on the SIMT emulator") {
			t.Errorf("opening cuda without a GPU: %v", err2)
		}
		t.Logf("no GPU: %v", err)
	}
}

func TestEmulatedBackend(t *testing.T) {
	b := emulated(t)
	if !b.Emulated() || b.Name() != "cuda-emu" || !strings.Contains(b.Describe(), "SIMT emulator") {
		t.Errorf("backend %s: emulated %v, %s", b.Name(), b.Emulated(), b.Describe())
	}
	cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpAdd, ops.OpRMSNorm}})
	for _, c := range cases {
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
		}
	}
	// The same work in one submission, timed by events.
	var nodes []*ops.Tensor
	buf, err := b.Alloc(4 * 64)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := ops.NewTensor("x", 0, 64)
	x.Buffer = buf
	y, _ := ops.Scale(x, 2, 1)
	ybuf, _ := b.Alloc(4 * 64)
	y.Buffer = ybuf
	z, _ := ops.Silu(y)
	zbuf, _ := b.Alloc(4 * 64)
	z.Buffer = zbuf
	nodes = append(nodes, y, z)
	// Untimed (as the backend opens): a graph, no events.
	before := b.api.counts()
	if err := b.ComputeGraph(nodes); err != nil {
		t.Fatal(err)
	}
	if c := b.api.counts().sub(before); c[callEventRecord] != 0 || c[callGraphLaunch] != 1 || c[callLaunch] != 0 {
		t.Errorf("untimed ComputeGraph: want one graph launch and no event: %v", c)
	}
	if times, err := b.NodeTimes(); err != nil || times != nil {
		t.Errorf("NodeTimes of an untimed ComputeGraph: %v, %v; want none", times, err)
	}
	// Timed: an event pair around each node, launched one by one.
	b.SetNodeTiming(true)
	defer b.SetNodeTiming(false)
	before = b.api.counts()
	if err := b.ComputeGraph(nodes); err != nil {
		t.Fatal(err)
	}
	if c := b.api.counts().sub(before); c[callEventRecord] != 4 || c[callGraphLaunch] != 0 || c[callLaunch] != 2 {
		t.Errorf("timed ComputeGraph of 2 nodes: want 4 event records and 2 launches: %v", c)
	}
	times, err := b.NodeTimes()
	if err != nil || len(times) != 2 {
		t.Fatalf("NodeTimes: %v, %v", times, err)
	}
	out := make([]byte, 4*64)
	if _, err := zbuf.ReadAt(out, 0); err != nil {
		t.Fatal(err)
	}
	// silu(2*0 + 1) = 1/(1+e^-1) = 0.7310586
	if v := f32of(out[:4]); v < 0.7310585 || v > 0.7310587 {
		t.Errorf("silu(scale(0)) = %v", v)
	}
}

func f32of(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// TestInjectedKernelBugs breaks a kernel's source the way a kernel author
// might and checks that validation fails: a missing barrier in a block
// reduction (the emulator reports the race) and an off-by-one bound (its
// bounds check reports the out-of-bounds access; the test fails with the
// check off).
func TestInjectedKernelBugs(t *testing.T) {
	checkInjectedBugs(t, []injectedBug{
		{"missing barrier", "reduce.cuh", "if (lane == 0) scratch[warp] = v;\n\t__syncthreads();", "if (lane == 0) scratch[warp] = v;", ops.OpRMSNorm, simt.Race},
		{"off-by-one bound", "elementwise.cu", "for (i64 i = kb_first(); i < n; i += kb_stride()) {\n\t\ti64 i0, i1, i2, i3;\n\t\tkb_unravel(td, i, i0, i1, i2, i3);\n\t\tfloat x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));\n\t\tfloat y = op", "for (i64 i = kb_first(); i <= n; i += kb_stride()) {\n\t\ti64 i0, i1, i2, i3;\n\t\tkb_unravel(td, i, i0, i1, i2, i3);\n\t\tfloat x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));\n\t\tfloat y = op", ops.OpScale, simt.OutOfBounds},
	})
}

// An injectedBug is a change to a kernel source that a kernel author
// might make by mistake, and the fault the emulator must name for it.
type injectedBug struct {
	name, file, old, new string
	op                   ops.Op
	fault                simt.FaultKind
}

// checkInjectedBugs builds cuda-emu with each bug patched in and checks
// that validation of the bug's op fails on at least one case, each
// failure naming the bug's fault (the emulator's own report: cuda-emu's
// tensors have no guard bytes), and that the patch applied.
func checkInjectedBugs(t *testing.T, bugs []injectedBug) {
	for _, tc := range bugs {
		t.Run(tc.name, func(t *testing.T) {
			s, patched := patchedSession(t, tc.file, tc.old, tc.new, nil)
			failed := 0
			for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{tc.op}}) {
				r := runSession(t, s, c)
				if r.Passed() {
					continue
				}
				failed++
				if why := r.Summary() + " " + r.Err; !faultSaid(why, tc.fault) {
					t.Errorf("%s fails, but not for the injected bug: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
			}
			t.Logf("%d cases fail", failed)
			if !*patched || failed == 0 {
				t.Errorf("the injected bug (applied %v) failed no case", *patched)
			}
		})
	}
}

// patchKernel opens cuda-emu with the first old in kernel file replaced by
// repl when the kernels are built, as a kernel author's mistake would be;
// t is skipped where the emulator's memory checks are off. *patched says
// whether a build found old (a source that no longer has it fails t).
func patchKernel(t *testing.T, file, old, repl string) (b *Backend, patched *bool) {
	t.Helper()
	patched = new(bool)
	return patchKernelInto(t, file, old, repl, patched), patched
}

// patchKernelInto is patchKernel setting *patched.
func patchKernelInto(t *testing.T, file, old, repl string, patched *bool) *Backend {
	t.Helper()
	b := emulated(t)
	comp := b.comp.(emuCompiler)
	if comp.mode != simt.Checked {
		t.Skip("the emulator's memory checks are off ($KERNBENCH_SIMT_MODE=fast)")
	}
	comp.patch = func(name string, src []byte) []byte {
		if name != file {
			return src
		}
		if !bytes.Contains(src, []byte(old)) {
			t.Fatalf("%s no longer contains the code the test changes:\n%s", file, old)
		}
		*patched = true
		return bytes.Replace(src, []byte(old), []byte(repl), 1)
	}
	b.comp = comp
	return b
}

// patchedSession is patchKernel as a harness.Session: a case whose fault
// loses the context (an illegal or misaligned address is sticky on the
// emulated driver, as on a GPU) is followed by a new patched backend, so
// that each later case still runs the bug rather than failing for the
// lost context. wrap, when not nil, wraps each backend.
func patchedSession(t *testing.T, file, old, repl string, wrap func(*Backend) ops.Backend) (s *harness.Session, patched *bool) {
	t.Helper()
	patched = new(bool)
	s, err := harness.OpenSession("cuda-emu", func() (ops.Backend, error) {
		b := patchKernelInto(t, file, old, repl, patched)
		if wrap != nil {
			return wrap(b), nil
		}
		return b, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, patched
}

// runSession runs c in s, failing t if the backend could not be reopened.
func runSession(t *testing.T, s *harness.Session, c harness.Case) harness.Result {
	t.Helper()
	r, err := s.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
