// Package machineid names a machine kind for paths: the CPU brand, its
// microarchitecture from cpuid's family and model, and the core count
// ("amd-epyc-zen3-2c"). bench records and the CPU backend's tuned
// parameters live in results/<id>/.
package machineid

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"unicode"

	"github.com/klauspost/cpuid/v2"
)

// uarchRange names the microarchitecture of the x86 models
// [lo, hi] of one vendor and family; stepping, when not -1, narrows it to
// steppings [stepLo, stepHi] (Intel reuses a model number across
// generations).
type uarchRange struct {
	vendor         string
	family         int
	lo, hi         int
	stepLo, stepHi int
	name           string
}

// uarchTable lists the x86 microarchitectures by cpuid family and model
// (AMD's processor programming references and Intel's model lists). The
// first matching row wins, so the stepping-specific rows of a model come
// before its catch-all row.
var uarchTable = []uarchRange{
	// AMD family 17h: Zen, Zen+ and Zen 2.
	{"AuthenticAMD", 0x17, 0x08, 0x08, -1, -1, "zenplus"},
	{"AuthenticAMD", 0x17, 0x18, 0x18, -1, -1, "zenplus"},
	{"AuthenticAMD", 0x17, 0x00, 0x2f, -1, -1, "zen"},
	{"AuthenticAMD", 0x17, 0x30, 0xaf, -1, -1, "zen2"},
	// AMD family 19h: Zen 3 (Milan, Vermeer, Cezanne, Rembrandt) and
	// Zen 4 (Genoa, Raphael, Phoenix, Bergamo, Siena).
	{"AuthenticAMD", 0x19, 0x00, 0x0f, -1, -1, "zen3"},
	{"AuthenticAMD", 0x19, 0x10, 0x1f, -1, -1, "zen4"},
	{"AuthenticAMD", 0x19, 0x20, 0x5f, -1, -1, "zen3"},
	{"AuthenticAMD", 0x19, 0x60, 0xaf, -1, -1, "zen4"},
	// AMD family 1Ah: Zen 5 (Turin, Granite Ridge, Strix).
	{"AuthenticAMD", 0x1a, 0x00, 0x7f, -1, -1, "zen5"},
	// Hygon family 18h is Zen.
	{"HygonGenuine", 0x18, 0x00, 0xff, -1, -1, "dhyana"},
	// Intel family 6.
	{"GenuineIntel", 6, 0x3c, 0x3c, -1, -1, "haswell"},
	{"GenuineIntel", 6, 0x3f, 0x3f, -1, -1, "haswell"},
	{"GenuineIntel", 6, 0x45, 0x46, -1, -1, "haswell"},
	{"GenuineIntel", 6, 0x3d, 0x3d, -1, -1, "broadwell"},
	{"GenuineIntel", 6, 0x47, 0x47, -1, -1, "broadwell"},
	{"GenuineIntel", 6, 0x4f, 0x4f, -1, -1, "broadwell"},
	{"GenuineIntel", 6, 0x56, 0x56, -1, -1, "broadwell"},
	{"GenuineIntel", 6, 0x4e, 0x4e, -1, -1, "skylake"},
	{"GenuineIntel", 6, 0x5e, 0x5e, -1, -1, "skylake"},
	{"GenuineIntel", 6, 0x55, 0x55, 0, 4, "skylakex"},
	{"GenuineIntel", 6, 0x55, 0x55, 5, 7, "cascadelake"},
	{"GenuineIntel", 6, 0x55, 0x55, 8, 15, "cooperlake"},
	{"GenuineIntel", 6, 0x8e, 0x8e, -1, -1, "kabylake"},
	{"GenuineIntel", 6, 0x9e, 0x9e, 0, 9, "kabylake"},
	{"GenuineIntel", 6, 0x9e, 0x9e, 10, 15, "coffeelake"},
	{"GenuineIntel", 6, 0xa5, 0xa6, -1, -1, "cometlake"},
	{"GenuineIntel", 6, 0x6a, 0x6a, -1, -1, "icelakex"},
	{"GenuineIntel", 6, 0x6c, 0x6c, -1, -1, "icelakex"},
	{"GenuineIntel", 6, 0x7d, 0x7e, -1, -1, "icelake"},
	{"GenuineIntel", 6, 0x8c, 0x8d, -1, -1, "tigerlake"},
	{"GenuineIntel", 6, 0xa7, 0xa7, -1, -1, "rocketlake"},
	{"GenuineIntel", 6, 0x97, 0x97, -1, -1, "alderlake"},
	{"GenuineIntel", 6, 0x9a, 0x9a, -1, -1, "alderlake"},
	{"GenuineIntel", 6, 0xb7, 0xb7, -1, -1, "raptorlake"},
	{"GenuineIntel", 6, 0xba, 0xba, -1, -1, "raptorlake"},
	{"GenuineIntel", 6, 0xbf, 0xbf, -1, -1, "raptorlake"},
	{"GenuineIntel", 6, 0xaa, 0xac, -1, -1, "meteorlake"},
	{"GenuineIntel", 6, 0xbd, 0xbd, -1, -1, "lunarlake"},
	{"GenuineIntel", 6, 0xc5, 0xc6, -1, -1, "arrowlake"},
	{"GenuineIntel", 6, 0x8f, 0x8f, -1, -1, "sapphirerapids"},
	{"GenuineIntel", 6, 0xcf, 0xcf, -1, -1, "emeraldrapids"},
	{"GenuineIntel", 6, 0xad, 0xae, -1, -1, "graniterapids"},
	{"GenuineIntel", 6, 0xaf, 0xaf, -1, -1, "sierraforest"},
}

