package cuda

import (
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
)

// TestNVRTCCompilesEveryKernel compiles every kernel file with the real
// CUDA toolchain's NVRTC, for an A100 (sm_80) and an H100 (sm_90), into
// cubins: the GPU side of the sources (inline PTX included, assembled by
// NVRTC) is checked wherever NVRTC is installed, with or without a GPU.
// It is skipped where there is no NVRTC (a failure under
// $KERNBENCH_STRICT=1).
func TestNVRTCCompilesEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srcs, err := kernelSources()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KERNBENCH_CUDA_CACHE", t.TempDir())
	for _, arch := range []string{"sm_80", "sm_90"} {
		c, err := newNVRTCCompiler(arch)
		if err != nil {
			require.Skip(t, "no NVRTC here: %v", err)
		}
		t.Logf("%s", c)
		for name := range srcs {
			if !strings.HasSuffix(name, ".cu") {
				continue
			}
			t.Run(arch+"/"+name, func(t *testing.T) {
				t.Parallel()
				img, err := c.image(name)
				if err != nil {
					t.Fatal(err)
				}
				if len(img) < 4 || string(img[1:4]) != "ELF" {
					t.Errorf("%s for %s is not a cubin (%d bytes)", name, arch, len(img))
				}
			})
		}
	}
}
