package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// The harness's SOFT_MAX and FLASH_ATTN_EXT cases run on cuda-emu in
// harness's TestBackends; these tests take the launch paths its default
// cases do not reach.

// softMaxCase is a SOFT_MAX case over a [ne0, ne1, ne2, 1] input with an
// f16 mask [ne0, ne1] (causal, rows masked) when masked is set.
func softMaxCase(name string, ne [4]int64, masked []int64, sinks bool, p ops.SoftMaxParams) harness.Case {
	ts := []quant.Type{quant.F32}
	if masked != nil {
		ts = append(ts, quant.F16)
	}
	return harness.Case{Name: name, Op: ops.OpSoftMax, Types: ts,
		Build: func(b *harness.Builder) (*ops.Tensor, error) {
			a := b.Leaf("a", quant.F32, harness.Uniform(-4, 4), ne[:]...)
			var m, s *ops.Tensor
			if masked != nil {
				m = b.Leaf("mask", quant.F16, harness.Causal().WithMaskedRows(masked...), ne[0], ne[1])
			}
			if sinks {
				s = b.Leaf("sinks", quant.F32, harness.Normal(0, 2), ne[2])
			}
			return ops.SoftMax(a, m, s, p)
		}}
}

// TestSoftMaxLongRows runs rows longer than a warp takes (a block per
// row), and rows of both kinds with the shared-memory cache off (each
// pass reads the input and mask again).
func TestSoftMaxLongRows(t *testing.T) {
	b := emulated(t)
	long := []harness.Case{
		softMaxCase("ne=[3000,5,2,1],causal,rows 0,3 masked,sinks,alibi", [4]int64{3000, 5, 2, 1}, []int64{0, 3}, true, ops.SoftMaxParams{Scale: 0.5, MaxBias: 4}),
		softMaxCase("ne=[1025,3,3,1],causal,row 1 masked", [4]int64{1025, 3, 3, 1}, []int64{1}, false, ops.SoftMaxParams{Scale: 1}),
		softMaxCase("ne=[9000,2,1,1]", [4]int64{9000, 2, 1, 1}, nil, false, ops.SoftMaxParams{Scale: 0.125}),
	}
	short := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpSoftMax}})
	run := func(cs []harness.Case) {
		for _, c := range cs {
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
			}
		}
	}
	run(long)
	defer func(n int) { softMaxCacheBytes = n }(softMaxCacheBytes)
	softMaxCacheBytes = 0
	run(long)
	run(short)
}

// TestFlashAttnSplits runs every FLASH_ATTN_EXT case with the keys split
// over 2, 5 and up to 32 blocks (as few blocks on a large GPU would), so
// that the partial results and kb_flash_attn_combine (sinks, fully masked
// queries, splits with every key masked) are checked on every case.
func TestFlashAttnSplits(t *testing.T) {
	b := emulated(t)
	defer func() { faSplitsOverride = 0 }()
	for _, splits := range []int{2, 5, faMaxSplits} {
		faSplitsOverride = splits
		for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpFlashAttnExt}}) {
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%d splits: %s: %s (%s)", splits, c.ID(), r.Summary(), r.Err)
			}
		}
	}
}

