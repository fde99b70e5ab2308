package cuda

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/internal/cudatools"
	"github.com/kernbench/kernbench/internal/require"
)

// TestNVRTCCompilesEveryKernel compiles every kernel file with the real
// CUDA toolchain's NVRTC, for an H100 (sm_90) and, with
// $KERNBENCH_NVRTC_ARCHS=sm_80,sm_90 (make nvrtc-check), an A100 (sm_80),
// into cubins: the GPU side of the sources (inline PTX included, assembled by
// NVRTC) is checked wherever NVRTC is installed, with or without a GPU.
// ptxas's report on each kernel must show no register spills, and the
// kernel's block at the report shape (ReportLaunch) must fit the GPU's
// multiprocessor; mul_mat_q.cu's tensor-core kernels must keep their
// main loop's instruction budget (checkMmqBudget). It is skipped where
// there is no NVRTC (a failure under $KERNBENCH_STRICT=1, as CI sets
// it).
func TestNVRTCCompilesEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	files, err := KernelFiles()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KERNBENCH_CUDA_CACHE", t.TempDir())
	var mu sync.Mutex
	used := map[string]bool{} // reportLaunches prefixes some kernel matched
	archs, err := nvrtcTestArchs(os.Getenv("KERNBENCH_NVRTC_ARCHS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs {
		c, err := newNVRTCCompiler(arch)
		if err != nil {
			require.Skip(t, "no NVRTC here: %v", err)
		}
		t.Logf("%s", c)
		gpu := map[string]string{"sm_80": "A100", "sm_90": "H100"}[arch]
		g, err := cudatools.GPUByName(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			t.Run(arch+"/"+name, func(t *testing.T) {
				t.Parallel()
				b, err := c.build(name)
				if err != nil {
					t.Fatal(err)
				}
				if len(b.Cubin) < 4 || string(b.Cubin[1:4]) != "ELF" {
					t.Errorf("%s for %s is not a cubin (%d bytes)", name, arch, len(b.Cubin))
				}
				fns, err := cudatools.ParsePtxasReport(b.Log)
				if err != nil {
					t.Fatalf("%v\nNVRTC's log:\n%s", err, b.Log)
				}
				if len(fns) == 0 {
					t.Fatalf("ptxas reported no kernels; NVRTC's log:\n%s", b.Log)
				}
				checkNoHalfToInt(t, name, arch, b.Cubin)
				if arch == "sm_90" {
					checkMmqBudget(t, name, b.Cubin)
				}
				for _, f := range fns {
					if f.Arch != arch {
						t.Errorf("%s: built for %s, want %s", f.Name, f.Arch, arch)
					}
					if f.Spills() {
						t.Errorf("%s spills registers on %s: %d bytes stored, %d loaded (%d registers, %d-byte stack frame)",
							f.Name, arch, f.SpillStores, f.SpillLoads, f.Registers, f.StackFrame)
					}
					l, ok := ReportLaunch(f.Name)
					if !ok {
						t.Errorf("%s: no launch at the report shape (add it to reportLaunches)", f.Name)
						continue
					}
					if _, err := g.Occupancy(f.Registers, l.Threads, f.SharedStatic+l.Shared); err != nil {
						t.Errorf("%s (%s): %v", f.Name, l.Shape, err)
					}
					mu.Lock()
					used[launchPrefix(f.Name)] = true
					mu.Unlock()
				}
			})
		}
	}
	// After the parallel subtests: a prefix no kernel matches is stale.
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		for p := range reportLaunches {
			if !used[p] {
				t.Errorf("reportLaunches has %q, which no kernel matches", p)
			}
		}
	})
}

// halfToInt matches a SASS conversion of a half's value to an integer.
// No kernel means one: each that appeared came from the compiler reading
// a 16-bit inline-asm output as a half (kb_f2h in common.cuh), and the
// emulator, which takes the other branch of kb_f2h, cannot see it.
var halfToInt = regexp.MustCompile(`F2I\S*\.F16\b`)

