package cuda

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// matmulCases returns the default MUL_MAT and MUL_MAT_ID cases of weight
// types ts: one or more of each kernel family (f32 FMAs, f16 and bf16
// tensor cores, 32- and 256-element integer blocks, the f32 dot of a K
// format).
func matmulCases(ts ...quant.Type) []harness.Case {
	var out []harness.Case
	for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpMulMat, ops.OpMulMatID}}) {
		if slices.Contains(ts, c.Types[0]) {
			out = append(out, c)
		}
	}
	return out
}

// withPaths runs f with the kernel choice set: up to mmv columns take the
// matrix-vector kernels, and mma selects the tensor-core tiled kernels.
func withPaths(mmv int64, mma bool, f func()) {
	oldMMV, oldMMA := mmvMaxCols, useMMA
	mmvMaxCols, useMMA = mmv, mma
	defer func() { mmvMaxCols, useMMA = oldMMV, oldMMA }()
	f()
}

// withTile runs f with b's integer tensor-core kernels' tile forced
// (tileSmall, tileBig, or tileAuto).
func withTile(b *Backend, tile int, f func()) {
	old := b.tiles.mmq
	b.tiles.mmq = tile
	defer func() { b.tiles.mmq = old }()
	f()
}

// TestMmqTileRows: the big tile where its blocks still cover the SMs,
// the small one where they would leave SMs idle, and the forced choice.
func TestMmqTileRows(t *testing.T) {
	for _, tc := range []struct {
		m, colTiles int64
		sms, force  int
		want        int64
	}{
		{4096, 8, 132, tileAuto, bigTileM},      // 32x8 = 256 big tiles
		{4096, 4, 132, tileAuto, tileM},         // 128 big tiles on 132 SMs
		{4096, 1, 132, tileAuto, tileM},         // 32 big tiles: 64 small ones
		{4096, 4, 128, tileAuto, bigTileM},      // 128 on 128 SMs
		{11008, 8, 132, tileAuto, bigTileM},     // 86x8
		{100, 1, 132, tileAuto, tileM},          // one tile either way
		{4096, 8, 132, tileSmall, tileM},        // forced
		{100, 1, 132, tileBig, bigTileM},        // forced
		{4096 + 64, 4, 132, tileAuto, bigTileM}, // 33x4
	} {
		if got := mmqTileRows(tc.m, tc.colTiles, tc.sms, tc.force); got != tc.want {
			t.Errorf("mmqTileRows(%d, %d, %d) forced %d = %d, want %d", tc.m, tc.colTiles, tc.sms, tc.force, got, tc.want)
		}
	}
}

// TestTileFromEnv: the values of $KERNBENCH_CUDA_MMQ_TILE and
// $KERNBENCH_CUDA_HTILE that force a tile, and those that leave the
// choice.
func TestTileFromEnv(t *testing.T) {
	for v, want := range map[string]int{"": tileAuto, "64": tileSmall, " 128\n": tileBig, "96": tileAuto, "auto": tileAuto} {
		if got := tileFromEnv(v); got != want {
			t.Errorf("tileFromEnv(%q) = %d, want %d", v, got, want)
		}
	}
	for v, want := range map[string]hTile{"": {}, "128x128": hTile128x128, "128x128w4 ": hTile128x128w4, "128x64": hTile128x64,
		"64x64": hTileSmall, "64x128": {}, "auto": {}} {
		if got := hTileFromEnv(v); got != want {
			t.Errorf("hTileFromEnv(%q) = %+v, want %+v", v, got, want)
		}
	}
	env := map[string]string{mmqTileEnv: "128", hTileEnv: "128x64"}
	want := tileForce{mmq: tileBig, half: hTile128x64}
	if got := tileForceFromEnv(func(k string) string { return env[k] }); got != want {
		t.Errorf("tileForceFromEnv(%v) = %+v, want %+v", env, got, want)
	}
	for v, want := range map[string]int{"": 0, "32": 32, " 8\n": 8, "1": 1, "100": faVecMaxSplits, "0": 0, "-4": 0, "many": 0} {
		env := map[string]string{faVecSplitsEnv: v, mmqSplitEnv: "3"}
		if got := tileForceFromEnv(func(k string) string { return env[k] }); got.faVecSplits != want || got.split != 3 {
			t.Errorf("tileForceFromEnv(%q) = %+v, want faVecSplits %d and split 3", env, got, want)
		}
	}
}