// deviceTensor makes a tensor of type typ in b's memory holding vals
// (rows of ne[0], encoded as typ), with the rows listed in poison (dim 1
// indices, every plane) filled with 0xFF bytes: NaN in every float
// format, and a NaN scale in q8_0 and q4_0 blocks.
func deviceTensor(t *testing.T, b *Backend, name string, typ quant.Type, ne [4]int64, vals []float32, poison map[int64]bool) *ops.Tensor {
	t.Helper()
	x, err := ops.NewTensor(name, typ, ne[:]...)
	if err != nil {
		t.Fatal(err)
	}
	rowBytes := x.RowBytes()
	data := make([]byte, x.Bytes())
	for r := range x.NumRows() {
		row := data[r*rowBytes : (r+1)*rowBytes]
		if poison[r%ne[1]] {
			for i := range row {
				row[i] = 0xFF
			}
			continue
		}
		if err := quant.QuantizeRow(typ, vals[r*ne[0]:(r+1)*ne[0]], row); err != nil {
			t.Fatal(err)
		}
	}
	if err := ops.AllocTensor(b, x, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Buffer.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	return x
}

// flashAttnMaskedNaN computes, on b, FLASH_ATTN_EXT of K and V of types
// kt and vt with NaN in the K and V rows of some keys: dead keys, masked
// for every query (unused KV cache cells), and keys masked for the even
// queries only. The reference never reads a row where the key is masked,
// so its even queries are finite (the odd ones, which take the NaN keys,
// are not). It returns the NMSE over the outputs the reference has
// finite and the count of those the backend got non-finite.
func flashAttnMaskedNaN(t *testing.T, b *Backend, kt, vt quant.Type) (float64, int) {
	t.Helper()
	// Two query heads per K/V head: a warp's rows (4) are two heads of
	// two queries, one even, one odd.
	const d, nq, nh, nhk, nkv = 64, 9, 4, 2, 70
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := func(n int64, lo, hi float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		return v
	}
	// Dead keys: some in the first two tiles, next to live ones, and the
	// whole last (partial) tile; and two keys the even queries mask.
	dead := map[int64]bool{0: true, 3: true, 31: true, 32: true, 45: true}
	for j := int64(64); j < nkv; j++ {
		dead[j] = true
	}
	half := map[int64]bool{7: true, 50: true}
	poison := map[int64]bool{}
	for j := range int64(nkv) {
		poison[j] = dead[j] || half[j]
	}
	mask := make([]float32, nkv*nq)
	for i := range mask {
		j, iq := int64(i)%nkv, int64(i)/nkv
		switch {
		case half[j]:
			if iq%2 == 0 {
				mask[i] = float32(math.Inf(-1))
			}
		case dead[j] || rng.Float64() < 0.2:
			mask[i] = float32(math.Inf(-1))
		default:
			mask[i] = float32(rng.Float64() - 0.5)
		}
	}
	q := deviceTensor(t, b, "q", quant.F32, [4]int64{d, nq, nh, 1}, uniform(d*nq*nh, -1, 1), nil)
	k := deviceTensor(t, b, "k", kt, [4]int64{d, nkv, nhk, 1}, uniform(d*nkv*nhk, -1, 1), poison)
	v := deviceTensor(t, b, "v", vt, [4]int64{d, nkv, nhk, 1}, uniform(d*nkv*nhk, -1, 1), poison)
	m := deviceTensor(t, b, "mask", quant.F16, [4]int64{nkv, nq, 1, 1}, mask, nil)
	s := deviceTensor(t, b, "sinks", quant.F32, [4]int64{nh, 1, 1, 1}, uniform(nh, -2, 2), nil)
	node, err := ops.FlashAttnExt(q, k, v, m, s, ops.FlashAttnParams{Scale: 0.125, MaxBias: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := ops.AllocTensor(b, node, 0); err != nil {
		t.Fatal(err)
	}
	want, err := reference.Compute(node)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(node); err != nil {
		t.Fatal(err)
	}
	got, err := reference.Read(node)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	bad, finite := 0, 0
	for i := range want {
		if math.IsNaN(want[i]) || math.IsInf(want[i], 0) {
			continue
		}
		finite++
		if math.IsNaN(got[i]) || math.IsInf(got[i], 0) {
			bad++
			continue
		}
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	if finite != (nq+1)/2*d*nh {
		t.Fatalf("the reference has %d finite outputs of %d, want the even queries' %d", finite, len(want), (nq+1)/2*d*nh)
	}
	return num / den, bad
}

// TestFlashAttnMaskedNaN checks that a query never weighs the K and V
// rows of the keys it masks, even when they hold NaN: keys masked for
// every query (unused KV cache cells), next to live keys in a tile or
// filling it, and keys that other queries of the same warp take; with and
// without KV splits, for every K/V type and for K and V of different
// types (which no harness case has).
func TestFlashAttnMaskedNaN(t *testing.T) {
	b := emulated(t)
	defer func() { faSplitsOverride, faKernelOverride = 0, faAuto }()
	for _, kv := range [][2]quant.Type{
		{quant.F32, quant.F32}, {quant.F16, quant.F16}, {quant.Q8_0, quant.Q8_0}, {quant.Q4_0, quant.Q4_0},
		{quant.Q8_0, quant.F16}, {quant.F16, quant.Q4_0}, {quant.F32, quant.Q8_0},
	} {
		for _, run := range []struct {
			splits int
			kernel faKernel
		}{{1, faTiled}, {3, faTiled}, {1, faVec}, {3, faVec}, {1, faMMA}, {3, faMMA}} {
			splits := run.splits
			if run.kernel == faVec && (kv[0] != kv[1] || (kv[0] != quant.F16 && kv[0] != quant.Q8_0)) {
				continue // the vector kernel takes f16 and q8_0 alone
			}
			if run.kernel == faMMA && (kv[0] == quant.F32 || kv[1] == quant.F32) {
				continue // the tensor-core kernel takes no f32 K/V
			}
			faSplitsOverride, faKernelOverride = splits, run.kernel
			nmse, bad := flashAttnMaskedNaN(t, b, kv[0], kv[1])
			// The reference weights the same dequantized values in
			// float64; q in K's dot type (f16, q8_0) and float32
			// rounding separate them, within the op's tolerance.
			tol, err := harness.LookupTolerance(ops.OpFlashAttnExt, kv[0], "")
			if err != nil {
				t.Fatal(err)
			}
			if bad > 0 || !(nmse < tol.MaxNMSE) {
				t.Errorf("K %v, V %v, kernel %d, %d splits: %d non-finite outputs where the reference has none, NMSE %.3g", kv[0], kv[1], run.kernel, splits, bad, nmse)
			}
		}
	}
}

// TestInjectedAttentionBugs breaks flash_attn_ext.cu as a kernel author might
// and checks that validation fails: in the tiled kernel, a missing
// barrier after the K/V tile load (the emulator reports the race between
// the warp that stores a row and the lanes of other warps that read it),
// the accumulator not rescaled when a tile raises the running maximum
// (wrong values), and a zero weight multiplied in (NaN from a masked
// key's V row); in the vector kernel, a zero weight multiplied in, the
// lane groups' running sums left unadded, and the barrier before the
// warps' merge missing; in the tensor-core kernel, the tile read before
// its cp.async copies land (a race), half the accumulator not rescaled,
// and a NaN V row weighed by the mma (0 * NaN).
func TestInjectedAttentionBugs(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           string // what a failing case must say; "" for any wrong result
		nan            bool   // check with TestFlashAttnMaskedNaN's data instead of the cases
		kernel         faKernel
		file           string // the source the bug goes into; "" for flash_attn_ext.cu
	}{
		{name: "missing barrier after the tile load", kernel: faTiled,
			old:  "fa_load_type(p.vtype, Vs, DV, vbase + j0 * tv.nb[1], tv.nb[1], n, DV, DV);\n\t\t__syncthreads();",
			new:  "fa_load_type(p.vtype, Vs, DV, vbase + j0 * tv.nb[1], tv.nb[1], n, DV, DV);",
			want: "shared-memory race"},
		{name: "accumulator not rescaled", kernel: faTiled,
			old: "for (int c = 0; c < C; c++) acc[i][c] *= alpha;", new: ""},
		{name: "zero weights multiplied in", kernel: faTiled,
			old: "if (w[i] != 0.0f) acc[i][c] += w[i] * x;", new: "acc[i][c] += w[i] * x;", nan: true},
		{name: "tensor-core kernel: tile read before its copies land", kernel: faMMA, file: "fa_mma.cuh",
			old: "kb_cp_async_wait<0>();\n\t\tif (p.vtype == KB_F16) vnf = fm_check<D, KT>(Vs, n, vnf);", new: "",
			want: "shared-memory race"},
		{name: "tensor-core kernel: accumulator rows g+8 not rescaled", kernel: faMMA, file: "fa_mma.cuh",
			old: "acc[i][2] *= alpha[1];\n\t\t\t\tacc[i][3] *= alpha[1];", new: ""},
		{name: "tensor-core kernel: V not checked for NaN", kernel: faMMA, file: "fa_mma.cuh",
			old: "const bool bad = __syncthreads_or(fm_nf_any(vnf));", new: "const bool bad = __syncthreads_or(fm_nf_any(vnf)) && false;", nan: true},
		{name: "vector kernel: zero weights multiplied in", kernel: faVec, file: "fa_vec.cuh",
			old: "acc[r][i] = w != 0.0f ? fmaf(w, vf[i], acc[r][i]) : acc[r][i];", new: "acc[r][i] = fmaf(w, vf[i], acc[r][i]);", nan: true},
		{name: "vector kernel: groups' sums not added", kernel: faVec, file: "fa_vec.cuh",
			old: "l[r] += __shfl_xor_sync(0xffffffffu, l[r], o);", new: ""},
		{name: "vector kernel: missing barrier before the merge", kernel: faVec, file: "fa_vec.cuh",
			old: "\t\t}\n\t}\n\t__syncthreads();\n\n\t// The warps' results merged", new: "\t\t}\n\t}\n\n\t// The warps' results merged",
			want: "shared-memory race"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "flash_attn_ext.cu"
			}
			b, patched := patchKernel(t, file, tc.old, tc.new)
			defer func() { faKernelOverride = faAuto }()
			faKernelOverride = tc.kernel
			if tc.nan {
				nmse, bad := flashAttnMaskedNaN(t, b, quant.F16, quant.F16)
				if !*patched || bad == 0 {
					t.Errorf("the injected bug (applied %v) went unnoticed: %d non-finite outputs, NMSE %.3g", *patched, bad, nmse)
				}
				return
			}
			failed := 0
			cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpFlashAttnExt}})
			if tc.kernel == faMMA {
				// The matrix has no case of several tiles and more than
				// 8 rows per K/V head below -large.
				cases = append(cases, faMMAHeadCases()...)
			}
			// A sticky fault (an illegal address) loses the context: a
			// session reopens the backend, with the bug, after it.
			s, err := harness.OpenSession("cuda-emu", func() (ops.Backend, error) { return patchKernelInto(t, file, tc.old, tc.new, patched), nil })
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b.Close()
			for _, c := range cases {
				r := runSession(t, s, c)
				if r.Passed() {
					continue
				}
				failed++
				if why := r.Summary() + " " + r.Err; !strings.Contains(why, tc.want) {
					t.Errorf("%s fails, but not for the injected bug: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
			}
			if !*patched || failed == 0 {
				t.Errorf("the injected bug (applied %v) failed no case", *patched)
			}
			t.Logf("%d cases failed", failed)
		})
	}
}

