package metal

import (
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestPlanFlashAttnVec checks the decode kernel's plan: every query row
// of every K/V head in some threadgroup, splits of whole 32-key steps
// covering the keys, and a long KV split.
func TestPlanFlashAttnVec(t *testing.T) {
	for _, c := range []struct {
		heads, kvHeads, nq, nkv int64
		wantSplit               bool
	}{
		{32, 8, 1, 4096, true},
		{4, 1, 1, 256, true},
		{8, 4, 3, 33, false},
		{2, 1, 2, 9, false},
		{64, 1, 1, 100000, true},
		{2, 1, 3, 0, false},
	} {
		q := &ops.Tensor{Type: quant.F32, Ne: [4]int64{128, c.nq, c.heads, 1}}
		k := &ops.Tensor{Type: quant.F16, Ne: [4]int64{128, c.nkv, c.kvHeads, 1}}
		p := planFlashAttnVec(q, k)
		rows := int(c.heads / c.kvHeads * c.nq)
		if p.nsg < 1 || p.nsg > faVecRows || p.nsg*p.chunks < rows || (p.chunks-1)*p.nsg >= max(rows, 1) {
			t.Errorf("%+v: %d rows in %d threadgroups of %d", c, rows, p.chunks, p.nsg)
		}
		if p.split%32 != 0 || p.split < faMinSplit || p.nsplit*p.split < int(c.nkv) || (p.nsplit-1)*p.split >= max(int(c.nkv), 1) {
			t.Errorf("%+v: %d keys in %d splits of %d", c, c.nkv, p.nsplit, p.split)
		}
		if got := p.nsplit > 1; got != c.wantSplit {
			t.Errorf("%+v: split %v (%d splits), want %v", c, got, p.nsplit, c.wantSplit)
		}
	}
}

// TestFaPreSimdgroups checks the prefill kernel's threadgroups against
// the emulator's threadgroup memory: a simdgroup per 8 rows (a GQA
// group's heads times its queries) up to 8, as many as fit, none for f32 K/V of head size 256 (kb_fa_mm takes
// those).
func TestFaPreSimdgroups(t *testing.T) {
	for _, c := range []struct {
		nq     int64
		d      int
		kv     quant.Type
		want   int
		reason string
	}{
		{4, 128, quant.F16, 1, "4 rows: one simdgroup"},
		{17, 64, quant.F16, 3, "17 rows: three"},
		{4 * 4, 64, quant.F16, 2, "4 queries of a group of 4 heads: two"},
		{512, 64, quant.F16, 8, "at most eight"},
		{512, 128, quant.F16, 6, "six fit d=128"},
		{512, 256, quant.F16, 2, "two fit d=256"},
		{512, 128, quant.F32, 2, "two fit f32 d=128"},
		{512, 256, quant.F32, 0, "f32 d=256 does not fit"},
	} {
		got := faPreSimdgroups(c.nq, c.d, c.d, c.kv, c.kv, emuThreadgroupMemory)
		if got != c.want {
			t.Errorf("%s: nq=%d d=%d %v: %d simdgroups, want %d", c.reason, c.nq, c.d, c.kv, got, c.want)
		}
		if got > 0 && faPreShared(got, c.d, c.d, c.kv, c.kv) > emuThreadgroupMemory {
			t.Errorf("%s: %d bytes of threadgroup memory", c.reason, faPreShared(got, c.d, c.d, c.kv, c.kv))
		}
	}
}
