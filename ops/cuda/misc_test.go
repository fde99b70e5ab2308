package cuda

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/simt"
)

// TestMiscInjectedBugs breaks the kernels of ROPE, SSM_CONV, SSM_SCAN,
// ARGSORT, SUM_ROWS, CPY and CONT the way a kernel author might and checks
// that the op's validation cases fail for that reason: a missing barrier
// or a single buffer where two alternate (the emulator reports the
// shared-memory race), and an off-by-one bound (the emulator's bounds
// check reports the out-of-bounds access: cuda-emu's tensors have no
// guard bytes, so these fail with the check off).
func TestMiscInjectedBugs(t *testing.T) {
	checkInjectedBugs(t, []injectedBug{
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
	})
}