// TestMmqTiles runs the integer cases (every weight type the tensor-core
// tiled kernels take, MUL_MAT and MUL_MAT_ID, the matrix-vector shapes
// too) through each of the integer tensor-core kernels' tiles.
func TestMmqTiles(t *testing.T) {
	b := emulated(t)
	var types []quant.Type
	for _, ty := range quant.Types() {
		if intPath(ty) {
			types = append(types, ty)
		}
	}
	if len(types) < 10 {
		t.Fatalf("integer types %v: want the 10 the kernels take", types)
	}
	cases := matmulCases(types...)
	for _, tile := range []int{tileSmall, tileBig} {
		t.Run(fmt.Sprint(tile), func(t *testing.T) {
			withPaths(0, true, func() {
				withTile(b, tile, func() {
					for _, c := range cases {
						if r := harness.Run(b, c); !r.Passed() {
							t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
						}
					}
				})
			})
			if tile != tileBig {
				return
			}
			// The cases ran the big kernels, each with its dynamic
			// shared memory allowed.
			for _, ty := range types {
				f, ok := b.funcs["kb_mmq128_"+ty.String()]
				if !ok {
					t.Errorf("kb_mmq128_%v never launched", ty)
				} else if f.shared != mmqShared(bigTileM) {
					t.Errorf("kb_mmq128_%v allowed %d bytes of dynamic shared memory, want %d", ty, f.shared, mmqShared(bigTileM))
				}
			}
		})
	}
}

// TestMmqSharedLimit: a launch with more dynamic shared memory than its
// kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (48 kB until
// set) fails, on the emulated driver as on a GPU, and succeeds once the
// attribute allows it (an empty product: no columns).
func TestMmqSharedLimit(t *testing.T) {
	b := emulated(t)
	const name = "kb_mmq_q5_0" // launched with static shared memory only
	f, err := b.function("mul_mat_q.cu", name)
	if err != nil {
		t.Fatal(err)
	}
	a := mmArgs{m: 1, k: 32, b2: 1, r2: 1, r3: 1, used: 1, b1: 1}
	args := a.bytes()
	params := []unsafe.Pointer{unsafe.Pointer(&args[0])}
	shared := uint32(mmqShared(bigTileM))
	if rc := b.api.cuLaunchKernel(f.h, 1, 1, 1, tileNT, 1, 1, shared, b.strm, unsafe.Pointer(&params[0]), nil); rc == 0 {
		t.Fatalf("%s launched with %d bytes of dynamic shared memory above its 48 kB limit", name, shared)
	}
	if err := b.launch("mul_mat_q.cu", name, dim3{1, 1, 1}, dim3{tileNT, 1, 1}, int(shared), args); err != nil {
		t.Fatalf("%s with the attribute set: %v", name, err)
	}
	if err := b.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

// TestMatmulPaths runs the cases the default choice gives the
// matrix-vector kernels (n <= 8, and MUL_MAT_ID with few pairs) through
// the tiled kernels, with tensor cores and without (the __dp4a and FMA
// kernels GPUs before sm_80 run): broadcasting, permuted and transposed
// activations, f16 activations, one weight row, ids routing to few
// experts and out of range.
func TestMatmulPaths(t *testing.T) {
	b := emulated(t)
	for _, tc := range []struct {
		name  string
		mma   bool
		types []quant.Type
	}{
		{"tiled mma", true, []quant.Type{quant.F16, quant.BF16, quant.Q4_0, quant.Q5_1, quant.Q3_K, quant.Q4_K, quant.Q6_K}},
		{"tiled simt", false, []quant.Type{quant.F32, quant.F16, quant.Q8_K, quant.Q4_1, quant.Q8_0, quant.Q2_K, quant.Q5_K}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withPaths(0, tc.mma, func() {
				for _, c := range matmulCases(tc.types...) {
					if r := harness.Run(b, c); !r.Passed() {
						t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
					}
				}
			})
		})
	}
}

// TestMatmulAlignedRows runs float weights whose rows the kernels read
// several elements a load (k even, 16-byte rows): the default cases' odd
// k take the one-element loads. Matrix-vector and tiled, both ops.
func TestMatmulAlignedRows(t *testing.T) {
	b := emulated(t)
	uni := harness.Uniform(-1, 1)
	var cases []harness.Case
	for _, wt := range []quant.Type{quant.F32, quant.F16, quant.BF16} {
		for _, n := range []int64{1, 3, 20} {
			cases = append(cases, harness.Case{
				Name: fmt.Sprintf("m=13,n=%d,k=256,a=2x1,b=2x3", n), Op: ops.OpMulMat, Types: []quant.Type{wt, quant.F32},
				Build: func(bd *harness.Builder) (*ops.Tensor, error) {
					return ops.MulMat(bd.Leaf("a", wt, uni, 256, 13, 2, 1), bd.Leaf("b", quant.F32, uni, 256, n, 2, 3))
				}})
		}
		for _, tokens := range []int64{2, 10} {
			cases = append(cases, harness.Case{
				Name: fmt.Sprintf("m=16,k=256,experts=8,used=2,tokens=%d", tokens), Op: ops.OpMulMatID, Types: []quant.Type{wt},
				Build: func(bd *harness.Builder) (*ops.Tensor, error) {
					return ops.MulMatID(bd.Leaf("experts", wt, uni, 256, 16, 8), bd.Leaf("b", quant.F32, uni, 256, 2, tokens),
						bd.Leaf("ids", quant.I32, harness.DistinctInts(0, 8), 2, tokens))
				}})
		}
	}
	for _, c := range cases {
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
		}
	}
}

