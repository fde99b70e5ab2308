package harness

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

// A backend that cannot build its kernels fails the case with a reason
// saying so, not as a wrong computation; other compute errors stay
// "compute".
func TestKernelBuildFailureReason(t *testing.T) {
	base := cputest.New(t, 1)
	var c Case
	for _, x := range Cases() {
		if x.Op == ops.OpAdd && matchCase(x) {
			c = x
			break
		}
	}
	if c.Op != ops.OpAdd {
		t.Fatal("no ADD case")
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("cuda: building add.cu: %w: %w", ops.ErrKernelBuild, errors.New("simt: compile failed")), KernelBuildReason},
		{errors.New("cuda: launch failed"), "compute"},
	} {
		be := faulty{Backend: base, name: "broken", compute: func(*cpu.Backend, *ops.Tensor) error { return tc.err }}
		r := Run(be, c)
		if r.Status != StatusFail || r.Reason != tc.want || r.Err != tc.err.Error() {
			t.Errorf("compute error %q: %v %q (error %q), want FAIL %q with the error", tc.err, r.Status, r.Reason, r.Err, tc.want)
		}
	}
}
