package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/cudatools"
	"github.com/kernbench/kernbench/internal/require"
)

func TestKernelsUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"kernels", "-h"}, exitOK, "theoretical occupancy", ""},
		{[]string{"kernels", "-arch", "sm_70"}, exitUsage, "", `unknown architecture "sm_70" (known: sm_90 (H100), sm_80 (A100))`},
		{[]string{"kernels", "-arch", ","}, exitUsage, "", "no architecture"},
		{[]string{"kernels", "-file", "nosuch.cu"}, exitUsage, "", `no kernel file "nosuch.cu" (there are `},
		{[]string{"kernels", "-kernel", "("}, exitUsage, "", "-kernel: error parsing regexp"},
		{[]string{"kernels", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"kernels", "-arch", "sm_80a"}, exitUsage, "", `unknown architecture "sm_80a"`},
		// No GPU here (as the other tests of -backend cuda assume).
		{[]string{"kernels", "-arch", "device"}, exitFailure, "", "opbench kernels: -arch device: no libcuda.so.1 found"},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("opbench %q: code %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.stdout, tt.stderr)
		}
	}
}

func TestGPUsForArchs(t *testing.T) {
	gs, err := gpusForArchs([]string{"sm_90a", "sm_80", "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gs {
		got = append(got, g.Arch+"="+g.Name)
	}
	if want := "sm_90a=H100 sm_80=A100 sm_90=H100"; strings.Join(got, " ") != want {
		t.Errorf("gpusForArchs: %v, want %s", got, want)
	}
	if cudatools.GPUs[0].Arch != "sm_90" {
		t.Errorf("gpusForArchs changed the table: %+v", cudatools.GPUs[0])
	}
}

// TestKernelsNVRTC checks -nvrtc's report: the search order, and the
// library that loads where NVRTC is installed.
func TestKernelsNVRTC(t *testing.T) {
	code, out, errOut := runArgs("kernels", "-nvrtc")
	if !strings.Contains(out, "NVRTC is looked for in, in order:\n") || !strings.Contains(out, "libnvrtc.so.12 (the dynamic loader)") {
		t.Errorf("stdout %q", out)
	}
	switch {
	case code == exitOK && !strings.Contains(out, "loaded: "):
		t.Errorf("exit 0 and no library named: %q", out)
	case code == exitFailure && !strings.Contains(errOut, "no NVRTC library found"):
		t.Errorf("exit 1 and stderr %q", errOut)
	case code != exitOK && code != exitFailure:
		t.Errorf("exit %d", code)
	}
}

func TestNewKernelRecord(t *testing.T) {
	h100, _ := cudatools.GPUByName("H100")
	k := cudatools.Kernel{
		Resources: cudatools.Resources{Name: "kb_flash_attn_ext_r4_d128", Arch: "sm_90", Registers: 174},
		SASS:      cudatools.SASS{Name: "kb_flash_attn_ext_r4_d128", Opcodes: map[string]int{"FFMA": 10, "LDG.E.128": 2}, Total: 12},
	}
	r := newKernelRecord("flash_attn_ext.cu", h100, "nvrtc", k, true)
	// 128 threads of 174 registers: 2 warps per sub-partition, 2 blocks
	// of 4 warps, 1/8 of the SM's 64 warps.
	if r.Threads != 128 || r.BlocksPerSM != 2 || r.Occupancy != 0.125 || r.Limiter != "registers" || r.Problem != "" {
		t.Errorf("record %+v", r)
	}
	if r.Mix["FFMA"] != 10 || r.Mix["LDG128"] != 2 || r.Instructions != 12 {
		t.Errorf("mix %v, %d instructions", r.Mix, r.Instructions)
	}
	k.Name = "kb_unknown"
	if r := newKernelRecord("x.cu", h100, "nvrtc", k, true); r.Problem == "" {
		t.Errorf("a kernel with no launch: no problem reported: %+v", r)
	}
	k.Name, k.Registers = "kb_rms_norm_f32", 255 // 1024 threads cannot fit
	if r := newKernelRecord("rms_norm.cu", h100, "nvrtc", k, true); !strings.Contains(r.Problem, "does not fit") {
		t.Errorf("a block that does not fit: %+v", r)
	}
}

// TestKernelsNorm runs the command on rms_norm.cu where NVRTC is installed
// (CI installs it): one kernel per architecture, and its JSON record.
func TestKernelsNorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Setenv("KERNBENCH_CUDA_CACHE", t.TempDir())
	path := filepath.Join(t.TempDir(), "k.json")
	code, out, errOut := runArgs("kernels", "-file", "rms_norm.cu", "-json", path)
	if code != exitOK {
		if strings.Contains(errOut, "NVRTC") {
			require.Skip(t, "no NVRTC: %s", errOut)
		}
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var recs []kernelRecord
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &recs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Arch != "sm_80" || recs[1].Arch != "sm_90" {
		t.Fatalf("records %+v", recs)
	}
	for _, r := range recs {
		if r.Kernel != "kb_rms_norm_f32" || r.Registers < 8 || r.Threads != 1024 || r.Occupancy <= 0 || r.SharedStatic <= 0 {
			t.Errorf("record %+v", r)
		}
		if !strings.Contains(out, r.Arch) {
			t.Errorf("table lacks %s:\n%s", r.Arch, out)
		}
		if _, err := cudatools.Tool("cuobjdump"); err == nil && (r.Instructions == 0 || r.Mix["SHFL"] == 0) {
			t.Errorf("cuobjdump is here but the record has no SASS mix: %+v", r)
		}
	}
}
