package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// GPUArch returns the architecture the backend compiles GPU ordinal's
// kernels for (see targetArch), with the NVRTC that loads here. It needs
// the driver and NVRTC, and compiles nothing.
func GPUArch(ordinal int) (string, error) {
	_, infos, err := gpus()
	if err != nil {
		return "", err
	}
	if ordinal < 0 || ordinal >= len(infos) {
		return "", fmt.Errorf("cuda: no GPU %d (the driver finds %d)", ordinal, len(infos))
	}
	c, err := nvrtcForDevice(infos[ordinal])
	if err != nil {
		return "", fmt.Errorf("cuda: %w", err)
	}
	return c.arch, nil
}

// nvrtcForDevice returns the NVRTC compiler for a device's kernels.
func nvrtcForDevice(info deviceInfo) (*nvrtcCompiler, error) {
	c, err := newNVRTCCompiler(info.Arch())
	if err != nil {
		return nil, err
	}
	if a := targetArch(info.Arch(), c.version); a != c.arch {
		return newNVRTCCompiler(a)
	}
	return c, nil
}

// targetArch returns the architecture kernels for a device of arch
// ("sm_90") are compiled for by NVRTC of version ("12.4"): Hopper's
// arch-specific target, sm_90a (wgmma, setmaxnreg; its cubins run on
// compute capability 9.0 alone, which is the device's), where NVRTC
// knows it (12.0 and later), else arch itself.
func targetArch(arch, version string) string {
	major, _, _ := strings.Cut(version, ".")
	if n, err := strconv.Atoi(major); err == nil && n >= 12 && arch == "sm_90" {
		return "sm_90a"
	}
	return arch
}