// TestMatmulVecLongRows runs the matrix-vector kernels over rows longer
// than the default cases': kb_mmvq's several k steps (64 chunks each, the
// last one short; one column: mmvqStep's, 128 to 384 chunks by type)
// with 16-byte aligned rows (k=4352 of q4_0, q8_0, q4_K; one column of
// q4_0 at k=9024 and q5_K at 8192) and rows only 2-byte aligned (q4_0 and
// q8_0 at k=4160, q6_K at 4352);
// kb_mmvf's 16-byte loads with 4, 2 and 1 warps per row (m=37, 2100,
// 4101). Columns 1, 3 and 8; MUL_MAT_ID one pair per grid row.
func TestMatmulVecLongRows(t *testing.T) {
	b := emulated(t)
	uni := harness.Uniform(-1, 1)
	mm := func(wt quant.Type, m, n, k int64) harness.Case {
		return harness.Case{
			Name: fmt.Sprintf("m=%d,n=%d,k=%d", m, n, k), Op: ops.OpMulMat, Types: []quant.Type{wt, quant.F32},
			Build: func(bd *harness.Builder) (*ops.Tensor, error) {
				return ops.MulMat(bd.Leaf("a", wt, uni, k, m, 1, 1), bd.Leaf("b", quant.F32, uni, k, n, 1, 1))
			}}
	}
	var cases []harness.Case
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K} {
		for _, n := range []int64{1, 3, 8} {
			cases = append(cases, mm(wt, 37, n, 4352))
		}
	}
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q8_0} {
		cases = append(cases, mm(wt, 9, 2, 4160))
	}
	cases = append(cases, mm(quant.Q4_0, 37, 1, 9024), mm(quant.Q5_K, 9, 1, 8192))
	for _, wt := range []quant.Type{quant.F16, quant.F32, quant.BF16} {
		cases = append(cases, mm(wt, 37, 1, 4352), mm(wt, 37, 8, 2056))
	}
	cases = append(cases, mm(quant.F16, 2100, 2, 512), mm(quant.F16, 4101, 1, 256))
	for _, wt := range []quant.Type{quant.Q4_0, quant.F16} {
		cases = append(cases, harness.Case{
			Name: "m=20,k=4352,experts=4,used=2,tokens=2", Op: ops.OpMulMatID, Types: []quant.Type{wt},
			Build: func(bd *harness.Builder) (*ops.Tensor, error) {
				return ops.MulMatID(bd.Leaf("experts", wt, uni, 4352, 20, 4), bd.Leaf("b", quant.F32, uni, 4352, 2, 2),
					bd.Leaf("ids", quant.I32, harness.DistinctInts(0, 4), 2, 2))
			}})
	}
	for _, c := range cases {
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
		}
	}
}