// Microarch names a CPU's microarchitecture from its cpuid vendor string,
// family, model and stepping, lower case and path-safe: "zen3" for
// AuthenticAMD family 25 model 1, "sapphirerapids" for GenuineIntel family
// 6 model 143. A model the table does not know is "fam25-mod1"; a CPU
// without family and model (as cpuid reports many ARM ones, whose brand
// names the chip) is "".
func Microarch(vendor string, family, model, stepping int) string {
	for _, u := range uarchTable {
		if u.vendor != vendor || u.family != family || model < u.lo || model > u.hi {
			continue
		}
		if u.stepLo >= 0 && (stepping < u.stepLo || stepping > u.stepHi) {
			continue
		}
		return u.name
	}
	if family == 0 && model == 0 {
		return ""
	}
	return fmt.Sprintf("fam%d-mod%d", family, model)
}

// ID returns a path-safe name for a machine kind: the CPU brand
// without trademarks and frequency, lower case, words joined by '-', then
// the microarchitecture (see Microarch; left out when empty or already a
// word of the brand) and the core count: "AMD EPYC 7B13 64-Core
// Processor", "zen3", 2 -> "amd-epyc-7b13-zen3-2c".
func ID(cpu, uarch string, cores int) string {
	s := strings.ReplaceAll(strings.ToLower(cpu), "-core", "core")
	for _, junk := range []string{"(r)", "(tm)", "(c)", " cpu ", " processor", "@"} {
		s = strings.ReplaceAll(s, junk, " ")
	}
	words := idWords(s)
	if len(words) == 0 {
		words = []string{"cpu"}
	}
	for _, w := range idWords(strings.ToLower(uarch)) {
		if !hasWord(words, w) {
			words = append(words, w)
		}
	}
	return strings.Join(words, "-") + "-" + strconv.Itoa(max(cores, 1)) + "c"
}

// idWords splits s into the words an ID keeps: runs of ASCII letters,
// digits and dots, without "cpu", frequencies and "64core" counts.
func idWords(s string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '.')
	}) {
		w = strings.Trim(w, ".")
		switch {
		case w == "" || w == "cpu" || strings.HasSuffix(w, "ghz"):
			continue
		case strings.HasSuffix(w, "core") && len(w) > 4 && isDigits(w[:len(w)-4]):
			continue // "64core" from "64-Core"
		}
		words = append(words, w)
	}
	return words
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// hasWord reports whether the '-'-joined id words contain w.
func hasWord(words []string, w string) bool {
	for _, x := range words {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// Here returns this machine's ID, from what cpuid reports (the cores
// are the physical ones, else the logical ones, else the CPUs Go sees).
func Here() string {
	c := cpuid.CPU
	brand := strings.TrimSpace(c.BrandName)
	if brand == "" {
		brand = "unknown " + runtime.GOARCH + " CPU"
	}
	cores := c.PhysicalCores
	if cores <= 0 {
		cores = c.LogicalCores
	}
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	return ID(brand, Microarch(c.VendorString, c.Family, c.Model, c.Stepping), cores)
}
