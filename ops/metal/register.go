package metal

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/registry"
	"github.com/kernbench/kernbench/simt"
)

// The variants: the Mac's GPU, and the emulated device.
const (
	gpuVariant = "gpu"
	emuVariant = "emu"
)

// init registers the backend as "metal", with the variants "metal-gpu"
// (the Mac's default Metal device; what "metal" alone opens) and
// "metal-emu", the same host code and kernels on the SIMT emulator.
func init() {
	registry.Register(registry.Entry{
		Name: "metal",
		Description: "Apple GPUs through Metal (the Objective-C runtime through purego, kernels compiled at run time); " +
			"metal-emu runs the same host code and kernels on the SIMT emulator, for validation (its times are not a GPU's)",
		Variants:       variants,
		DefaultVariant: defaultVariant,
		Open:           openVariant,
		// Every case of the harness's matrix passes on metal-emu, as many
		// as the CPU's: a case Supports refuses is a failure. No type is
		// pending: CPY writes the formats of issue 26 that quant encodes
		// (kernels/newquants.h).
		Complete: true,
	})
}

// variants lists the GPU, or why there is none, and the emulator.
func variants() []registry.Variant {
	return []registry.Variant{
		{Name: gpuVariant, Err: gpuAvailable()},
		{Name: emuVariant, Err: simt.Available()},
	}
}

// defaultVariant is the GPU: "metal" never means the emulator.
func defaultVariant() (string, error) {
	if err := gpuAvailable(); err != nil {
		return "", fmt.Errorf("%w (metal-emu runs the kernels on the SIMT emulator)", err)
	}
	return gpuVariant, nil
}

func openVariant(c registry.Config) (ops.Backend, error) {
	switch c.Variant {
	case emuVariant:
		return OpenEmulated()
	case gpuVariant, "":
		return OpenGPU()
	}
	return nil, fmt.Errorf("metal: unknown variant %q (gpu or emu)", c.Variant)
}

// OpenGPU opens the Mac's default Metal device, with kernels compiled
// from the embedded sources by the Metal compiler at run time.
func OpenGPU() (*Backend, error) {
	if err := gpuAvailable(); err != nil {
		return nil, err
	}
	dev, err := openGPU()
	if err != nil {
		return nil, err
	}
	return newBackend("metal-gpu", dev, false)
}

// OpenEmulated opens the SIMT emulator as a Metal device, with kernels
// built in simt.DefaultMode ($KERNBENCH_SIMT_MODE: checked unless it says fast).
func OpenEmulated() (*Backend, error) {
	mode, err := simt.DefaultMode()
	if err != nil {
		return nil, fmt.Errorf("metal-emu: %w", err)
	}
	dev, err := openEmu(mode)
	if err != nil {
		return nil, fmt.Errorf("metal-emu: %w", err)
	}
	return newBackend("metal-emu", dev, true)
}