// TestMmvqStep checks kb_mmvq's k steps for every integer type: whole
// blocks, a multiple of 16 bytes (a step of a 16-byte aligned row starts
// 16-byte aligned), and for one column at most mmvq1Bytes and, for the
// 7B files' types, a whole 4096-wide row.
func TestMmvqStep(t *testing.T) {
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		if !intPath(wt) {
			t.Fatalf("%v: not an integer path", wt)
		}
		cpb := wt.BlockSize() / 32
		for _, ncols := range []int64{1, 2, 8} {
			seg, step := mmvqStep(wt, ncols)
			if seg%cpb != 0 || step != seg/cpb*wt.TypeSize() || step%16 != 0 {
				t.Errorf("%v, %d columns: %d chunks, %d bytes a step", wt, ncols, seg, step)
			}
			if ncols > 1 && seg != mmvqSeg {
				t.Errorf("%v, %d columns: %d chunks a step, want %d", wt, ncols, seg, mmvqSeg)
			}
			if ncols == 1 && (step > mmvq1Bytes || step < mmvq1Bytes/2) {
				t.Errorf("%v, one column: %d bytes a step", wt, step)
			}
			// A row shorter than a step: the shared memory of that row.
			if _, _, full := mmvGeometry(wt, 4096, ncols); ncols == 1 && seg > 8*cpb {
				short := 8 * wt.BlockSize()
				_, _, got := mmvGeometryK(wt, 4096, ncols, short)
				want := int((ncols*(short/32)*q8aSize+15)/16*16 + mmvRows*((8*wt.TypeSize()+15)/16*16+16))
				if got != want || got >= full {
					t.Errorf("%v, one column, k=%d: %d bytes of shared memory, want %d (under %d)", wt, short, got, want, full)
				}
			}
			// A row of an odd number of chunks (k=96): the activations'
			// region is rounded up to 16 bytes, so the weights' 16-byte
			// copies after it land aligned (an H200 faulted with
			// CUDA_ERROR_MISALIGNED_ADDRESS on q4_0 m=16 k=96 before).
			if wt.BlockSize() == 32 {
				_, _, got := mmvGeometryK(wt, 16, ncols, 96)
				if act := got - int(mmvRows*((3*wt.TypeSize()+15)/16*16+16)); act%16 != 0 || act < int(ncols*3*q8aSize) {
					t.Errorf("%v, %d columns, k=96: the activations take %d bytes of shared memory", wt, ncols, act)
				}
			}
			switch wt {
			case quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K:
				if ncols == 1 && seg < 4096/32 {
					t.Errorf("%v, one column: %d chunks a step, under a 4096-wide row's", wt, seg)
				}
			}
		}
	}
}

// TestMatmulIDsChecked: an id out of range is Compute's error on both
// MUL_MAT_ID paths, and the status is clear for the next product.
func TestMatmulIDsChecked(t *testing.T) {
	b := emulated(t)
	for _, mmv := range []int64{0, 8} {
		withPaths(mmv, true, func() {
			var bad, good harness.Case
			for _, c := range matmulCases(quant.Q4_0) {
				switch {
				case c.Op == ops.OpMulMatID && strings.Contains(c.Name, "out of range"):
					bad = c
				case c.Op == ops.OpMulMatID && c.Name == "m=16,k=96,experts=8,used=2,tokens=5":
					good = c
				}
			}
			if bad.Build == nil || good.Build == nil {
				t.Fatal("the MUL_MAT_ID cases this test runs are gone")
			}
			if r := harness.Run(b, bad); !r.Passed() || !strings.Contains(r.Err, "expert id 4 outside [0, 4)") {
				t.Errorf("mmv %d: %s: %s (%s)", mmv, bad.ID(), r.Summary(), r.Err)
			}
			if r := harness.Run(b, good); !r.Passed() {
				t.Errorf("mmv %d: %s after a bad id: %s (%s)", mmv, good.ID(), r.Summary(), r.Err)
			}
		})
	}
}

// TestMmvqMisalignedIsCaught puts back the bug an H200 found in kb_mmvq1
// (kernels/mmv.cuh; q4_0, m=16, n=1, k=96: the weights' 16-byte cp.async copies landed 8
// bytes past a 16-byte boundary, after an activation region of 3 q8a
// blocks, CUDA_ERROR_MISALIGNED_ADDRESS) and checks that cuda-emu reports
// it as the GPU did, naming the kernel, the copy and the address, and
// that the context is lost as a GPU's is: a harness.Session reopens the
// backend and the cases after the faulting one pass.
func TestMmvqMisalignedIsCaught(t *testing.T) {
	s, patched := patchedSession(t, "mmv.cuh",
		"u8* ws = as + (c.ncols * seg * (int)sizeof(kb_q8a) + 15) / 16 * 16 + warp",
		"u8* ws = as + c.ncols * seg * (int)sizeof(kb_q8a) + warp", nil)
	var cases []harness.Case
	for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpMulMat}, Types: []quant.Type{quant.Q4_0}}) {
		if c.Name == "m=16,n=1,k=96" && c.Types[0] == quant.Q4_0 {
			cases = append(cases, c)
		}
	}
	if len(cases) != 1 {
		t.Fatalf("%d q4_0 cases m=16,n=1,k=96 in the matrix, want 1", len(cases))
	}
	after := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpRMSNorm}})[:3]
	for _, c := range harness.Cases() {
		if c.Op == ops.OpMulMat && c.Types[0] == quant.F32 && strings.Contains(c.Name, "n=1,") {
			after = append(after, c) // the patched module's other kernels
			break
		}
	}
	r := runSession(t, s, cases[0])
	if !*patched {
		t.Fatal("the patch did not apply")
	}
	why := r.Summary() + " " + r.Err
	for _, want := range []string{"CUDA_ERROR_MISALIGNED_ADDRESS", "kb_mmvq1_q4_0", "misaligned address: cp.async destination of 16 bytes", "8 bytes past a multiple of 16"} {
		if !strings.Contains(why, want) {
			t.Errorf("%s: %s, want %q", cases[0].ID(), why, want)
		}
	}
	if r.ContextLost != "CUDA_ERROR_MISALIGNED_ADDRESS" || s.Reopened != 1 {
		t.Errorf("context lost %q, %d backends reopened; want CUDA_ERROR_MISALIGNED_ADDRESS and 1", r.ContextLost, s.Reopened)
	}
	for _, c := range after {
		if r := runSession(t, s, c); !r.Passed() {
			t.Errorf("%s after the lost context: %s (%s)", c.ID(), r.Summary(), r.Err)
		}
	}
}

