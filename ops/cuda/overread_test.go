package cuda

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/simt"
)

// faultSaid reports whether why, a failing case's summary and error, is
// the emulator's report of a fault of that kind. For an out-of-bounds
// access that is the emulator's own bounds check ("out-of-bounds read of
// 4 bytes in kernel kb_unary_f32 by thread ..."), never the harness's
// guard bytes ("out-of-bounds write: N of 64 guard bytes past ..."): a
// test of the emulator's check must fail when the check is off.
func faultSaid(why string, kind simt.FaultKind) bool {
	switch kind {
	case simt.Race:
		return strings.Contains(why, "shared-memory race")
	case simt.OutOfBounds:
		return strings.Contains(why, "out-of-bounds ") && strings.Contains(why, " in kernel kb_")
	}
	return false
}

// TestOverreadIsAFault plants a read of 4 bytes past the end of a unary
// op's input whose value is never used, so that the results stay right,
// and checks that the cases where it lands past the input's end fail with
// the emulator's out-of-bounds read: the harness gives cuda-emu's tensors
// no guard bytes (Backend.ChecksBounds), so the read reaches the buffer's
// red zone. With guard bytes inside the buffer, as before, every case
// passed.
func TestOverreadIsAFault(t *testing.T) {
	const file = "elementwise.cu"
	old := "float x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));\n\t\tfloat y = op == 0"
	planted := "float x = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3));\n" +
		"\t\tif (i == n - 1) { volatile float past = *(const float*)(a + kb_offset(ta, i0, i1, i2, i3) + 4); (void)past; }\n" +
		"\t\tfloat y = op == 0"
	// Launched at once, and as one-node graphs: a fault in a graph
	// names its node too. The read is an illegal address, which loses
	// the context: a session reopens the backend after each such case.
	for _, bk := range []struct {
		name string
		wrap func(*Backend) ops.Backend
	}{{"launches", nil}, {"graphs", func(b *Backend) ops.Backend { return graphOnly{b, t} }}} {
		s, patched := patchedSession(t, file, old, planted, func(b *Backend) ops.Backend {
			if !b.ChecksBounds() {
				t.Fatal("cuda-emu in Checked mode does not say it checks bounds")
			}
			if bk.wrap != nil {
				return bk.wrap(b)
			}
			return b
		})
		failed := 0
		for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpScale}}) {
			r := runSession(t, s, c)
			if r.Passed() {
				continue
			}
			failed++
			if why := r.Summary() + " " + r.Err; !faultSaid(why, simt.OutOfBounds) || !strings.Contains(why, "read of 4 bytes") || !strings.Contains(why, "(SCALE)") {
				t.Errorf("%s: %s fails, but not for the planted read in its node: %s (%s)", bk.name, c.ID(), r.Summary(), r.Err)
			}
		}
		if s.Reopened != failed {
			t.Errorf("%s: %d cases lost the context, %d backends reopened", bk.name, failed, s.Reopened)
		}
		s.Close() // the context goes with its last backend
		t.Logf("%s: %d cases fail", bk.name, failed)
		if !*patched || failed == 0 {
			t.Errorf("%s: the planted read past the input's end (applied %v) failed no case", bk.name, *patched)
		}
	}
}