// faTestTensor is a FLASH_ATTN_EXT node (not allocated) with q [d, nq,
// heads, 1] f32 and K/V [d, nkv, kvHeads, 1] of type kv.
func faTestTensor(t *testing.T, kv quant.Type, d, nq, heads, kvHeads, nkv int64) *ops.Tensor {
	t.Helper()
	q, err := ops.NewTensor("q", quant.F32, d, nq, heads, 1)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ops.NewTensor("k", kv, d, nkv, kvHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ops.NewTensor("v", kv, d, nkv, kvHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	node, err := ops.FlashAttnExt(q, k, v, nil, nil, ops.FlashAttnParams{Scale: 0.125})
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// TestFlashAttnKernelChoice checks which kernel faKernelFor picks: the
// vector kernel for decode (up to 8 query rows per K/V head) with f16
// K/V of head size 64, 128 or 256 on 16-byte aligned rows (q8_0: 2-byte
// aligned), the tensor-core kernel for more rows with f16, q8_0 or q4_0
// K/V of head size 64 to 128 (multiples of 16) or 256 on aligned rows,
// the tiled kernel for everything else and whenever the override asks
// for it; and
// that the vector kernel's splits fill an H200 (132 multiprocessors)
// several times over with at least 64 keys each.
func TestFlashAttnKernelChoice(t *testing.T) {
	defer func() { faKernelOverride = faAuto }()
	f16, q8 := quant.F16, quant.Q8_0
	for _, tc := range []struct {
		name                       string
		kv                         quant.Type
		d, nq, heads, kvHeads, nkv int64
		kPtr                       uint64
		override                   faKernel
		want                       faKernel
	}{
		{"llama-7b decode", f16, 128, 1, 32, 32, 512, 0, faAuto, faVec},
		{"GQA 4 decode", f16, 128, 1, 32, 8, 4096, 0, faAuto, faVec},
		{"GQA 8 decode", f16, 64, 1, 64, 8, 300, 0, faAuto, faVec},
		{"head 256, 2 queries of GQA 4", f16, 256, 2, 8, 2, 100, 0, faAuto, faVec},
		{"9 rows per K/V head", f16, 128, 9, 4, 4, 512, 0, faAuto, faMMA},
		{"9 rows per K/V head, vector kernel asked for", f16, 128, 9, 4, 4, 512, 0, faVec, faVec},
		{"prompt", f16, 128, 512, 32, 32, 512, 0, faAuto, faMMA},
		{"prompt, tiled kernel asked for", f16, 128, 512, 32, 32, 512, 0, faTiled, faTiled},
		{"prompt, q8_0 K/V", q8, 128, 512, 32, 8, 512, 2, faAuto, faMMA},
		{"prompt, q4_0 K/V", quant.Q4_0, 64, 64, 8, 8, 100, 0, faAuto, faMMA},
		{"prompt, f32 K/V", quant.F32, 128, 512, 32, 32, 512, 0, faAuto, faTiled},
		{"prompt, head 80", f16, 80, 32, 4, 2, 17, 0, faAuto, faMMA},
		{"prompt, head 256", f16, 256, 32, 4, 2, 17, 0, faAuto, faMMA},
		{"prompt, head 40", f16, 40, 32, 4, 2, 17, 0, faAuto, faTiled},
		{"prompt, head 192", f16, 192, 32, 4, 2, 17, 0, faAuto, faTiled},
		{"prompt, K 8-byte aligned", f16, 128, 512, 32, 32, 512, 8, faAuto, faTiled},
		{"prompt, q8_0 K/V, odd address", q8, 128, 512, 32, 32, 512, 1, faAuto, faTiled},
		{"decode, tensor-core kernel asked for", f16, 128, 1, 32, 32, 512, 0, faMMA, faMMA},
		{"decode, q4_0, tensor-core kernel asked for", quant.Q4_0, 128, 1, 32, 32, 512, 0, faMMA, faMMA},
		{"head 40, tensor-core kernel asked for", f16, 40, 1, 4, 2, 17, 0, faMMA, faTiled},
		{"q8_0 K/V", q8, 128, 1, 32, 32, 512, 0, faAuto, faVec},
		{"q8_0 K/V, 2-byte aligned", q8, 128, 1, 32, 32, 512, 2, faAuto, faVec},
		{"q8_0 K/V, odd address", q8, 128, 1, 32, 32, 512, 1, faAuto, faTiled},
		{"q4_0 K/V", quant.Q4_0, 128, 1, 32, 32, 512, 0, faAuto, faTiled},
		{"f32 K/V", quant.F32, 128, 1, 32, 32, 512, 0, faAuto, faTiled},
		{"head 40", f16, 40, 1, 4, 2, 17, 0, faAuto, faTiled},
		{"head 96", f16, 96, 1, 4, 2, 17, 0, faAuto, faTiled},
		{"K 8-byte aligned", f16, 128, 1, 32, 32, 512, 8, faAuto, faTiled},
		{"tiled kernel asked for", f16, 128, 1, 32, 32, 512, 0, faTiled, faTiled},
		{"no queries", f16, 64, 0, 2, 1, 8, 0, faVec, faTiled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faKernelOverride = tc.override
			node := faTestTensor(t, tc.kv, tc.d, tc.nq, tc.heads, tc.kvHeads, tc.nkv)
			got := faKernelFor(node, 1<<20+tc.kPtr, 2<<20, tc.override)
			if got != tc.want {
				t.Fatalf("faKernelFor = %d, want %d", got, tc.want)
			}
			if got != faVec {
				return
			}
			g := faVecGeometryFor(node, 132, 0)
			rows := tc.nq * (tc.heads / tc.kvHeads)
			if int64(g.rpw) < min(rows, faVecMaxRows) || g.rpw > 2*int(rows) || g.rowBlocks*int64(g.rpw) < rows {
				t.Errorf("%d rows per block, %d blocks for %d rows", g.rpw, g.rowBlocks, rows)
			}
			keys := int64(g.tiles * faTile)
			if int64(g.splits)*keys < tc.nkv || int64(g.splits-1)*keys >= tc.nkv {
				t.Errorf("%d splits of %d keys for %d keys", g.splits, keys, tc.nkv)
			}
			if g.splits > 1 && keys < faVecMinKeys {
				t.Errorf("%d splits of %d keys: under %d keys each", g.splits, keys, faVecMinKeys)
			}
			blocks := g.rowBlocks * tc.kvHeads * int64(g.splits)
			target := int64(faVecWaves * faVecBlocksPerSM * 132) // GQA 4 at 4096 keys: 8 heads x 64 splits
			if full := tc.nkv / faVecMinKeys; blocks < min(target, tc.kvHeads*g.rowBlocks*min(full, faVecMaxSplits)) {
				t.Errorf("%d blocks (%d splits) on 132 multiprocessors", blocks, g.splits)
			}
			if g.splits > faVecMaxSplits {
				t.Errorf("%d splits, more than %d", g.splits, faVecMaxSplits)
			}
		})
	}
}

// TestFAVecSplitsCap: a cap on the decode kernel's KV splits
// ($KERNBENCH_CUDA_FA_VEC_SPLITS) bounds them and still covers every key;
// none, or one past faVecMaxSplits, is faVecMaxSplits.
func TestFAVecSplitsCap(t *testing.T) {
	const nkv = 4096
	node := faTestTensor(t, quant.F16, 128, 1, 32, 8, nkv) // GQA 4 at 4096 keys: 64 splits on 132 SMs
	if g := faVecGeometryFor(node, 132, 0); g.splits != faVecMaxSplits {
		t.Fatalf("no cap: %d splits, want %d", g.splits, faVecMaxSplits)
	}
	for _, c := range []struct{ cap, want int }{{1, 1}, {8, 8}, {32, 32}, {faVecMaxSplits, faVecMaxSplits}, {faVecMaxSplits + 1, faVecMaxSplits}} {
		g := faVecGeometryFor(node, 132, c.cap)
		keys := int64(g.tiles * faTile)
		if g.splits != c.want || int64(g.splits)*keys < nkv || int64(g.splits-1)*keys >= nkv {
			t.Errorf("cap %d: %d splits of %d keys for %d keys, want %d splits", c.cap, g.splits, keys, nkv, c.want)
		}
	}
}

// TestFlashAttnVecManySplits runs the vector kernel with the most splits
// it takes (faVecMaxSplits of 64 keys, as a GQA decode of 4096 keys gets
// on an H200), f16 and q8_0 K/V with a mask and sinks, so that
// kb_flash_attn_combine merges that many.
func TestFlashAttnVecManySplits(t *testing.T) {
	defer func() { faSplitsOverride, faKernelOverride = 0, faAuto }()
	faSplitsOverride, faKernelOverride = faVecMaxSplits, faVec
	const d, nh, nhk, nkv = 64, 4, 1, faVecMaxSplits * faVecMinKeys
	b := emulated(t)
	for _, kv := range []quant.Type{quant.F16, quant.Q8_0} {
		node := faTestTensor(t, kv, d, 1, nh, nhk, nkv)
		if g := faVecGeometryFor(node, 0, 0); g.splits != faVecMaxSplits || g.tiles*faTile != faVecMinKeys {
			t.Fatalf("%v: %d splits of %d tiles, want %d of %d keys", kv, g.splits, g.tiles, faVecMaxSplits, faVecMinKeys)
		}
		uni := harness.Uniform(-1, 1)
		c := harness.Case{
			Name: fmt.Sprintf("d=%d,heads=%d,kv_heads=%d,nq=1,nkv=%d", d, nh, nhk, nkv), Op: ops.OpFlashAttnExt, Types: []quant.Type{kv},
			Build: func(bd *harness.Builder) (*ops.Tensor, error) {
				return ops.FlashAttnExt(bd.Leaf("q", quant.F32, uni, d, 1, nh, 1), bd.Leaf("k", kv, uni, d, nkv, nhk, 1),
					bd.Leaf("v", kv, uni, d, nkv, nhk, 1), bd.Leaf("mask", quant.F16, uni, nkv, 1, 1, 1),
					bd.Leaf("sinks", quant.F32, uni, nh, 1, 1, 1), ops.FlashAttnParams{Scale: 0.125})
			}}
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
		}
	}
	if _, ok := b.funcs["kb_flash_attn_vec_q8_0_d64_r4"]; !ok {
		t.Error("the q8_0 case did not launch kb_flash_attn_vec_q8_0_d64_r4")
	}
}

// TestFlashAttnVecCases runs every FLASH_ATTN_EXT case with the vector
// kernel wherever it can run (any number of rows per K/V head), with the
// splits the emulated device picks and with 1 and 7 splits, and checks
// that the decode cases took it by default and that the tiled kernel,
// asked for, still passes them.
func TestFlashAttnVecCases(t *testing.T) {
	defer func() { faSplitsOverride, faKernelOverride = 0, faAuto }()
	cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpFlashAttnExt}})
	var decode []harness.Case
	for _, c := range cases {
		if strings.Contains(c.Name, "heads=4,kv=1,d=128,nq=1,nkv=256") && c.Types[0] == quant.F16 {
			decode = append(decode, c)
		}
	}
	if len(decode) == 0 {
		t.Fatal("no f16 decode case in the matrix")
	}
	b := emulated(t)
	runCases(t, b, decode, "by default")
	if got := loadedKernels(b, "kb_flash_attn_vec_"); len(got) != 1 || got[0] != "kb_flash_attn_vec_d128_r4" {
		t.Errorf("the decode case launched %v, want kb_flash_attn_vec_d128_r4 alone", got)
	}
	faKernelOverride = faTiled
	b = emulated(t)
	runCases(t, b, decode, "tiled kernel")
	if got := loadedKernels(b, "kb_flash_attn_vec_"); len(got) != 0 {
		t.Errorf("the tiled kernel asked for, the decode case launched %v", got)
	}
	faKernelOverride = faVec
	for _, splits := range []int{0, 1, 7} {
		faSplitsOverride = splits
		runCases(t, b, cases, fmt.Sprintf("vector kernel, %d splits", splits))
	}
	got := strings.Join(loadedKernels(b, "kb_flash_attn_vec_"), " ")
	for _, want := range []string{"kb_flash_attn_vec_d64_r8", "kb_flash_attn_vec_d128_r4", "kb_flash_attn_vec_q8_0_d64_r8", "kb_flash_attn_vec_q8_0_d128_r4"} {
		if !strings.Contains(got, want) {
			t.Errorf("the vector kernel asked for, the cases launched %s but not %s", got, want)
		}
	}
}

