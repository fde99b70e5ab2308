package bench

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/machineid"
)

// TestMachineKind checks the ID a machine's cpuid fields give, for the
// CPUs the records come from and the ones they are likely to: the same
// brand string on Zen 3 and Zen 4 must give two IDs.
func TestMachineKind(t *testing.T) {
	tests := []struct {
		cpu                     string
		vendor                  string
		family, model, stepping int
		cores                   int
		want                    string
	}{
		{"AMD EPYC", "AuthenticAMD", 25, 1, 1, 2, "amd-epyc-zen3-2c"},
		{"AMD EPYC", "AuthenticAMD", 25, 17, 1, 2, "amd-epyc-zen4-2c"},
		{"AMD EPYC 9R14 96-Core Processor", "AuthenticAMD", 25, 0xa0, 1, 2, "amd-epyc-9r14-zen4-2c"},
		{"AMD Ryzen 9 5950X 16-Core Processor", "AuthenticAMD", 25, 0x21, 0, 16, "amd-ryzen-9-5950x-zen3-16c"},
		{"AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD", 25, 0x61, 2, 16, "amd-ryzen-9-7950x-zen4-16c"},
		{"AMD EPYC 7R32", "AuthenticAMD", 23, 0x31, 0, 2, "amd-epyc-7r32-zen2-2c"},
		{"AMD EPYC 7571", "AuthenticAMD", 23, 1, 2, 2, "amd-epyc-7571-zen-2c"},
		{"AMD EPYC 9B45", "AuthenticAMD", 26, 2, 1, 2, "amd-epyc-9b45-zen5-2c"},
		{"Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz", "GenuineIntel", 6, 143, 8, 2, "intel-xeon-platinum-8481c-sapphirerapids-2c"},
		{"Intel(R) Xeon(R) CPU @ 2.20GHz", "GenuineIntel", 6, 85, 7, 2, "intel-xeon-cascadelake-2c"},
		{"Intel(R) Xeon(R) CPU @ 2.00GHz", "GenuineIntel", 6, 85, 3, 2, "intel-xeon-skylakex-2c"},
		{"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "GenuineIntel", 6, 106, 6, 32, "intel-xeon-platinum-8375c-icelakex-32c"},
		{"AMD EPYC", "AuthenticAMD", 27, 1, 0, 2, "amd-epyc-fam27-mod1-2c"},
		{"Intel(R) Core(TM) i7", "GenuineIntel", 6, 0x1e, 5, 4, "intel-core-i7-fam6-mod30-4c"},
		{"Apple M2 Max", "Apple", 0, 0, 0, 12, "apple-m2-max-12c"},
	}
	for _, tt := range tests {
		m := Machine{CPU: tt.cpu, Vendor: tt.vendor, Family: tt.family, Model: tt.model, Stepping: tt.stepping, PhysicalCores: tt.cores}
		if got := m.Kind(); got != tt.want {
			t.Errorf("%s %s family %d model %d stepping %d, %d cores: ID %q, want %q",
				tt.cpu, tt.vendor, tt.family, tt.model, tt.stepping, tt.cores, got, tt.want)
		}
	}
}

func TestDetectMachine(t *testing.T) {
	m := DetectMachine()
	if m.ID == "" || strings.ContainsAny(m.ID, "/ \\") || m.Cores() < 1 || m.CPU == "" || m.OS == "" || m.GOMAXPROCS < 1 {
		t.Errorf("machine %+v", m)
	}
	if !strings.HasSuffix(m.ID, "c") || !strings.Contains(m.String(), "cores") || m.ID != m.Kind() || m.ID != machineid.Here() {
		t.Errorf("ID %q, String %q", m.ID, m.String())
	}
	p := DetectProvenance("opbench test")
	if p.GoVersion == "" || p.Commit == "" || p.Date.IsZero() || p.Command != "opbench test" {
		t.Errorf("provenance %+v", p)
	}
	if p.Commit != "unknown" && len(p.ShortCommit()) < 10 {
		t.Errorf("short commit %q", p.ShortCommit())
	}
}

// TestMachineKindOfOldRecords checks that a committed record set read
// back, whose ID predates the microarchitecture, has today's ID as its
// kind, and that a set read from CSV (ID and brand only) keeps its ID.
func TestMachineKindOfOldRecords(t *testing.T) {
	old := Machine{ID: "amd-epyc-2c", CPU: "AMD EPYC", Vendor: "AuthenticAMD", Family: 25, Model: 1, PhysicalCores: 2}
	if got := old.Kind(); got != "amd-epyc-zen3-2c" {
		t.Errorf("old Zen 3 record: kind %q", got)
	}
	csv := Machine{ID: "amd-epyc-zen4-2c", CPU: "AMD EPYC"}
	if got := csv.Kind(); got != "amd-epyc-zen4-2c" {
		t.Errorf("CSV record: kind %q", got)
	}
}

func TestStampedCommit(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name      string
		settings  []debug.BuildSetting
		commit    string
		dirty, ok bool
	}{
		{"clean", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, rev, false, true},
		{"modified", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}, rev, true, true},
		{"no stamp", []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "GOARCH", Value: "amd64"}}, "", false, false},
		{"nothing", nil, "", false, false},
	}
	for _, tt := range tests {
		c, dirty, ok := stampedCommit(tt.settings)
		if c != tt.commit || dirty != tt.dirty || ok != tt.ok {
			t.Errorf("%s: got %q %v %v, want %q %v %v", tt.name, c, dirty, ok, tt.commit, tt.dirty, tt.ok)
		}
	}
}
