package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/simt"
)

// emuVariant names the emulated device: the target "cuda-emu".
const emuVariant = "emu"

// init registers the backend as "cuda", with a variant per GPU ("cuda-0",
// "cuda-1", ...) and "cuda-emu", the same host code and kernels on the
// SIMT emulator. "cuda" alone opens the first GPU.
func init() {
	registry.Register(registry.Entry{
		Name: "cuda",
		Description: "NVIDIA GPUs through the CUDA driver API and NVRTC, loaded at run time (cuda-0, cuda-1, ...); " +
			"cuda-emu runs the same host code and kernels on the SIMT emulator, for validation (its times are not a GPU's)",
		Variants:       variants,
		DefaultVariant: defaultVariant,
		Open:           openVariant,
		// Every op and type the reference computes has a kernel (issue
		// 26's formats included: CPY writes MXFP4, IQ4_NL, IQ4_XS, TQ1_0
		// and TQ2_0, op_cpy.go): a case the backend refuses is a
		// failure.
		Complete: true,
	})
}

// gpuDriver is the NVIDIA driver with its devices, found once per process.
type gpuDriver struct {
	api   *driverAPI
	infos []deviceInfo
}

// gpus returns the NVIDIA driver and its devices, or why there are none.
func gpus() (*driverAPI, []deviceInfo, error) {
	g, err := findGPUs()
	return g.api, g.infos, err
}

var findGPUs = sync.OnceValues(func() (gpuDriver, error) {
	if runtime.GOOS != "linux" {
		return gpuDriver{}, fmt.Errorf("not linux: the CUDA backend loads the linux driver's %s (this is %s/%s)", DriverLibrary, runtime.GOOS, runtime.GOARCH)
	}
	api, err := loadDriver(DriverLibrary)
	if err != nil {
		return gpuDriver{}, fmt.Errorf("no %s found, so no NVIDIA GPU (%v)", DriverLibrary, err)
	}
	infos, err := api.devices()
	if err != nil {
		return gpuDriver{}, err
	}
	if len(infos) == 0 {
		return gpuDriver{}, errors.New("the NVIDIA driver finds no CUDA device")
	}
	return gpuDriver{api, infos}, nil
})

// variants lists the GPUs, or says why there are none, and the emulator.
func variants() []registry.Variant {
	var out []registry.Variant
	if _, infos, err := gpus(); err != nil {
		out = append(out, registry.Variant{Name: "0", Err: err})
	} else {
		for _, i := range infos {
			out = append(out, registry.Variant{Name: strconv.Itoa(i.Ordinal)})
		}
	}
	return append(out, registry.Variant{Name: emuVariant, Err: simt.Available()})
}

// defaultVariant is the first GPU: "cuda" never means the emulator.
func defaultVariant() (string, error) {
	if _, _, err := gpus(); err != nil {
		return "", fmt.Errorf("%w (cuda-emu runs the kernels on the SIMT emulator)", err)
	}
	return "0", nil
}

func openVariant(c registry.Config) (ops.Backend, error) {
	if c.Variant == emuVariant {
		return OpenEmulated()
	}
	ordinal, err := strconv.Atoi(c.Variant)
	if err != nil {
		return nil, fmt.Errorf("cuda: unknown variant %q (a GPU number, or emu)", c.Variant)
	}
	return OpenGPU(ordinal)
}

// OpenGPU opens GPU ordinal (0 is the first) with kernels compiled by
// NVRTC for its architecture (GPUArch: sm_90a on a Hopper GPU).
func OpenGPU(ordinal int) (*Backend, error) {
	api, infos, err := gpus()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(infos) {
		return nil, fmt.Errorf("cuda: no GPU %d (the driver finds %d)", ordinal, len(infos))
	}
	info := infos[ordinal]
	comp, err := nvrtcForDevice(info)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return open("cuda-"+strconv.Itoa(ordinal), api, nil, comp, info)
}

// OpenEmulated opens the SIMT emulator's device through its emulated
// driver, with kernels built in simt.DefaultMode (checked unless
// $KERNBENCH_SIMT_MODE=fast).
func OpenEmulated() (*Backend, error) {
	mode, err := simt.DefaultMode()
	if err != nil {
		return nil, fmt.Errorf("cuda-emu: %w", err)
	}
	dev, err := simt.Open()
	if err != nil {
		return nil, fmt.Errorf("cuda-emu: %w", err)
	}
	api, err := loadDriver(dev.DriverLibrary())
	if err != nil {
		return nil, fmt.Errorf("cuda-emu: %w", err)
	}
	api.emulated = true
	infos, err := api.devices()
	if err != nil {
		return nil, fmt.Errorf("cuda-emu: %w", err)
	}
	dry, err := emuExecOff()
	if err != nil {
		return nil, fmt.Errorf("cuda-emu: %w", err)
	}
	if api.setExec == nil {
		if dry {
			return nil, fmt.Errorf("cuda-emu: %s=off, but the emulated driver %s cannot turn kernel execution off", emuExecEnv, api.lib)
		}
	} else if dry {
		api.setExec(0)
		dryWarning.Do(func() {
			fmt.Fprintf(os.Stderr, "cuda-emu: WARNING: %s=off: kernels are NOT executed; every result is garbage and only the host's work is measured\n", emuExecEnv)
		})
	} else {
		api.setExec(1)
	}
	b, err := open("cuda-emu", api, dev, emuCompiler{dev: dev, mode: mode}, infos[0])
	if err != nil {
		return nil, err
	}
	b.dry = dry
	return b, nil
}

// emuExecEnv turns the emulated device's kernels off when "off": a dry
// run (see Backend.DryRun).
const emuExecEnv = "KERNBENCH_CUDA_EMU_EXEC"

// dryWarning prints the dry run's warning once per process.
var dryWarning sync.Once

// emuExecOff reads $KERNBENCH_CUDA_EMU_EXEC: "off" (or "0", "false",
// "no") makes cuda-emu a dry run; empty or "on" runs the kernels. The
// emulated driver's switch is the process's: OpenEmulated sets it for
// every cuda-emu backend of the process, as the variable says when the
// last one opens.
func emuExecOff() (bool, error) {
	switch v := strings.ToLower(os.Getenv(emuExecEnv)); v {
	case "off", "0", "false", "no":
		return true, nil
	case "", "on", "1", "true", "yes":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: want on or off", emuExecEnv, v)
	}
}