// TestMatmulInjectedBugs breaks the tiled float kernels (mul_mat_f.cu, the
// smallest module to rebuild) the way a kernel author might and checks
// that validation fails, for the injected bug: a tile loop one past its
// tile (the emulator reports the shared-memory overrun), a missing barrier
// between a k step's products and the next step's loads (a race), and a
// tensor-core fragment taking the wrong k half (wrong results, caught by
// the comparison), and in the integer kernel a step's tiles read without
// waiting for their cp.async copies (a race with the copies) and
// ldmatrix rows of the wrong k half (wrong results), in both of its
// templates (mmq, which q6_K takes in kb_mmq_*, and mmq32, q4_0's and
// q8_0's), the halves' scales swapped in mmq32's products of the formats
// with a scale per 16 (q6_K's), a row's first half taking its second
// half's min in the mins' product of the format with a scale and a min
// per 16 (q2_K's), and the same two in
// the large f16/bf16 tiles (the cases with 16-byte rows take them; want
// lists the accepted reasons, |-separated).
func TestMatmulInjectedBugs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		file     string
		old, new string
		mma      bool
		types    []quant.Type
		want     string
		// tile: the integer tile forced (tileAuto: the backend's
		// choice, which on the emulator counts its worker threads as
		// SMs), where the bug is in one of them alone.
		tile int
	}{
		{"tile off by one", "mul_mat_f.cu", "for (int job = tid; job < KB_BN * KB_HK; job += KB_NT) {", "for (int job = tid; job <= KB_BN * KB_HK; job += KB_NT) {",
			true, []quant.Type{quant.F16}, "out-of-bounds", tileAuto},
		{"missing barrier", "mul_mat_f.cu", "for (int i = 0; i < 32; i++) tot[i] += acc[i];\n\t\t__syncthreads();\n",
			"for (int i = 0; i < 32; i++) tot[i] += acc[i];\n",
			false, []quant.Type{quant.F32}, "shared-memory race", tileAuto},
		{"fragment k half", "mul_mat_f.cu", "u32 b[2] = {*(const u32*)&xs[col][ks + 2 * t], *(const u32*)&xs[col][ks + 2 * t + 8]};",
			"u32 b[2] = {*(const u32*)&xs[col][ks + 2 * t], *(const u32*)&xs[col][ks + 2 * t]};",
			true, []quant.Type{quant.BF16}, "NMSE", tileAuto},
		{"cp.async not waited for", "mmq.cuh", "kb_cp_async_wait<0>();\n\t\t__syncthreads();\n", "__syncthreads();\n",
			true, []quant.Type{quant.Q6_K}, "before the copy's cp.async.wait_group", tileSmall},
		{"k32 cp.async not waited for", "mmq32.cuh", "kb_cp_async_wait<0>();\n\t\t__syncthreads();\n\t\tif (raw) {\n\t\t\tif constexpr", "__syncthreads();\n\t\tif (raw) {\n\t\t\tif constexpr",
			true, []quant.Type{quant.Q4_0}, "before the copy's cp.async.wait_group", tileAuto},
		{"large tile cp.async not waited for", "mul_mat_f.cu", "kb_cp_async_wait<S - 2>();\n\t\t__syncthreads();\n", "__syncthreads();\n",
			true, []quant.Type{quant.F16}, "before the copy's cp.async.wait_group", tileAuto},
		{"large tile ldmatrix k half", "mul_mat_f.cu", "ks + ((lane >> 3) & 1)));", "ks));",
			true, []quant.Type{quant.BF16}, "NMSE|NaN/Inf mismatches", tileAuto},
		{"ldmatrix k half", "mmq.cuh", "[cc * 8 + 4 * ((lane >> 3) & 1)]);", "[cc * 8]);",
			true, []quant.Type{quant.Q6_K}, "NMSE", tileSmall},
		{"k16 half scales", "mmq32.cuh", "fmaf(lo, wd[mt][i >> 1], hi * wh[mt][i >> 1])", "fmaf(lo, wh[mt][i >> 1], hi * wd[mt][i >> 1])",
			true, []quant.Type{quant.Q6_K}, "NMSE", tileBig},
		{"kmin half mins", "mmq32.cuh", "const int am[4] = {(int)__byte_perm(mn[mt][0], 0u, 0x0000),", "const int am[4] = {(int)__byte_perm(mn[mt][0], 0u, 0x1111),",
			true, []quant.Type{quant.Q2_K}, "NMSE", tileBig},
		{"k32 ldmatrix k half", "mmq32.cuh", "(lane >> 4)][4 * ((lane >> 3) & 1)];", "(lane >> 4)][0];",
			true, []quant.Type{quant.Q8_0}, "NMSE", tileAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, patched := patchedSession(t, tc.file, tc.old, tc.new, func(b *Backend) ops.Backend {
				b.tiles.mmq = tc.tile
				return b
			})
			failed := 0
			withPaths(0, tc.mma, func() {
				for _, c := range matmulCases(tc.types...) {
					r := runSession(t, s, c)
					if r.Passed() {
						continue
					}
					failed++
					why := r.Summary() + " " + r.Err
					if !slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(why, w) }) {
						t.Errorf("%s fails, but not for the injected bug: %s (%s)", c.ID(), r.Summary(), r.Err)
					}
				}
			})
			if !*patched || failed == 0 {
				t.Errorf("the injected bug (applied %v) failed no case", *patched)
			}
		})
	}
}

