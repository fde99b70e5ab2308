package cpu

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/ops/tuning"
)

// A Tier is one implementation level of the CPU kernels: "generic" (pure
// Go, every machine) or a SIMD level such as "avx2". Every tier computes the
// same results as generic up to float rounding; tests run each tier the
// host supports against generic and the float64 reference.
//
// The tier is chosen once, when a backend is made, from the CPU features
// cpuid reports (including the operating system's support for the wider
// register state); the backend's kernels then come from that tier's table,
// with no feature checks in the hot loops. AMX is never used: machines of
// the kind kernbench runs on report it in CPUID but fault when it executes.
type Tier struct {
	Name string
	// Supported reports whether this CPU can run the tier.
	Supported bool
	// Reason says why an unsupported tier is skipped (missing CPU
	// features, or no kernels for it in this build).
	Reason string
	// Without names the kernels a supported tier runs without, and the
	// CPU feature they need that this CPU lacks (the vnni tier's
	// bfloat16 pair kernels where there is no AVX512_BF16); empty when
	// it has all of them.
	Without string
}

// tierSpec is one tier this package knows: the CPU features it needs and,
// when this build has them, its kernels.
type tierSpec struct {
	name    string
	need    []cpuid.FeatureID
	kernels *kernelSet
	extras  []tierExtra
}

// tierExtra is a tier's kernels that need one more CPU feature than the
// tier itself: on a CPU without it, the tier's table is the one drop
// returns, without them.
type tierExtra struct {
	feature cpuid.FeatureID
	what    string // the kernels, for Tier.Without
	drop    func(*kernelSet) *kernelSet
}

// avx512Need are the avx512 tier's CPU features: the avx2 tier's (its
// kernels are the base of the avx512 table), AVX-512 F, BW and VL, and
// BMI2 (PDEP in the IQ1 dot products; every AVX-512 CPU has it, and on
// those its PDEP is fast, unlike AMD's before Zen 3).
var avx512Need = []cpuid.FeatureID{cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.BMI2}

// tierSpecs lists the tiers from slowest to fastest; Tiers reports them in
// this order and the default is the fastest supported one. The SIMD
// tiers' kernels are nil where the assembly is not built (other
// architectures, or the purego build tag).
func tierSpecs() []tierSpec {
	return []tierSpec{
		{name: "generic", kernels: genericKernels},
		{name: "avx2", need: []cpuid.FeatureID{cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C}, kernels: avx2Kernels},
		{name: "avx512", need: avx512Need, kernels: avx512Kernels},
		{name: "vnni", need: append(avx512Need[:len(avx512Need):len(avx512Need)], cpuid.AVX512VNNI), kernels: vnniKernels, extras: vnniExtras},
	}
}

// detectTiers checks every tier against the CPU, once per process.
var detectTiers = sync.OnceValue(func() []tierState {
	_ = simd.HideFeatures() // its error stops resolveTier
	specs := tierSpecs()
	out := make([]tierState, len(specs))
	for i, s := range specs {
		out[i] = tierState{Tier: Tier{Name: s.name}, kernels: s.kernels}
		var missing []string
		for _, f := range s.need {
			if !cpuid.CPU.Supports(f) {
				missing = append(missing, f.String())
			}
		}
		var why []string
		if len(missing) > 0 {
			why = append(why, "CPU lacks "+strings.Join(missing, ", "))
		}
		if s.kernels == nil {
			why = append(why, fmt.Sprintf("%s kernels are not implemented in this build (%s)", s.name, runtime.GOARCH))
		}
		out[i].Supported = len(why) == 0
		out[i].Reason = strings.Join(why, "; ")
		var without []string
		for _, x := range s.extras {
			if out[i].Supported && !cpuid.CPU.Supports(x.feature) {
				out[i].kernels = x.drop(out[i].kernels)
				without = append(without, fmt.Sprintf("%s (CPU lacks %s)", x.what, x.feature))
			}
		}
		out[i].Without = strings.Join(without, "; ")
	}
	return out
})

// tierState is a detected tier with its kernels.
type tierState struct {
	Tier
	kernels *kernelSet
}

// Tiers returns every tier this build knows, with whether the host CPU
// supports it.
func Tiers() []Tier {
	st := detectTiers()
	out := make([]Tier, len(st))
	for i, s := range st {
		out[i] = s.Tier
	}
	return out
}