// TestFlashAttnMMACases runs every FLASH_ATTN_EXT case with the
// tensor-core kernel wherever it can run (decode included), with the
// splits the emulated device picks and with 1 and 3 splits, and checks
// that a prefill case took it by default.
func TestFlashAttnMMACases(t *testing.T) {
	defer func() { faSplitsOverride, faKernelOverride = 0, faAuto }()
	cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpFlashAttnExt}})
	var prefill []harness.Case
	for _, c := range cases {
		if strings.HasPrefix(c.Name, "heads=8,kv=4,d=64,nq=7,nkv=33,mask") && c.Types[0] == quant.Q4_0 {
			prefill = append(prefill, c)
		}
	}
	if len(prefill) == 0 {
		t.Fatal("no q4_0 prefill case in the matrix")
	}
	b := emulated(t)
	runCases(t, b, prefill, "by default")
	if got := loadedKernels(b, "kb_flash_attn_mma_"); len(got) != 1 || got[0] != "kb_flash_attn_mma_d64" {
		t.Errorf("the prefill case launched %v, want kb_flash_attn_mma_d64 alone", got)
	}
	faKernelOverride = faMMA
	for _, splits := range []int{0, 1, 3} {
		faSplitsOverride = splits
		runCases(t, b, cases, fmt.Sprintf("tensor-core kernel, %d splits", splits))
	}
	got := strings.Join(loadedKernels(b, "kb_flash_attn_mma_"), " ")
	for _, want := range []string{"kb_flash_attn_mma_d64", "kb_flash_attn_mma_d128"} {
		if !strings.Contains(got, want) {
			t.Errorf("the tensor-core kernel asked for, the cases launched %s but not %s", got, want)
		}
	}
}