// TestHTileChoice: MUL_MAT's f16/bf16 tile for the shapes the lead
// measures on an H200 (132 SMs), few tiles, and unaligned rows; and a
// backend's forced tile, which unaligned rows take only where it is the
// small one.
func TestHTileChoice(t *testing.T) {
	for _, tc := range []struct {
		m, n, batches int64
		sms           int
		aligned       bool
		want          hTile
	}{
		{4096, 4096, 1, 132, true, hTile128x128w4},
		{4096, 512, 1, 132, true, hTile128x128},
		{11008, 512, 1, 132, true, hTile128x128w4},
		{4096, 512, 1, 2, true, hTile128x128w4},
		{2048, 512, 1, 132, true, hTile128x64},
		{512, 64, 1, 132, true, hTileSmall},
		{4096, 512, 1, 132, false, hTileSmall},
		{64, 64, 70, 132, true, hTile128x64},
	} {
		if got := hTileFor(tc.m, tc.n, tc.batches, tc.sms, tc.aligned); got != tc.want {
			t.Errorf("m=%d n=%d batches=%d sms=%d aligned=%v: %s, want %s", tc.m, tc.n, tc.batches, tc.sms, tc.aligned, got.Name, tc.want.Name)
		}
	}
	for _, tc := range []struct {
		force   hTile
		aligned bool
		want    hTile
	}{
		{hTile{}, true, hTile128x128w4},
		{hTile128x64, true, hTile128x64},
		{hTile128x64, false, hTileSmall},
		{hTileSmall, true, hTileSmall},
		{hTileSmall, false, hTileSmall},
	} {
		b := &Backend{info: deviceInfo{SMs: 132}, tiles: tileForce{half: tc.force}}
		if got := b.halfTile(4096, 4096, 1, tc.aligned); got != tc.want {
			t.Errorf("forced %q, aligned %v: %s, want %s", tc.force.Name, tc.aligned, got.Name, tc.want.Name)
		}
	}
}