// checkNoHalfToInt fails when the cubin's SASS converts a half to an
// integer (halfToInt); it does nothing where cuobjdump is missing.
func checkNoHalfToInt(t *testing.T, name, arch string, cubin []byte) {
	t.Helper()
	if _, err := cudatools.Tool("cuobjdump"); err != nil {
		return
	}
	sass, err := cudatools.DisassembleCubin(cubin)
	if err != nil {
		t.Errorf("%s for %s: %v", name, arch, err)
		return
	}
	if m := halfToInt.FindAllString(sass, -1); len(m) > 0 {
		t.Errorf("%s for %s: %d conversions of a half's value to an integer (%s): a u16 from a 16-bit asm output read as a half?", name, arch, len(m), m[0])
	}
}

func TestReportLaunch(t *testing.T) {
	tests := []struct {
		kernel          string
		threads, shared int
	}{
		{"kb_mmq_dp4a_q4_0", tileNT, 0},
		// A step's q8a blocks (40 bytes each) per column and its weight
		// bytes and 16 per warp: 8 columns, 64 chunks (1152 bytes of
		// q4_0); one column, the whole 4096-wide row (mmvqStep: 128
		// chunks, 2304 bytes of q4_0, 4352 of q8_0, 3360 of q6_K).
		{"kb_mmvq1_q4_0", 32 * mmvRows, 128*40 + 4*(2304+16)},
		{"kb_mmvq_q4_0", 32 * mmvRows, 8*64*40 + 4*(1152+16)},
		{"kb_mmvq1_q8_0", 32 * mmvRows, 128*40 + 4*(4352+16)},
		{"kb_mmvq1_q6_K", 32 * mmvRows, 128*40 + 4*(3360+16)},
		{"kb_mmvf1_f16", 32 * mmvRows, 0},
		{"kb_rms_norm_f32", 1024, 0},
		// 4 rows of 512 floats in shared memory.
		{"kb_soft_max_f32_mask_f16", 128, 4 * 512 * 4},
		// A prompt: 4 warps of 4 rows; q 16x128, K 32x129, V 32x128 floats.
		{"kb_flash_attn_ext_r4_d128", 128, 4 * (16*128 + 32*129 + 32*128)},
		// Decode: one warp, one row.
		{"kb_flash_attn_ext_r1_d128", 32, 4 * (128 + 32*129 + 32*128)},
	}
	for _, tt := range tests {
		l, ok := ReportLaunch(tt.kernel)
		if !ok || l.Threads != tt.threads || l.Shared != tt.shared {
			t.Errorf("ReportLaunch(%s) = %+v, %v; want %d threads, %d bytes", tt.kernel, l, ok, tt.threads, tt.shared)
		}
	}
	if l, ok := ReportLaunch("kb_no_such_kernel"); ok {
		t.Errorf("ReportLaunch(kb_no_such_kernel) = %+v", l)
	}
	if p := launchPrefix("kb_quantize_q8a"); p != "kb_quantize_q8a" {
		t.Errorf("launchPrefix(kb_quantize_q8a) = %q: the longest prefix must win", p)
	}
}

// nvrtcTestArchs parses $KERNBENCH_NVRTC_ARCHS, the targets
// TestNVRTCCompilesEveryKernel compiles for: sm_90 when empty (the
// flash-attention file alone takes NVRTC 11.8 over a minute per target on
// two cores, so the default test compiles for one; make nvrtc-check does
// both).
func nvrtcTestArchs(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return []string{"sm_90"}, nil
	}
	var archs []string
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		if a != "sm_80" && a != "sm_90" {
			return nil, fmt.Errorf("KERNBENCH_NVRTC_ARCHS: %q is not sm_80 or sm_90 (the targets with a GPU model to check occupancy against)", a)
		}
		archs = append(archs, a)
	}
	return archs, nil
}