// faHeadCase is a causal FLASH_ATTN_EXT case of head size d (q·k and v)
// with K/V of type kv, sinks and ALiBi or softcap by the flags.
func faHeadCase(kv quant.Type, d, nq, heads, kvHeads, nkv int64, sinks, alibi bool) harness.Case {
	name := fmt.Sprintf("d=%d,nq=%d,heads=%d,kv=%d,nkv=%d,sinks=%v,alibi=%v", d, nq, heads, kvHeads, nkv, sinks, alibi)
	return harness.Case{Name: name, Op: ops.OpFlashAttnExt, Types: []quant.Type{kv},
		Build: func(b *harness.Builder) (*ops.Tensor, error) {
			q := b.Leaf("q", quant.F32, harness.Uniform(-1, 1), d, nq, heads)
			k := b.Leaf("k", kv, harness.Uniform(-1, 1), d, nkv, kvHeads)
			v := b.Leaf("v", kv, harness.Uniform(-1, 1), d, nkv, kvHeads)
			m := b.Leaf("mask", quant.F16, harness.Causal(), nkv, nq)
			var s *ops.Tensor
			p := ops.FlashAttnParams{Scale: float32(1 / math.Sqrt(float64(d)))}
			if sinks {
				s = b.Leaf("sinks", quant.F32, harness.Normal(0, 2), heads)
			}
			if alibi {
				p.MaxBias = 8
			} else {
				p.Softcap = 20
			}
			return ops.FlashAttnExt(q, k, v, m, s, p)
		}}
}