// TestMatmulHalfTiles runs f16 and bf16 products with 16-byte rows
// through each tile forced: partial tiles in rows, columns and k (k a
// multiple of 8, not of the 32-element step), fewer k steps than
// pipeline stages, broadcast batches, f16 activations; and MUL_MAT_ID
// over them: experts with more pairs than one tile's columns, one
// activation row per used expert or one shared, experts no token uses.
func TestMatmulHalfTiles(t *testing.T) {
	b := emulated(t)
	uni := harness.Uniform(-1, 1)
	var cases []harness.Case
	for _, wt := range []quant.Type{quant.F16, quant.BF16} {
		for _, s := range []struct {
			m, n, k, a2, b2, b3 int64
			xt                  quant.Type
		}{
			{200, 150, 256, 1, 1, 1, quant.F32},
			{130, 70, 40, 1, 1, 1, quant.F32},
			{16, 9, 8, 1, 1, 1, quant.F16},
			{13, 20, 96, 2, 2, 3, quant.F32},
		} {
			cases = append(cases, harness.Case{
				Name: fmt.Sprintf("m=%d,n=%d,k=%d,a=%dx1,b=%dx%d,x=%v", s.m, s.n, s.k, s.a2, s.b2, s.b3, s.xt), Op: ops.OpMulMat, Types: []quant.Type{wt, s.xt},
				Build: func(bd *harness.Builder) (*ops.Tensor, error) {
					return ops.MulMat(bd.Leaf("a", wt, uni, s.k, s.m, s.a2, 1), bd.Leaf("b", s.xt, uni, s.k, s.n, s.b2, s.b3))
				}})
		}
		for _, s := range []struct{ m, k, nExp, used, b1, tokens, pool int64 }{
			{130, 40, 3, 2, 2, 150, 3}, // 100 pairs an expert
			{70, 96, 8, 2, 1, 140, 3},  // 3 of 8 experts, one shared row
			{16, 8, 4, 4, 4, 9, 4},
		} {
			cases = append(cases, harness.Case{
				Name: fmt.Sprintf("m=%d,k=%d,experts=%d,used=%d,b1=%d,tokens=%d,pool=%d", s.m, s.k, s.nExp, s.used, s.b1, s.tokens, s.pool),
				Op:   ops.OpMulMatID, Types: []quant.Type{wt},
				Build: func(bd *harness.Builder) (*ops.Tensor, error) {
					return ops.MulMatID(bd.Leaf("experts", wt, uni, s.k, s.m, s.nExp), bd.Leaf("b", quant.F32, uni, s.k, s.b1, s.tokens),
						bd.Leaf("ids", quant.I32, harness.DistinctInts(0, s.pool), s.used, s.tokens))
				}})
		}
	}
	for _, tile := range []hTile{hTile128x128, hTile128x128w4, hTile128x64, hTileSmall} {
		t.Run(tile.Name, func(t *testing.T) {
			old := b.tiles.half
			b.tiles.half = tile
			defer func() { b.tiles.half = old }()
			launches := func() int {
				n := 0
				for _, wt := range []quant.Type{quant.F16, quant.BF16} {
					if f := b.funcs[tile.Name+wt.String()]; f != nil {
						n += f.launches
					}
				}
				return n
			}
			before := launches()
			for _, c := range cases {
				if r := harness.Run(b, c); !r.Passed() {
					t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
				}
			}
			if n := launches() - before; n < len(cases) {
				t.Errorf("%d launches of the forced tile for %d cases (16-byte rows)", n, len(cases))
			}
		})
	}
}

// TestKSplits: the integer MUL_MAT's k splits: as many as fill the SMs
// in one wave, a split four steps or more, none where the blocks fill
// the SMs or k is short; forced counts up to one split a step; and each
// split's run of whole steps, none empty.
func TestKSplits(t *testing.T) {
	for _, tc := range []struct {
		blocks, kc int64
		sms        int
		force      int64
		want       int64
	}{
		{32, 448, 132, 0, 4},  // m=4096 n=64 k=14336 on 128-row tiles
		{64, 448, 132, 0, 2},  // on 64-row tiles
		{256, 448, 132, 0, 1}, // the SMs are full
		{2, 32, 132, 0, 2},    // k=1024: 8 steps
		{1, 8, 132, 0, 1},     // k=256: 2 steps
		{1, 4096, 132, 0, 132},
		{1000, 448, 132, 3, 3}, // forced
		{1, 3, 132, 8, 1},      // forced, one step
		{1, 448, 132, 1, 1},    // forced off
	} {
		if got := kSplits(tc.blocks, tc.kc, tc.sms, tc.force); got != tc.want {
			t.Errorf("kSplits(%d, %d, %d, %d) = %d, want %d", tc.blocks, tc.kc, tc.sms, tc.force, got, tc.want)
		}
	}
	for _, tc := range []struct{ kc, n, chunks, runs int64 }{
		{448, 4, 112, 4},
		{33, 3, 12, 3},
		{20, 4, 8, 3}, // 5 steps in runs of 2: 3 runs
		{40, 4, 12, 4},
		{3, 1, 4, 1},
	} {
		chunks, runs := kRun(tc.kc, tc.n)
		if chunks != tc.chunks || runs != tc.runs {
			t.Errorf("kRun(%d, %d) = %d, %d, want %d, %d", tc.kc, tc.n, chunks, runs, tc.chunks, tc.runs)
		}
		if chunks%kStep != 0 || (runs-1)*chunks >= tc.kc || runs*chunks < tc.kc {
			t.Errorf("kRun(%d, %d) = %d, %d: not whole steps, or an empty or missing run", tc.kc, tc.n, chunks, runs)
		}
	}
}

