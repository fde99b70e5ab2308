package metal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/internal/gpu/gputest"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/simt"
)

// emulated opens metal-emu for t (gputest.Emulated).
func emulated(t *testing.T) *Backend {
	t.Helper()
	return gputest.Emulated(t, OpenEmulated)
}

// TestRegistered checks the entry and its targets: metal-gpu, which says
// why it cannot open off macOS, and metal-emu, available with the
// emulator and never the default.
func TestRegistered(t *testing.T) {
	e, err := registry.Lookup("metal")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range e.Targets() {
		names = append(names, tg.Name())
	}
	if strings.Join(names, " ") != "metal-gpu metal-emu" {
		t.Errorf("targets %v, want metal-gpu metal-emu", names)
	}
	emu, err := registry.Resolve("metal-emu", "")
	if err != nil {
		t.Fatal(err)
	}
	if simt.Available() == nil && emu.Err() != nil {
		t.Errorf("metal-emu unavailable although the emulator is: %v", emu.Err())
	}
	if runtime.GOOS != "darwin" {
		gpu, _ := registry.Resolve("metal-gpu", "")
		if why := gpu.Err(); why == nil || !strings.Contains(why.Error(), "not darwin") {
			t.Errorf("metal-gpu: reason %v, want one saying not darwin", why)
		}
		// "metal" alone is the GPU: it says why it cannot open and does
		// not fall back to the emulator.
		b, err := registry.Open("metal", registry.Config{})
		var ue *registry.UnavailableError
		if b != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "not darwin") ||
			!strings.Contains(err.Error(), "metal-emu runs the kernels on the SIMT emulator") {
			t.Errorf("Open(metal): %v, %v; want an UnavailableError saying not darwin", b, err)
		}
	}
}

