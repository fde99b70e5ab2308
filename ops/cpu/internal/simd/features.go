package simd

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// EnvDisable is the environment variable that names CPU features the CPU
// backend and its tests treat as absent: cpuid's names, comma-separated
// and case-insensitive ("AVX512F", "AVX512VNNI", "AVX2"). It lets a
// machine that has a tier run what a machine without it runs (the lower
// tiers' selection, and the tests that must skip there): for example
// KERNBENCH_CPU_DISABLE=AVX512F go test ./ops/cpu/... on a Zen 4 or Zen 5
// runs as on a Zen 3.
const EnvDisable = "KERNBENCH_CPU_DISABLE"

// HideFeatures removes the features $KERNBENCH_CPU_DISABLE names from
// cpuid.CPU, once per process, before anything here reads them; it
// returns an error naming an entry cpuid does not know (and then hides
// none).
var HideFeatures = sync.OnceValue(func() error {
	v := strings.TrimSpace(os.Getenv(EnvDisable))
	if v == "" {
		return nil
	}
	var ids []cpuid.FeatureID
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		id := cpuid.ParseFeature(name)
		if id == cpuid.UNKNOWN {
			return fmt.Errorf("$%s=%q: %q is not a CPU feature cpuid knows (such as AVX512F, AVX512VNNI, AVX2)", EnvDisable, v, name)
		}
		ids = append(ids, id)
	}
	cpuid.CPU.Disable(ids...)
	return nil
})

// Hidden reports whether $KERNBENCH_CPU_DISABLE is set (to anything), so
// that a test comparing cpuid with the operating system's list of CPU
// features knows the two may differ on purpose.
func Hidden() bool { return strings.TrimSpace(os.Getenv(EnvDisable)) != "" }
