package cuda

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
)

// TestDryRun opens cuda-emu with $KERNBENCH_CUDA_EMU_EXEC=off: the
// backend says it runs dry, its launches and graph launches are made (and
// counted) but compute nothing, so a SCALE's output stays as allocated
// (zero), and the harness refuses to validate it. A value other than on
// or off is an error.
func TestDryRun(t *testing.T) {
	t.Setenv(emuExecEnv, "sometimes")
	if _, err := OpenEmulated(); err == nil || !strings.Contains(err.Error(), emuExecEnv) {
		t.Errorf("%s=sometimes: %v, want an error naming the variable", emuExecEnv, err)
	}
	t.Setenv(emuExecEnv, "off")
	b := emulated(t)
	t.Cleanup(func() { b.api.setExec(1) })
	if !b.DryRun() || !ops.IsDryRun(b) || !strings.Contains(b.Describe(), "DRY RUN") {
		t.Fatalf("cuda-emu with %s=off: dry %v, %s", emuExecEnv, b.DryRun(), b.Describe())
	}
	const n = 100
	x := mustF32(t, b, "x", n)
	ones := make([]byte, 4*n)
	for i := range n {
		ones[4*i+2], ones[4*i+3] = 0x80, 0x3f // 1.0
	}
	if _, err := x.Buffer.WriteAt(ones, x.Offset); err != nil {
		t.Fatal(err)
	}
	y, err := ops.Scale(x, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, y, 0); err != nil {
		t.Fatal(err)
	}
	for _, graphs := range []bool{false, true} {
		b.SetGraphs(graphs)
		before := b.api.counts()
		if err := b.ComputeGraph([]*ops.Tensor{y}); err != nil {
			t.Fatal(err)
		}
		if err := b.Synchronize(); err != nil {
			t.Fatal(err)
		}
		c := b.api.counts().sub(before)
		if c[callLaunch]+c[callCapturedLaunch] != 1 || graphs != (c[callGraphLaunch] == 1) {
			t.Errorf("graphs=%v: want the launch made as when running: %v", graphs, c)
		}
		out := make([]byte, 4*n)
		if _, err := y.Buffer.ReadAt(out, y.Offset); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if v := f32of(out[4*i:]); v != 0 {
				t.Fatalf("graphs=%v: y[%d] = %v: a kernel ran in a dry run", graphs, i, v)
			}
		}
	}
	c := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpScale}})[0]
	if r := harness.Run(b, c); r.Passed() || r.Err != harness.DryRunReason {
		t.Errorf("a case run dry: %s (%s), want a failure for the dry run", r.Summary(), r.Err)
	}
}