func TestEmulatedBackend(t *testing.T) {
	b := emulated(t)
	if !b.Emulated() || b.Name() != "metal-emu" || !strings.Contains(b.Describe(), "SIMT emulator") {
		t.Errorf("backend %s: emulated %v, %s", b.Name(), b.Emulated(), b.Describe())
	}
	var _ ops.GraphComputer = b
	var _ ops.Synchronizer = b
	var _ ops.DeviceTimer = b
	var _ ops.RepeatTimer = b
	cases := harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{ops.OpAdd}})
	for _, c := range cases {
		if r := harness.Run(b, c); !r.Passed() {
			t.Errorf("%s: %s (%s)", c.ID(), r.Summary(), r.Err)
		}
	}
	// Two nodes in one submission, timed per node when asked.
	b.SetNodeTiming(true)
	defer b.SetNodeTiming(false)
	alloc := func(n int64) ops.Buffer {
		buf, err := b.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		return buf
	}
	x, _ := ops.NewTensor("x", 0, 64)
	x.Buffer = alloc(4 * 64)
	y, _ := ops.Scale(x, 2, 1)
	y.Buffer = alloc(4 * 64)
	z, _ := ops.Silu(y)
	zbuf := alloc(4 * 64)
	z.Buffer = zbuf
	if err := b.ComputeGraph([]*ops.Tensor{y, z}); err != nil {
		t.Fatal(err)
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
	if v := math.Float32frombits(binary.LittleEndian.Uint32(out)); v < 0.7310585 || v > 0.7310587 {
		t.Errorf("silu(scale(0)) = %v", v)
	}
	// A read-only host buffer (a model's weights) is made device memory
	// once and kept.
	host := ops.WrapHostBytesReadOnly(make([]byte, 4*64))
	w, _ := ops.NewTensor("w", 0, 64)
	w.Buffer = host
	s, _ := ops.Add(w, x)
	s.Buffer = alloc(4 * 64)
	for range 2 {
		if err := b.Compute(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if n := b.res.Kept(); n != 1 {
		t.Errorf("%d uploads of one read-only buffer", n)
	}
	// The repeat timer sums the command buffers' times.
	if d, err := b.TimeRepeated(s, 3); err != nil || d <= 0 {
		t.Errorf("TimeRepeated: %v, %v", d, err)
	}
}

// TestInlineIncludes checks the source a Mac compiles: headers inlined
// once, with #line directives so messages name the right file and line.
func TestInlineIncludes(t *testing.T) {
	headers := map[string][]byte{
		"a.h": []byte("#pragma once\n#include \"b.h\"\nint a;\n"),
		"b.h": []byte("#pragma once\nint b;\n"),
	}
	src := []byte("#include <metal_stdlib>\n#include \"a.h\"\n#include \"b.h\"\nkernel void k() {}\n")
	out, err := inlineIncludes("k.metal", src, headers)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Count(s, "int b;") != 1 || strings.Count(s, "int a;") != 1 || !strings.Contains(s, "#include <metal_stdlib>") ||
		!strings.Contains(s, "#line 4 \"k.metal\"\nkernel void k") {
		t.Errorf("inlined source:\n%s", s)
	}
	if _, err := inlineIncludes("k.metal", []byte("#include \"nope.h\"\n"), headers); err == nil {
		t.Error("a missing header is no error")
	}
	// Every kernel file inlines.
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	for name := range srcs {
		if !strings.HasSuffix(name, ".metal") {
			continue
		}
		main, hs, err := program(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inlineIncludes(name, main, hs); err != nil {
			t.Error(err)
		}
	}
}

// TestInjectedKernelBugs breaks a kernel's source the way a kernel author
// might and checks that validation fails, for the injected bug: a
// missing threadgroup barrier in a threadgroup reduction (the emulator
// reports the race), a wrong simdgroup reduction (a butterfly that stops
// one step early, so each simdgroup sums only 16 of its 32 lanes: the
// results are wrong), an off-by-one bound (an out-of-bounds access) and
// an unused read past an input's end (the emulator's bounds check).
func TestInjectedKernelBugs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file, old string
		new       string
		op        ops.Op
		want      string // what the failures must say (one of |-separated strings)
		checked   bool   // needs the emulator's memory checks
	}{
		{"missing barrier", "common.h",
			"if (tiisg == 0) scratch[sgitg] = v;\n\tthreadgroup_barrier(mem_flags::mem_threadgroup);\n\tv = tiisg < nsg ? scratch[tiisg] : 0.0f;",
			"if (tiisg == 0) scratch[sgitg] = v;\n\tv = tiisg < nsg ? scratch[tiisg] : 0.0f;",
			ops.OpRMSNorm, "shared-memory race", true},
		{"wrong simdgroup reduction", "common.h",
			"inline float kb_tg_sum(float v, threadgroup float *scratch, ushort sgitg, ushort tiisg, ushort nsg) {\n\tv = simd_sum(v);",
			"inline float kb_tg_sum(float v, threadgroup float *scratch, ushort sgitg, ushort tiisg, ushort nsg) {\n\tfor (ushort o = 8; o > 0; o >>= 1) v += simd_shuffle_xor(v, o);",
			ops.OpRMSNorm, "NMSE", false},
		{"off-by-one bound", "elementwise.metal",
			"for (long i0 = tpitg; i0 < args.d.ne[0]; i0 += ntg) {\n\t\tfloat x = *(device const float *)(ar + i0 * args.a.nb[0]);\n\t\tfloat y = args.op",
			"for (long i0 = tpitg; i0 <= args.d.ne[0]; i0 += ntg) {\n\t\tfloat x = *(device const float *)(ar + i0 * args.a.nb[0]);\n\t\tfloat y = args.op",
			// Past a row's end is the next row's first element, which
			// another threadgroup writes: a global-memory race, or, past
			// the last row, an out-of-bounds access.
			ops.OpScale, "out-of-bounds|global-memory race", true},
		// A read 4 bytes past the last element whose value is never used
		// (the results stay right): metal-emu's tensors have no guard
		// bytes (Backend.ChecksBounds), so it reaches the red zone.
		{"read past the input's end", "elementwise.metal",
			"float x = *(device const float *)(ar + i0 * args.a.nb[0]);\n\t\tfloat y = args.op",
			"float x = *(device const float *)(ar + i0 * args.a.nb[0]);\n" +
				"\t\tif (i0 == args.d.ne[0] - 1) { volatile float past = *(device const float *)(ar + i0 * args.a.nb[0] + 4); (void)past; }\n" +
				"\t\tfloat y = args.op",
			ops.OpScale, "out-of-bounds read of 4 bytes in kernel kb_unary_f32", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := emulated(t)
			dev := b.dev.(*emuDevice)
			if tc.checked && dev.mode != simt.Checked {
				t.Skip("the emulator's memory checks are off ($KERNBENCH_SIMT_MODE=fast)")
			}
			applied := false
			dev.patch = func(name string, src []byte) []byte {
				if name != tc.file {
					return src
				}
				if !strings.Contains(string(src), tc.old) {
					t.Fatalf("%s no longer contains the code the test breaks:\n%s", tc.file, tc.old)
				}
				applied = true
				return []byte(strings.Replace(string(src), tc.old, tc.new, 1))
			}
			failed := 0
			for _, c := range harness.Select(harness.Cases(), harness.Filter{Ops: []ops.Op{tc.op}}) {
				if len(c.Plants) > 0 {
					continue // a non-finite case shows a wrong sum as a NaN/Inf mismatch
				}
				r := harness.Run(b, c)
				if r.Passed() {
					continue
				}
				failed++
				// The emulator's checks, the harness's guard bytes past
				// the output or the comparison must name the bug.
				why := r.Summary() + " " + r.Err
				named := false
				for _, w := range strings.Split(tc.want, "|") {
					named = named || strings.Contains(why, w)
				}
				if !named {
					t.Errorf("%s fails, but not for the injected bug: %s (%s)", c.ID(), r.Summary(), r.Err)
				}
			}
			if !applied || failed == 0 {
				t.Errorf("the injected bug (applied %v) failed no case", applied)
			}
		})
	}
}