// TestTileForSplit: the integer MUL_MAT's tile and split on an H100's
// 132 SMs: the big tile split where its blocks are few, unsplit where
// they fill the SMs; no split for MUL_MAT_ID, nor with the split forced
// off (then the small tile, as before split-k).
func TestTileForSplit(t *testing.T) {
	for _, tc := range []struct {
		m, colTiles, kc int64
		split           bool
		force           tileForce
		name            string
		splits          int64
	}{
		{4096, 1, 448, true, tileForce{}, "kb_mmq128_q4_0", 4},
		{4096, 8, 448, true, tileForce{}, "kb_mmq128_q4_0", 1},
		{4096, 1, 448, false, tileForce{}, "kb_mmq_q4_0", 1},
		{4096, 1, 448, true, tileForce{split: 1}, "kb_mmq_q4_0", 1},
		{4096, 1, 448, true, tileForce{mmq: tileSmall}, "kb_mmq_q4_0", 2},
		{4096, 1, 8, true, tileForce{}, "kb_mmq_q4_0", 1}, // k=256
		{200, 1, 32, true, tileForce{}, "kb_mmq128_q4_0", 2},
	} {
		b := &Backend{info: deviceInfo{Major: 9, SMs: 132}, tiles: tc.force}
		tl := b.tileFor(quant.Q4_0, "kb_mmq_q4_0", false, hTile{}, tc.m, tc.colTiles, tc.kc, tc.split)
		if tl.name != tc.name || tl.splits != tc.splits {
			t.Errorf("m=%d colTiles=%d kc=%d split=%v forced %+v: %s split %d, want %s split %d",
				tc.m, tc.colTiles, tc.kc, tc.split, tc.force, tl.name, tl.splits, tc.name, tc.splits)
		}
	}
}

// TestMmqSplitK runs integer MUL_MAT products split over k on the
// emulator: every integer type through both tensor-core tiles and the
// dp4a kernels with 4 splits forced (runs ending inside a 256-element
// block, the last one short, partial tiles, batches), and shapes whose
// few blocks split by themselves on an H100 (a long k, and a short one);
// each sums its partials with kb_mmq_splitk_sum.
func TestMmqSplitK(t *testing.T) {
	b := emulated(t)
	uni := harness.Uniform(-1, 1)
	mm := func(wt quant.Type, m, n, k, b2 int64) harness.Case {
		return harness.Case{
			Name: fmt.Sprintf("m=%d,n=%d,k=%d,b=%dx1", m, n, k, b2), Op: ops.OpMulMat, Types: []quant.Type{wt, quant.F32},
			Build: func(bd *harness.Builder) (*ops.Tensor, error) {
				return ops.MulMat(bd.Leaf("a", wt, uni, k, m, 1, 1), bd.Leaf("b", quant.F32, uni, k, n, b2, 1))
			}}
	}
	var forced []harness.Case
	for _, ty := range quant.Types() {
		if !intPath(ty) {
			continue
		}
		k := int64(800)
		if ty.BlockSize() == 256 {
			k = 1280 // 40 chunks: runs of 12
		}
		forced = append(forced, mm(ty, 70, 20, k, 2))
	}
	sums := func() int {
		if f := b.funcs["kb_mmq_splitk_sum"]; f != nil {
			return f.launches
		}
		return 0
	}
	run := func(t *testing.T, cases []harness.Case) {
		t.Helper()
		before := sums()
		for _, c := range cases {
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%s %v: %s (%s)", c.ID(), c.Types, r.Summary(), r.Err)
			}
		}
		if n := sums() - before; n < len(cases) {
			t.Errorf("%d split-k sums for %d cases", n, len(cases))
		}
	}
	for _, p := range []struct {
		name string
		mma  bool
		tile int
	}{{"small", true, tileSmall}, {"big", true, tileBig}, {"dp4a", false, tileAuto}} {
		t.Run("forced "+p.name, func(t *testing.T) {
			old := b.tiles
			b.tiles.mmq, b.tiles.split = p.tile, 4
			defer func() { b.tiles = old }()
			withPaths(8, p.mma, func() { run(t, forced) })
		})
	}
	// The emulated device reports its worker threads as SMs: the choice
	// is made for an H100's 132.
	t.Run("auto", func(t *testing.T) {
		sms := b.info.SMs
		b.info.SMs = 132
		defer func() { b.info.SMs = sms }()
		run(t, []harness.Case{mm(quant.Q4_0, 256, 16, 4096, 1), mm(quant.Q8_0, 128, 24, 1024, 1)})
	})
}