// EnvTier is the environment variable that forces a tier
// (KERNBENCH_CPU=generic|avx2|avx512|vnni).
const EnvTier = "KERNBENCH_CPU"

// Options configure a CPU backend.
type Options struct {
	// Threads is the number of worker threads; GOMAXPROCS when <= 0.
	Threads int
	// Tier names the kernel tier; empty means $KERNBENCH_CPU if set,
	// else the fastest tier the CPU supports. A tier that is unknown or
	// that this CPU lacks, named here or by $KERNBENCH_CPU, is an error.
	Tier string
	// Spin is how long an idle worker polls for the next parallel
	// region, and a caller for the workers' last chunks, before parking
	// (as ggml's thread pool polls): it saves a futex wake-up per region,
	// which decode-sized ops feel, but costs on a machine with more
	// runnable threads than cores. Zero means $KERNBENCH_SPIN if set (a
	// Go duration; 0 turns polling off), else DefaultSpin; negative turns
	// polling off.
	Spin time.Duration
	// Tuned are the tunable parameters' values (Tunables); nil means
	// what $KERNBENCH_TUNED selects (tuning.Load: off, a tuned.json, or
	// results/<machine-id>/tuned.json when there is one), and a value
	// not among a parameter's candidates is an error.
	Tuned tuning.Values
	// NoRepack turns off the repacked weight copies of the
	// matrix-vector path (mul_mat_x8.go), as $KERNBENCH_REPACK=0 does.
	NoRepack bool
}

// EnvRepack is the environment variable that turns the repacked weight
// copies off (0 or off) or on (1, on, or unset).
const EnvRepack = "KERNBENCH_REPACK"

// resolveRepack reports whether the backend keeps repacked weight
// copies, for Options.NoRepack no.
func resolveRepack(no bool) (bool, error) {
	if no {
		return false, nil
	}
	switch v := strings.TrimSpace(os.Getenv(EnvRepack)); v {
	case "", "1", "on":
		return true, nil
	case "0", "off":
		return false, nil
	default:
		return false, fmt.Errorf("cpu: $%s=%q is not 0, off, 1 or on", EnvRepack, v)
	}
}

// EnvSpin is the environment variable that sets Options.Spin's default.
const EnvSpin = "KERNBENCH_SPIN"

// DefaultSpin is the polling time of Options.Spin's default.
const DefaultSpin = 50 * time.Microsecond

// resolveSpin returns the polling time for Options.Spin s.
func resolveSpin(s time.Duration) (time.Duration, error) {
	if s != 0 {
		return max(s, 0), nil
	}
	v := strings.TrimSpace(os.Getenv(EnvSpin))
	if v == "" {
		return DefaultSpin, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("cpu: $%s=%q is not a duration such as 50us or 0", EnvSpin, v)
	}
	return d, nil
}

// resolveTier returns the tier to use for name (see Options.Tier) with its
// kernels. An unknown tier, or one this CPU lacks, is an error naming it,
// whether it came from name or from $KERNBENCH_CPU.
func resolveTier(name string) (tierState, error) {
	if err := simd.HideFeatures(); err != nil {
		return tierState{}, fmt.Errorf("cpu: %w", err)
	}
	if name != "" {
		t, err := lookupTier(name)
		if err != nil {
			return tierState{}, fmt.Errorf("cpu: %w", err)
		}
		return t, nil
	}
	name, err := defaultTier()
	if err != nil {
		return tierState{}, fmt.Errorf("cpu: %w", err)
	}
	return lookupTier(name)
}

// fastestTier returns the fastest tier this CPU supports.
func fastestTier() tierState {
	tiers := detectTiers()
	best := tiers[0]
	for _, t := range tiers {
		if t.Supported {
			best = t
		}
	}
	return best
}

// lookupTier returns the tier named name, or an error naming it: unknown,
// or not supported on this CPU (with the reason).
func lookupTier(name string) (tierState, error) {
	tiers := detectTiers()
	var names []string
	for _, t := range tiers {
		names = append(names, t.Name)
		if t.Name == name {
			if !t.Supported {
				return tierState{}, fmt.Errorf("tier %q is not supported on this CPU: %s", name, t.Reason)
			}
			return t, nil
		}
	}
	return tierState{}, fmt.Errorf("unknown tier %q (known: %s)", name, strings.Join(names, ", "))
}
