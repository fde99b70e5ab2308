package cuda

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/cudatools"
)

// sassInstr is one instruction of a cuobjdump -sass listing: its offset,
// opcode (modifiers included) and, for a branch, its target.
type sassInstr struct {
	addr, target int
	op           string
}

var (
	reSASSFunc  = regexp.MustCompile(`^\s*Function : (\S+)\s*$`)
	reSASSInstr = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(?:@!?U?P(?:T|\d+)\s+)?([A-Z][A-Z0-9_.]*)([^;]*);`)
	reSASSTo    = regexp.MustCompile(`\b0x([0-9a-f]+)\b`)
)

// sassFunctions splits a listing into each function's instructions.
func sassFunctions(text string) map[string][]sassInstr {
	out := map[string][]sassInstr{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if m := reSASSFunc.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		m := reSASSInstr.FindStringSubmatch(line)
		if m == nil || cur == "" {
			continue
		}
		addr, _ := strconv.ParseInt(m[1], 16, 64)
		in := sassInstr{addr: int(addr), target: -1, op: m[2]}
		if strings.HasPrefix(in.op, "BRA") {
			if t := reSASSTo.FindStringSubmatch(m[3]); t != nil {
				v, _ := strconv.ParseInt(t[1], 16, 64)
				in.target = int(v)
			}
		}
		out[cur] = append(out[cur], in)
	}
	return out
}

// mmaLoop returns the innermost loop (a backward branch and the
// instructions from its target to it) that holds at least min IMMA
// products, or, where the products are not in a loop, the longest run
// of instructions between two branches with the most of them.
func mmaLoop(fn []sassInstr, min int) (body []sassInstr, ok bool) {
	count := func(b []sassInstr) (n int) {
		for _, in := range b {
			if strings.HasPrefix(in.op, "IMMA") {
				n++
			}
		}
		return n
	}
	for i, in := range fn {
		if in.target < 0 || in.target >= in.addr {
			continue
		}
		var b []sassInstr
		for _, x := range fn[:i+1] {
			if x.addr >= in.target {
				b = append(b, x)
			}
		}
		if count(b) >= min && (body == nil || len(b) < len(body)) {
			body = b
		}
	}
	if body != nil {
		return body, true
	}
	start := 0
	for i, in := range fn {
		if strings.HasPrefix(in.op, "BRA") || i == len(fn)-1 {
			if b := fn[start : i+1]; count(b) >= min && count(b) > count(body) {
				body = b
			}
			start = i + 1
		}
	}
	return body, body != nil
}

// checkMmqBudget pins the integer tensor-core kernels' main loop in the
// SASS NVIDIA's compiler makes of mul_mat_q.cu for an H100 (sm_90; where
// cuobjdump is installed; TestNVRTCCompilesEveryKernel calls it with its
// cubin): the loop over a step's chunks issues at most a budget of
// instructions per IMMA m16n8k32 product (20 where the format has no
// offset, 24 with the offset's FFMA per output), loop and addressing
// included, and converts no integer to float with I2F (the products' C
// input makes their int32 results the bits of floats). Before the
// budget, kb_mmq128_q4_0's loop issued 42 per product (and the kernel as
// a whole 74, as Nsight Compute counted on an H200). The formats with a
// scale per 16 and no offset (q3_K and q6_K in kb_mmq128_*: two
// m16n8k16 products a chunk and tile, each rescaled by its half's scale)
// are pinned at 16 per m16n8k16 product (12.9 when written); q2_K in
// kb_mmq128_* (codes times their half's 4-bit scale: one m16n8k32
// product a chunk and tile, and a second one of the halves' mins, each
// rescaled by an FFMA per output) at 18 per m16n8k32 product, the mins'
// counted (15.2 when written: 486 instructions a chunk of the two-column-
// half loop; 25.6 a product, 410 a chunk, when the mins were two FFMAs
// per output on the activations' half sums).
//
// mul_mat_iq.cu's kb_mmq128_* take mmq32.cuh's path too, decoded per job
// by kb_decode<T> (IQ4_NL's and MXFP4's from the raw tile): the formats
// with one scale per 32 (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, IQ2_XXS,
// IQ3_XXS, IQ3_S, IQ1_S) at 16.4 per product when written, 21.2 for
// IQ1_S (its delta is an offset), pinned at 20 and 24 as the legacy
// formats (43.4 on mmq.cuh's general mmq, which reads every chunk's
// scales per product and converts each product's int32 with I2F, and
// which MXFP4 took until its raw blocks were copied in 4-byte pieces);
// those with one per 16 (IQ2_XS, IQ2_S, IQ1_M) at 12.9 per m16n8k16
// product when written, pinned at 16 as q6_K (30.8 on the general mmq).
func checkMmqBudget(t *testing.T, file string, cubin []byte) {
	t.Helper()
	cases := mmqBudgets[file]
	if len(cases) == 0 {
		return
	}
	if _, err := cudatools.Tool("cuobjdump"); err != nil {
		return
	}
	text, err := cudatools.DisassembleCubin(cubin)
	if err != nil {
		t.Fatal(err)
	}
	fns := sassFunctions(text)
	for _, tc := range cases {
		fn, ok := fns[tc.kernel]
		if !ok {
			t.Errorf("%s: not in the listing", tc.kernel)
			continue
		}
		// A chunk of a warp's tile, both column halves: 4 m16 by 4 n8
		// tiles (mul_mat_q.cu's 64x32 warp tiles, two m16n8k16 products
		// a tile for the k16 formats; its loop of one column half, 8 or
		// 16 products, is the tile's right edge), 2 m16 by 4 n8
		// (mmq.cuh's 32x32); with the mins' products (kb_kmin) twice
		// as many.
		min := 16
		switch {
		case tc.general:
			min = 8
		case tc.k16, tc.mins:
			min = 32
		}
		body, ok := mmaLoop(fn, min)
		if !ok {
			t.Errorf("%s: no run of instructions with %d IMMA products", tc.kernel, min)
			continue
		}
		n, conv := 0, 0
		for _, in := range body {
			if strings.HasPrefix(in.op, "IMMA") {
				n++
				if want := map[bool]string{false: "IMMA.16832", true: "IMMA.16816"}[tc.k16]; !strings.HasPrefix(in.op, want) {
					t.Errorf("%s: %s in the main loop, want %s products", tc.kernel, in.op, want)
				}
			}
			if strings.HasPrefix(in.op, "I2F") {
				conv++
			}
		}
		per := float64(len(body)) / float64(n)
		t.Logf("%s: main loop %#x-%#x, %d instructions, %d IMMA: %.1f per product", tc.kernel, body[0].addr, body[len(body)-1].addr, len(body), n, per)
		if per > tc.budget {
			t.Errorf("%s: %.1f instructions per IMMA in the main loop (%d for %d), want at most %v", tc.kernel, per, len(body), n, tc.budget)
		}
		if conv > 0 && !tc.general {
			t.Errorf("%s: %d I2F conversions in the main loop", tc.kernel, conv)
		}
	}
}

// An mmqBudget is a kernel's most instructions per IMMA product in its
// main loop (checkMmqBudget).
type mmqBudget struct {
	kernel string
	budget float64
	k16    bool // m16n8k16 products (a scale per 16), else m16n8k32
	// mins: a second m16n8k32 product per chunk and tile, of the
	// halves' mins (mmq32.cuh's kb_kmin).
	mins bool
	// general: mmq.cuh's general body, whose epilogue converts each
	// product's int32 with I2F (mul_mat_q.cu's k32 path takes none).
	general bool
}

// mmqBudgets are checkMmqBudget's kernels, by source file.
var mmqBudgets = map[string][]mmqBudget{
	"mul_mat_q.cu": {
		{kernel: "kb_mmq128_q4_0", budget: 20},
		{kernel: "kb_mmq_q4_0", budget: 20},
		{kernel: "kb_mmq128_q5_0", budget: 20},
		{kernel: "kb_mmq128_q8_0", budget: 20},
		{kernel: "kb_mmq128_q4_1", budget: 24},
		{kernel: "kb_mmq128_q4_K", budget: 24},
		{kernel: "kb_mmq128_q2_K", budget: 18, mins: true},
		{kernel: "kb_mmq128_q6_K", budget: 16, k16: true},
		{kernel: "kb_mmq128_q3_K", budget: 16, k16: true},
	},
	"mul_mat_iq.cu": {
		{kernel: "kb_mmq128_iq4_xs", budget: 20},
		{kernel: "kb_mmq128_iq4_nl", budget: 20},
		{kernel: "kb_mmq128_mxfp4", budget: 20},
		{kernel: "kb_mmq128_iq2_xxs", budget: 20},
		{kernel: "kb_mmq128_iq3_s", budget: 20},
		{kernel: "kb_mmq128_tq2_0", budget: 20},
		{kernel: "kb_mmq128_iq1_s", budget: 24},
		{kernel: "kb_mmq128_iq2_xs", budget: 16, k16: true},
		{kernel: "kb_mmq128_iq1_m", budget: 16, k16: true},
	},
}

// TestMmaLoop: the loop finder on a made-up listing.
func TestMmaLoop(t *testing.T) {
	var fn []sassInstr
	add := func(op string, target int) {
		fn = append(fn, sassInstr{addr: 16 * len(fn), target: target, op: op})
	}
	add("MOV", -1)   // 0x00
	add("IMMA", -1)  // 0x10: outer loop
	add("LDS", -1)   // 0x20: inner loop from here
	add("IMMA", -1)  // 0x30
	add("IMMA", -1)  // 0x40
	add("BRA", 0x20) // 0x50
	add("BRA", 0x10) // 0x60
	add("EXIT", -1)
	for _, tc := range []struct {
		min, want int
	}{{2, 4}, {3, 6}, {4, 0}} {
		body, ok := mmaLoop(fn, tc.min)
		if ok != (tc.want > 0) || len(body) != tc.want {
			t.Errorf("min %d: %d instructions (ok %v), want %d", tc.min, len(body), ok, tc.want)
		}
	}
}