// TestCaptureNeedsAGPU checks that metal-emu refuses a GPU capture with
// the reason, and that node labels are the dot dump's.
func TestCaptureNeedsAGPU(t *testing.T) {
	b := emulated(t)
	stop, err := b.StartCapture(t.TempDir() + "/x.gputrace")
	if stop != nil || err == nil || !strings.Contains(err.Error(), "captures need a Mac's GPU") {
		t.Errorf("StartCapture on metal-emu: %v", err)
	}
	a, _ := ops.NewTensor("a", 0, 64, 2)
	x, _ := ops.NewTensor("x", 0, 64, 3)
	y, _ := ops.MulMat(a, x)
	y.SetName("kq")
	if got := nodeLabel(y); got != "kq MUL_MAT(f32)" {
		t.Errorf("label %q", got)
	}
}

// TestCpyQuantizersMatchQuant copies rows into every quantized type CPY
// writes and checks the bytes are quant.QuantizeRow's, for values of
// several scales, a block of zeros and a block of one value (the
// quantizers' edge paths): the K formats' scale searches included, which
// the harness's cases reach only for q4_K and q6_K.
func TestCpyQuantizersMatchQuant(t *testing.T) {
	b := emulated(t)
	const n = 4 * 256
	x := make([]float32, n)
	r := rand.New(rand.NewPCG(7, 9))
	for i := range x {
		switch {
		case i < 256:
			x[i] = float32(r.NormFloat64())
		case i < 512:
			x[i] = float32(r.NormFloat64() * 1e-3 * float64(1+i%7))
		case i < 768:
			x[i] = float32(r.Float64()*100 - 20)
		case i < 768+128:
			x[i] = 0
		default:
			x[i] = 0.75
		}
	}
	raw := make([]byte, 4*n)
	for i, v := range x {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	for _, typ := range cpyQuantTypes {
		src, _ := ops.NewTensor("src", quant.F32, n)
		dst, _ := ops.NewTensor("dst", typ, n)
		for _, tt := range []*ops.Tensor{src, dst} {
			if err := ops.AllocTensor(b, tt, 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := src.Buffer.WriteAt(raw, 0); err != nil {
			t.Fatal(err)
		}
		c, err := ops.Cpy(src, dst)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Compute(c); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		got := make([]byte, dst.Bytes())
		if _, err := dst.Buffer.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, dst.Bytes())
		if err := quant.QuantizeRow(typ, x, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%v: byte %d (block %d) is %#x, quant writes %#x", typ, i, i/int(typ.TypeSize()), got[i], want[i])
					break
				}
			}
		}
	}
}

// TestArgsortLongRows sorts rows longer than threadgroup memory holds (in
// device memory, a dispatch per stage) in both orders, with ties and
// NaNs, against a stable sort on the host.
func TestArgsortLongRows(t *testing.T) {
	b := emulated(t)
	const n, rows = 3000, 2
	vals := make([]float32, n*rows)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range vals {
		vals[i] = float32(r.IntN(50))
		if i%97 == 0 {
			vals[i] = float32(math.NaN())
		}
	}
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	for _, order := range []ops.SortOrder{ops.SortAsc, ops.SortDesc} {
		a, _ := ops.NewTensor("a", quant.F32, n, rows)
		if err := ops.AllocTensor(b, a, 0); err != nil {
			t.Fatal(err)
		}
		a.Buffer.WriteAt(raw, 0)
		s, err := ops.Argsort(a, order)
		if err != nil {
			t.Fatal(err)
		}
		if err := ops.AllocTensor(b, s, 0); err != nil {
			t.Fatal(err)
		}
		if err := b.Compute(s); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4*n*rows)
		if _, err := s.Buffer.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		for row := range rows {
			x := vals[row*n : (row+1)*n]
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			less := func(p, q int) bool {
				vp, vq := x[p], x[q]
				np, nq := math.IsNaN(float64(vp)), math.IsNaN(float64(vq))
				if order == ops.SortDesc {
					vp, vq, np, nq = vq, vp, nq, np
				}
				if np || nq {
					return np && !nq
				}
				return vp < vq
			}
			sort.SliceStable(want, func(i, j int) bool { return less(want[i], want[j]) })
			for i, w := range want {
				if g := int(int32(binary.LittleEndian.Uint32(got[4*(row*n+i):]))); g != w {
					t.Fatalf("%v row %d: index %d is %d, want %d", order, row, i, g, w)
				}
			}
		}
	}
}