// faMMAHeadCases are TestFlashAttnMMAHeads's cases.
func faMMAHeadCases() []harness.Case {
	return []harness.Case{
		faHeadCase(quant.F16, 80, 40, 4, 2, 150, true, false),
		faHeadCase(quant.F16, 96, 33, 2, 1, 70, false, true),
		faHeadCase(quant.Q8_0, 96, 33, 2, 1, 70, true, false),
		faHeadCase(quant.F16, 112, 20, 4, 1, 90, false, false),
		faHeadCase(quant.F16, 256, 37, 2, 2, 100, true, true),
		faHeadCase(quant.Q4_0, 256, 37, 2, 2, 100, false, false),
		faHeadCase(quant.Q4_0, 128, 70, 4, 4, 200, true, false),
	}
}

// TestFlashAttnMMAHeads runs the tensor-core kernel on the head sizes the
// case matrix lacks (80, 96, 112, 256) and on tiles of several warps'
// rows, several tiles and a partial last one, against the reference.
func TestFlashAttnMMAHeads(t *testing.T) {
	defer func() { faSplitsOverride, faKernelOverride = 0, faAuto }()
	b := emulated(t)
	for _, splits := range []int{0, 2} {
		faSplitsOverride = splits
		for _, c := range faMMAHeadCases() {
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%d splits: %s: %s (%s)", splits, c.ID(), r.Summary(), r.Err)
			}
		}
	}
	for _, d := range []int{80, 96, 112, 256} {
		if b.funcs[fmt.Sprintf("kb_flash_attn_mma_d%d", d)] == nil {
			t.Errorf("no case launched kb_flash_attn_mma_d%d", d)
		}
	}
}

// loadedKernels returns the names of the kernels b has loaded that start
// with prefix.
func loadedKernels(b *Backend, prefix string) []string {
	var names []string
	for n := range b.funcs {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	return names
}

// runCases runs cs on b and reports each failure, saying what was asked
// for (what).
func runCases(t *testing.T, b *Backend, cs []harness.Case, what string) {
	t.Helper()
	for _, c := range cs {
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s: %s: %s (%s)", what, c.ID(), r.Summary(), r.Err)
		}
	}
}
