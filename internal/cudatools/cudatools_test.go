package cudatools

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The testdata files are the real tools' output, captured from NVRTC
// 11.8 (its log with --ptxas-options=-v) and cuobjdump 11.8 -sass on
// the cubins it built from ops/cuda/kernels:
//
//	softmax.sm_80.ptxas   soft_max.cu (then softmax.cu) for sm_80
//	matmul_q.sm_80.ptxas  matmul_q.cu for sm_80
//	spill.sm_80.ptxas     soft_max.cu (then softmax.cu) for sm_80 with --maxrregcount=16
//	norm.sm_90.ptxas      rms_norm.cu (then norm.cu) for sm_90
//	norm.sm_90.sass       the same build's listing
//	mmq_dp4a_q4_0.sm_80.sass  matmul_q.cu for sm_80: the listing's header
//	                      and kb_mmq_dp4a_q4_0 only
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParsePtxasReport(t *testing.T) {
	tests := []struct {
		file          string
		count, spills int
		// one function's expected report
		want Resources
	}{
		{"softmax.sm_80.ptxas", 3, 0, Resources{Name: "kb_soft_max_f32", Arch: "sm_80", Registers: 28, SharedStatic: 128, Constant0: 660, Barriers: -1}},
		{"matmul_q.sm_80.ptxas", 20, 0, Resources{Name: "kb_mmq_dp4a_q6_K", Arch: "sm_80", Registers: 96, SharedStatic: 26624, Constant0: 576, Barriers: -1}},
		{"matmul_q.sm_80.ptxas", 20, 0, Resources{Name: "kb_mmq_q4_K", Arch: "sm_80", Registers: 75, SharedStatic: 26624, Constant0: 576, Barriers: -1}},
		// ptxas raised the register limit to 24 (a warning line) and spilled
		// in two of the three kernels.
		// NVRTC 13's ptxas (CUDA 13.0, on an H200) adds "used N barriers"
		// and no cmem line.
		{"argsort.sm_90.nvrtc13.ptxas", 5, 0, Resources{Name: "kb_argsort_tiles", Arch: "sm_90", Registers: 24, Barriers: 1}},
		{"argsort.sm_90.nvrtc13.ptxas", 5, 0, Resources{Name: "kb_argsort_keys", Arch: "sm_90", Registers: 38, Barriers: 0}},
		// ... and "N bytes cumulative stack size" where a function uses the
		// stack (rope's trigonometric slow path).
		{"rope.sm_80.nvrtc13.ptxas", 1, 0, Resources{Name: "kb_rope_f32", Arch: "sm_80", Registers: 37, StackFrame: 40, Constant0: 704, Barriers: 1, CumulativeStack: 40}},
		{"spill.sm_80.ptxas", 3, 2, Resources{Name: "kb_soft_max_f32_mask_f16", Arch: "sm_80", Registers: 24, StackFrame: 24, SpillStores: 48, SpillLoads: 28, SharedStatic: 128, Constant0: 660, Barriers: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.want.Name, func(t *testing.T) {
			fns, err := ParsePtxasReport(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(fns) != tt.count {
				t.Errorf("%d functions, want %d", len(fns), tt.count)
			}
			found, spills := false, 0
			for _, f := range fns {
				if f.Name == tt.want.Name {
					found = true
					if f != tt.want {
						t.Errorf("got %+v\nwant %+v", f, tt.want)
					}
				}
				if f.Spills() {
					spills++
				}
			}
			if spills != tt.spills {
				t.Errorf("%d functions spill, want %d", spills, tt.spills)
			}
			if !found {
				t.Errorf("no function %s", tt.want.Name)
			}
		})
	}
}

func TestParsePtxasReportErrors(t *testing.T) {
	good := readTestdata(t, "softmax.sm_80.ptxas")
	tests := []struct {
		name, text, want string
	}{
		{"cut short", good[:strings.LastIndex(good, "ptxas info    : Used")], "cut short"},
		{"bad frame", strings.Replace(good, "0 bytes spill stores", "x bytes spill stores", 1), "cannot read"},
		{"bad used", strings.Replace(good, "128 bytes smem", "128 kB smem", 1), "cannot read \"128 kB smem\""},
		{"no frame", strings.Replace(good, "Function properties for kb_soft_max_f32_mask_f16", "Function properties for other", 1), "no stack frame"},
		{"bad barriers", strings.Replace(readTestdata(t, "argsort.sm_90.nvrtc13.ptxas"), "used 1 barriers", "used some barriers", 1), "cannot read \"used some barriers\""},
		{"used first", "ptxas info    : Used 4 registers\n", "before any entry function"},
		{"fatal", "ptxas fatal   : Unresolved extern function 'f'\n", "Unresolved extern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePtxasReport(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if fns, err := ParsePtxasReport(""); err != nil || len(fns) != 0 {
		t.Errorf("empty report: %v, %v", fns, err)
	}
}

func TestParseSASS(t *testing.T) {
	// The counts were taken from the same files with grep, independently
	// of the parser.
	tests := []struct {
		file, fn, arch string
		funcs, total   int
		opcodes        map[string]int
		mix            map[string]int
	}{
		{"norm.sm_90.sass", "kb_rms_norm_f32", "sm_90", 1, 640,
			map[string]int{"FFMA": 27, "LDG.E": 2, "STG.E": 1, "BAR.SYNC": 2, "SHFL.BFLY": 10},
			map[string]int{"FFMA": 32, "LDG32": 2, "STG": 1, "SHFL": 10, "BAR": 2, "IDP.4A": 0, "HMMA": 0, "LDG128": 0}}, // FFMA: 27 plain, 5 with rounding modes
		{"mmq_dp4a_q4_0.sm_80.sass", "kb_mmq_dp4a_q4_0", "sm_80", 1, 1280,
			map[string]int{"IDP.4A.S8.S8": 128, "FFMA": 64, "LDG.E.U16": 9, "LDG.E": 15, "LDS.64": 41, "LDS.128": 12, "STS.128": 7, "BAR.SYNC": 3, "STG.E": 32},
			map[string]int{"IDP.4A": 128, "FFMA": 64, "LDG16": 9, "LDG32": 15, "STG": 32, "LDGSTS": 0, "LDSM": 0, "IMMA": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			fns, err := ParseSASS(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(fns) != tt.funcs {
				t.Fatalf("%d functions, want %d", len(fns), tt.funcs)
			}
			f := fns[0]
			if f.Name != tt.fn || f.Arch != tt.arch || f.Total != tt.total {
				t.Errorf("%s %s %d instructions, want %s %s %d", f.Name, f.Arch, f.Total, tt.fn, tt.arch, tt.total)
			}
			sum := 0
			for _, n := range f.Opcodes {
				sum += n
			}
			if sum != f.Total {
				t.Errorf("opcode counts sum to %d, total %d", sum, f.Total)
			}
			for op, n := range tt.opcodes {
				if f.Opcodes[op] != n {
					t.Errorf("%s: %d, want %d", op, f.Opcodes[op], n)
				}
			}
			mix := f.Mix()
			for c, n := range tt.mix {
				if mix[c] != n {
					t.Errorf("class %s: %d, want %d", c, mix[c], n)
				}
			}
			// BAR's class also holds BAR.SYNC.DEFER_BLOCKING etc.
			if mix["BAR"] < tt.opcodes["BAR.SYNC"] {
				t.Errorf("class BAR %d < BAR.SYNC %d", mix["BAR"], tt.opcodes["BAR.SYNC"])
			}
			if ops := f.SortedOpcodes(); f.Opcodes[ops[0]] < f.Opcodes[ops[len(ops)-1]] {
				t.Errorf("SortedOpcodes not by count: %v", ops[:3])
			}
		})
	}
}

func TestParseSASSErrors(t *testing.T) {
	good := readTestdata(t, "norm.sm_90.sass")
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "no functions"},
		{"instruction first", "        /*0000*/   MOV R1, R2 ;\n", "before any"},
		{"garbled", strings.Replace(good, "/*0010*/                   ULDC", "/*0010*/                   uldc", 1), "line 7: cannot read"},
		{"no instructions", "\tcode for sm_90\n\t\tFunction : f\n", "no instructions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSASS(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestWidth(t *testing.T) {
	for op, want := range map[string]int{
		"LDG.E": 32, "LDG.E.U8": 8, "LDG.E.S8": 8, "LDG.E.U16": 16, "LDG.E.64": 64,
		"LDG.E.128.CONSTANT": 128, "LDG.E.EF.128": 128, "LDG.E.64.STRONG.GPU": 64,
	} {
		if got := width(op); got != want {
			t.Errorf("width(%s) = %d, want %d", op, got, want)
		}
	}
}

// TestOccupancy checks the occupancy against values worked out by hand
// the way NVIDIA's occupancy calculator does (cuda_occupancy.h): registers
// per warp rounded up to 256 and whole warps per sub-partition; shared
// memory per block plus the 1 KB system reserve, rounded up to 128 bytes.
func TestOccupancy(t *testing.T) {
	tests := []struct {
		gpu                   string
		regs, threads, shared int
		blocks, warps         int
		fraction              float64
		limiter               string
	}{
		// 256 threads, 32 registers: 8 warps a block, 64 warps fit.
		{"H100", 32, 256, 0, 8, 64, 1, "threads"},
		// 64 registers: 2048 a warp, 8 warps per sub-partition, 32 an SM.
		{"H100", 64, 256, 0, 4, 32, 0.5, "registers"},
		// 174 registers (5568, rounded to 5632 a warp): 2 warps per
		// sub-partition, 8 an SM, 2 blocks of 4 warps.
		{"H100", 174, 128, 0, 2, 8, 0.125, "registers"},
		// A100, 48 KB of dynamic shared memory: 50176 bytes a block,
		// 167936/50176 = 3 blocks of 8 warps.
		{"A100", 32, 256, 48 << 10, 3, 24, 0.375, "shared"},
		// The same on an H100: 233472/50176 = 4 blocks.
		{"H100", 32, 256, 48 << 10, 4, 32, 0.5, "shared"},
		// 32 threads a block, few registers: the 32-block limit.
		{"H100", 16, 32, 0, 32, 32, 0.5, "blocks"},
		// 1024 threads and 40 registers: 1280 a warp, 12 warps per
		// sub-partition, 48 an SM: one block of 32 warps.
		{"A100", 40, 1024, 0, 1, 32, 0.5, "registers"},
	}
	for _, tt := range tests {
		g, err := GPUByName(tt.gpu)
		if err != nil {
			t.Fatal(err)
		}
		o, err := g.Occupancy(tt.regs, tt.threads, tt.shared)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if o.BlocksPerSM != tt.blocks || o.Warps != tt.warps || math.Abs(o.Fraction-tt.fraction) > 1e-12 || o.Limiter != tt.limiter {
			t.Errorf("%s regs %d threads %d shared %d: %+v, want %d blocks %d warps %.3f %s",
				tt.gpu, tt.regs, tt.threads, tt.shared, o, tt.blocks, tt.warps, tt.fraction, tt.limiter)
		}
	}
	g, _ := GPUByName("a100")
	for _, bad := range [][3]int{{0, 128, 0}, {256, 128, 0}, {32, 0, 0}, {32, 2048, 0}, {32, 128, -1}, {32, 128, 200 << 10}, {255, 1024, 0}} {
		if _, err := g.Occupancy(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Occupancy%v: no error", bad)
		}
	}
	if _, err := GPUByName("V100"); err == nil {
		t.Error("GPUByName(V100): no error")
	}
}

// TestDisassembleCubin runs the real cuobjdump where it is installed.
func TestDisassembleCubin(t *testing.T) {
	if _, err := Tool("cuobjdump"); err != nil {
		t.Skip(err)
	}
	if _, err := DisassembleCubin([]byte("not a cubin")); err == nil {
		t.Error("no error for a file that is not a cubin")
	}
}

func TestJoin(t *testing.T) {
	res, err := ParsePtxasReport(readTestdata(t, "norm.sm_90.ptxas"))
	if err != nil {
		t.Fatal(err)
	}
	sass, err := ParseSASS(readTestdata(t, "norm.sm_90.sass"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := Join(res, sass)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].Name != "kb_rms_norm_f32" || ks[0].Registers != 23 || ks[0].SharedStatic != 128 || ks[0].SASS.Total != 640 {
		t.Errorf("Join: %+v", ks)
	}
	// Builds that do not match.
	other := append([]Resources(nil), res...)
	other[0].Name = "kb_other"
	if _, err := Join(other, sass); err == nil || !strings.Contains(err.Error(), "kb_other") {
		t.Errorf("a kernel missing from the listing: %v", err)
	}
	other[0] = res[0]
	other[0].Arch = "sm_80"
	if _, err := Join(other, sass); err == nil || !strings.Contains(err.Error(), "sm_90") {
		t.Errorf("architectures that differ: %v", err)
	}
}