// TestFlashAttnHeadSizes validates both attention kernels (the vector one
// for a query or two, the query tiles from four) at head sizes the
// harness's default cases lack: 256 (the largest the kernels take), and
// a K head of 256 with a V head of 64.
func TestFlashAttnHeadSizes(t *testing.T) {
	b := emulated(t)
	for _, kv := range []quant.Type{quant.F16, quant.Q4_0, quant.F32} {
		for _, s := range []struct{ d, dv, nq int64 }{{256, 256, 2}, {256, 256, 9}, {256, 64, 5}, {128, 128, 12}} {
			c := harness.Case{
				Name: fmt.Sprintf("d=%d,dv=%d,nq=%d", s.d, s.dv, s.nq), Op: ops.OpFlashAttnExt, Types: []quant.Type{kv},
				Build: func(hb *harness.Builder) (*ops.Tensor, error) {
					q := hb.Leaf("q", quant.F32, harness.Uniform(-1, 1), s.d, s.nq, 4)
					k := hb.Leaf("k", kv, harness.Uniform(-1, 1), s.d, 37, 2)
					v := hb.Leaf("v", kv, harness.Uniform(-1, 1), s.dv, 37, 2)
					m := hb.Leaf("mask", quant.F16, harness.Causal(), 37, s.nq)
					sk := hb.Leaf("sinks", quant.F32, harness.Normal(0, 2), 4)
					return ops.FlashAttnExt(q, k, v, m, sk, ops.FlashAttnParams{Scale: 0.0625, Softcap: 20})
				},
			}
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%v %s: %s (%s)", kv, c.Name, r.Summary(), r.Err)
			}
		}
	}
}

// TestFlashAttnPrefillGQA validates the prefill kernel where one
// threadgroup takes the query heads of a GQA group together: groups of 4
// and 3 heads (12 and 6 heads over 3 and 2 K/V heads, so ALiBi's two
// slope series both occur), query counts whose rows (heads times
// queries) do not fill whole simdgroups, with ALiBi over a random f32
// mask, softcap and sinks, each head's own.
func TestFlashAttnPrefillGQA(t *testing.T) {
	b := emulated(t)
	for _, kv := range []quant.Type{quant.F16, quant.Q8_0, quant.F32} {
		for _, s := range []struct{ heads, kvHeads, nq int64 }{{12, 3, 5}, {6, 2, 9}, {12, 3, 4}} {
			c := harness.Case{
				Name: fmt.Sprintf("heads=%d/%d,nq=%d", s.heads, s.kvHeads, s.nq), Op: ops.OpFlashAttnExt, Types: []quant.Type{kv},
				Build: func(hb *harness.Builder) (*ops.Tensor, error) {
					q := hb.Leaf("q", quant.F32, harness.Uniform(-1, 1), 64, s.nq, s.heads)
					k := hb.Leaf("k", kv, harness.Uniform(-1, 1), 64, 45, s.kvHeads)
					v := hb.Leaf("v", kv, harness.Uniform(-1, 1), 64, 45, s.kvHeads)
					m := hb.Leaf("mask", quant.F32, harness.Mask(0.2, -4, 0), 45, s.nq)
					sk := hb.Leaf("sinks", quant.F32, harness.Normal(0, 2), s.heads)
					return ops.FlashAttnExt(q, k, v, m, sk, ops.FlashAttnParams{Scale: 0.125, Softcap: 20, MaxBias: 8})
				},
			}
			if r := harness.Run(b, c); !r.Passed() {
				t.Errorf("%v %s: %s (%s)", kv, c.Name, r.Summary(), r.Err)
			}
		}
	}
}
