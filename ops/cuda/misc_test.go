package cuda

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/simt"
)

// TestMiscInjectedBugs breaks the kernels of ROPE, SSM_CONV, SSM_SCAN,
// ARGSORT, SUM_ROWS, CPY and CONT the way a kernel author might and checks
// that the op's validation cases fail for that reason: a missing barrier
// or a single buffer where two alternate (the emulator reports the
// shared-memory race), and an off-by-one bound (the emulator or the
// harness's guard bytes report the out-of-bounds access).
func TestMiscInjectedBugs(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new string
		op                   ops.Op
		fault                simt.FaultKind
	}{
		{"rope: no barrier after the angles", "rope.cu",
			"cs[half + i] = (float)(s * p.mscale);\n\t}\n\t__syncthreads();",
			"cs[half + i] = (float)(s * p.mscale);\n\t}",
			ops.OpRope, simt.Race},
		{"ssm_scan: one B/C buffer", "ssm_scan.cu",
			"float* buf = bc + (tok & 1) * 2 * ds;", "float* buf = bc;",
			ops.OpSSMScan, simt.Race},
		{"ssm_conv: a token too many", "ssm_conv.cu",
			"for (i64 t = t0; t < t1; t++) {", "for (i64 t = t0; t <= t1; t++) {",
			ops.OpSSMConv, simt.OutOfBounds},
		{"argsort: no barrier between steps", "argsort.cu",
			"\t\t\t}\n\t\t\t__syncthreads();\n\t\t}\n\t}\n}", "\t\t\t}\n\t\t}\n\t}\n}",
			ops.OpArgsort, simt.Race},
		{"sum_rows: rows past the end", "sum_rows.cu",
			"if (t == 0 && r < rows) *(float*)", "if (t == 0) *(float*)",
			ops.OpSumRows, simt.OutOfBounds},
		{"cpy: a K super-block one byte long", "cpy.cu",
			"for (int k = 16 * j; k < 16 * j + 16; k++) {", "for (int k = 16 * j; k < 16 * j + 17; k++) {",
			ops.OpCpy, simt.OutOfBounds},
		{"cont: one word too many", "cpy.cu",
			"for (i64 u = kb_first(); u < n; u += kb_stride()) {", "for (i64 u = kb_first(); u <= n; u += kb_stride()) {",
			ops.OpCont, simt.OutOfBounds},
		{"cont: no barrier in a transpose's tile", "cpy.cu",
			"if (i0 < ta.ne[0] && i1 < ta.ne[1]) tile[r][threadIdx.x] = *(const U*)(a + kb_offset(ta, i0, i1, i2, i3));\n\t}\n\t__syncthreads();",
			"if (i0 < ta.ne[0] && i1 < ta.ne[1]) tile[r][threadIdx.x] = *(const U*)(a + kb_offset(ta, i0, i1, i2, i3));\n\t}",
			ops.OpCont, simt.Race},
		{"cpy: no barrier before the fits", "cpy.cu",
			"if (b0 + e / 256 < nblocks) xs[e] = kb_src_value(a, ta, st, b0 * 256 + e, packed);\n\t}\n\t__syncthreads();",
			"if (b0 + e / 256 < nblocks) xs[e] = kb_src_value(a, ta, st, b0 * 256 + e, packed);\n\t}",
			ops.OpCpy, simt.Race},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := emulated(t)
			comp := b.comp.(emuCompiler)
			if comp.mode != simt.Checked {
				t.Skip("the emulator's memory checks are off ($KERNBENCH_SIMT_MODE=fast)")
			}
			applied := false
			comp.patch = func(name string, src []byte) []byte {
				if name != tc.file {
					return src
				}
				if !bytes.Contains(src, []byte(tc.old)) {
					t.Fatalf("%s no longer contains the code the test breaks:\n%s", tc.file, tc.old)
				}
				applied = true
				return bytes.Replace(src, []byte(tc.old), []byte(tc.new), 1)
			}
			b.comp = comp
			failed := 0
			want := map[simt.FaultKind]string{simt.Race: "shared-memory race", simt.OutOfBounds: "out-of-bounds"}[tc.fault]
			for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{tc.op}}) {
				r := harness.Run(b, c)
				if r.Passed() {
					continue
				}
				failed++
				if why := r.Summary() + " " + r.Err; !strings.Contains(why, want) {
					t.Errorf("%s fails, but not for the injected bug: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
			}
			t.Logf("%d cases fail", failed)
			if !applied || failed == 0 {
				t.Errorf("the injected bug (applied %v) failed no case", applied)
			}
		})
	}
}
