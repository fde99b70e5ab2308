package cuda

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/ops/internal/gpu"
)

// TestNVRTCSearchOrder lays out toolkits and pip wheels in a folder and
// checks where NVRTC is looked for, and in which order: the explicit
// $KERNBENCH_NVRTC, the toolkit the environment names, the loader's
// sonames, /usr/local/cuda then /usr/local/cuda-X.Y newest first, then
// the wheels; each folder's newest libnvrtc with the builtins of its
// major version.
func TestNVRTCSearchOrder(t *testing.T) {
	root := t.TempDir()
	files := []string{
		"kb/libnvrtc.so.12.8",
		"cudahome/lib64/libnvrtc.so.12",
		"usr/local/cuda/lib64/libnvrtc.so.12",
		"usr/local/cuda/lib64/libnvrtc.alt.so.12",
		"usr/local/cuda/lib64/libnvrtc-builtins.so.11.8",
		"usr/local/cuda/lib64/libnvrtc-builtins.so.12.4",
		"usr/local/cuda-11.8/lib64/libnvrtc.so.11.2",
		"usr/local/cuda-12.4/lib64/libnvrtc.so",
		"usr/local/cuda-12.4/lib64/libnvrtc.so.12",
		"usr/local/cuda-12.10/targets/x86_64-linux/lib/libnvrtc.so.12",
		"usr/local/cuda-13.0/include/cuda_fp16.h", // a toolkit without NVRTC
		"usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
		"usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.1",
		"venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
		"home/.local/lib/python3.10/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
	}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sonames := []string{"libnvrtc.so.13 (the dynamic loader)", "libnvrtc.so.12 (the dynamic loader)",
		"libnvrtc.so.11.2 (the dynamic loader)", "libnvrtc.so (the dynamic loader)"}
	system := []string{
		"usr/local/cuda/lib64/libnvrtc.so.12 (/usr/local/cuda, with libnvrtc-builtins.so.12.4)",
		"usr/local/cuda-12.10/targets/x86_64-linux/lib/libnvrtc.so.12 (/usr/local/cuda-*)",
		"usr/local/cuda-12.4/lib64/libnvrtc.so.12 (/usr/local/cuda-*)",
		"usr/local/cuda-11.8/lib64/libnvrtc.so.11.2 (/usr/local/cuda-*)",
	}
	wheelUsr := "usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (pip wheel, with libnvrtc-builtins.so.12.1)"
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"no environment", nil, cat(sonames, system, []string{wheelUsr})},
		{"everything named", map[string]string{
			"KERNBENCH_NVRTC": "kb/libnvrtc.so.12.8",
			"CUDA_HOME":       "cudahome",
			"VIRTUAL_ENV":     "venv",
			"HOME":            "home",
		}, cat([]string{
			"kb/libnvrtc.so.12.8 ($KERNBENCH_NVRTC)",
			"cudahome/lib64/libnvrtc.so.12 ($CUDA_HOME)",
		}, sonames, system, []string{
			"venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13 (pip wheel)",
			"home/.local/lib/python3.10/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (pip wheel)",
			wheelUsr,
		})},
		{"a folder named, a toolkit named twice", map[string]string{
			"KERNBENCH_NVRTC": "usr/local/cuda-12.4/lib64",
			"CUDA_PATH":       "usr/local/cuda",
		}, cat([]string{
			"usr/local/cuda-12.4/lib64/libnvrtc.so.12 ($KERNBENCH_NVRTC)",
			"usr/local/cuda/lib64/libnvrtc.so.12 ($CUDA_PATH, with libnvrtc-builtins.so.12.4)",
		}, sonames, []string{system[1], system[3], wheelUsr})},
		{"names of nothing", map[string]string{
			"KERNBENCH_NVRTC": "nowhere", "CUDA_HOME": "nowhere", "PYTHONPATH": "nowhere",
		}, cat(sonames, system, []string{wheelUsr})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := libSearch{Root: root, Getenv: func(k string) string {
				if v, ok := tc.env[k]; ok {
					return filepath.Join(root, v)
				}
				return ""
			}}
			var got []string
			for _, c := range s.candidates(nvrtcLib) {
				l := strings.TrimPrefix(c.Lib, root+"/") + " (" + c.From
				if c.Companion != "" {
					if filepath.Dir(c.Companion) != filepath.Dir(c.Lib) {
						t.Errorf("%s: builtins %s from another folder", c.Lib, c.Companion)
					}
					l += ", with " + filepath.Base(c.Companion)
				}
				got = append(got, l+")")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("search order:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"cuda-12.10", "cuda-12.4", 1},
		{"cuda-11.8", "cuda-12.0", -1},
		{"libnvrtc.so", "libnvrtc.so.11.2", -1},
		{"libnvrtc.so.13", "libnvrtc.so.12", 1},
		{"libnvrtc.so.12", "libnvrtc.so.12", 0},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestTargetArch(t *testing.T) {
	for _, tc := range []struct{ arch, nvrtc, want string }{
		{"sm_90", "12.4", "sm_90a"},
		{"sm_90", "13.0", "sm_90a"},
		{"sm_90", "11.8", "sm_90"},
		{"sm_80", "12.4", "sm_80"},
		{"sm_89", "12.4", "sm_89"},
		{"sm_90", "", "sm_90"},
	} {
		if got := targetArch(tc.arch, tc.nvrtc); got != tc.want {
			t.Errorf("targetArch(%q, %q) = %q, want %q", tc.arch, tc.nvrtc, got, tc.want)
		}
	}
}

// TestReportBuildServesBackend checks that a build with ptxas's report
// (opbench kernels) leaves the cubin where the backend's compiler, whose
// options lack the report, finds it: the same bytes, with no compile.
func TestReportBuildServesBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Setenv("KERNBENCH_CUDA_CACHE", t.TempDir())
	c, err := newNVRTCCompiler("sm_80")
	if err != nil {
		require.Skip(t, "no NVRTC here: %v", err)
	}
	b, err := c.build("rms_norm.cu")
	if err != nil {
		t.Fatal(err)
	}
	main, headers, err := programOf("rms_norm.cu")
	if err != nil {
		t.Fatal(err)
	}
	path := c.cachePath("rms_norm.cu", main, headers, gpu.SortedNames(headers))
	cached, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(cached, b.Cubin) {
		t.Fatalf("the backend's cache entry %s: %d bytes, err %v; want the report build's %d bytes", path, len(cached), err, len(b.Cubin))
	}
	// A compiler whose NVRTC cannot run finds the cubin in the cache.
	broken := *c
	broken.api = nil
	img, err := broken.image("rms_norm.cu")
	if err != nil || !bytes.Equal(img, b.Cubin) {
		t.Errorf("image from the cache: %d bytes, err %v", len(img), err)
	}
}
