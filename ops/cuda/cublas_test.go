package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCublasSearch checks that cuBLAS is found in a pip wheel's folder
// with libcublasLt, of its major version, loaded first.
func TestCublasSearch(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"usr/local/cuda-12.4/lib64/libcublas.so.12",
		"usr/local/cuda-12.4/lib64/libcublasLt.so.12",
		"venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12",
		"venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.11",
		"venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.12",
		"venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := libSearch{Root: root, Getenv: func(k string) string {
		if k == "VIRTUAL_ENV" {
			return filepath.Join(root, "venv")
		}
		return ""
	}}
	var got []string
	for _, l := range s.order(cublasLib) {
		got = append(got, strings.ReplaceAll(l, root+"/", ""))
	}
	want := []string{
		"libcublas.so.13 (the dynamic loader)", "libcublas.so.12 (the dynamic loader)",
		"libcublas.so.11 (the dynamic loader)", "libcublas.so (the dynamic loader)",
		"usr/local/cuda-12.4/lib64/libcublas.so.12 (/usr/local/cuda-*, with libcublasLt.so.12)",
		"venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12 (pip wheel, with libcublasLt.so.12)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("cuBLAS search order:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestCublasGemmRefuses checks the answers that need no GPU: a type or
// shape cuBLAS is not asked for, a backend that is not a GPU, and (here,
// where there is no GPU) the driver's absence, each an error.
func TestCublasGemmRefuses(t *testing.T) {
	_, _, noGPU := gpus()
	for _, tc := range []struct {
		backend, typ string
		m, n, k      int
		want         string
	}{
		{"cuda-0", "q4_0", 64, 1, 64, "no q4_0 product (it takes bf16, f16, f32, tf32)"},
		{"cuda-0", "f16", 0, 1, 64, "bad shape m=0"},
		{"cuda-0", "f16", 64, 1, -1, "bad shape"},
		{"cuda-emu", "f16", 64, 1, 64, errNoCublasOnEmu.Error()},
		{"cpu", "f16", 64, 1, 64, `backend "cpu" is not a CUDA GPU`},
		{"cuda-x", "f16", 64, 1, 64, `backend "cuda-x" is not a CUDA GPU`},
	} {
		_, err := CublasGemmOn(tc.backend, tc.m, tc.n, tc.k, tc.typ)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CublasGemmOn(%q, %d, %d, %d, %q): %v, want %q", tc.backend, tc.m, tc.n, tc.k, tc.typ, err, tc.want)
		}
	}
	if noGPU != nil {
		_, err := CublasGemm(0, 64, 1, 64, "f16")
		if err == nil || !errors.Is(err, noGPU) && err.Error() != noGPU.Error() {
			t.Errorf("CublasGemm without a GPU: %v, want the driver's %v", err, noGPU)
		}
	}
}

func TestBatchSize(t *testing.T) {
	for _, tc := range []struct {
		one  float64
		want int
	}{{1e-3, 20}, {1, 1}, {1e-9, 10000}, {0, 10000}, {0.004, 5}} {
		if got := batchSize(tc.one); got != tc.want {
			t.Errorf("batchSize(%g) = %d, want %d", tc.one, got, tc.want)
		}
	}
}
