package machineid

import (
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	tests := []struct {
		cpu   string
		uarch string
		cores int
		want  string
	}{
		{"AMD EPYC", "zen3", 2, "amd-epyc-zen3-2c"},
		{"AMD EPYC", "", 2, "amd-epyc-2c"},
		{"AMD EPYC 7B13 64-Core Processor", "zen3", 64, "amd-epyc-7b13-zen3-64c"},
		{"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "icelakex", 32, "intel-xeon-platinum-8375c-icelakex-32c"},
		{"Apple M2 Max", "", 12, "apple-m2-max-12c"},
		{"  ", "fam25-mod1", 0, "cpu-fam25-mod1-1c"},
		{"Weird/../CPU;rm -rf", "../x", 4, "weird-rm-rf-x-4c"},
		{"AMD Ryzen 9 Zen4 Engineering Sample", "zen4", 16, "amd-ryzen-9-zen4-engineering-sample-16c"},
	}
	for _, tt := range tests {
		if got := ID(tt.cpu, tt.uarch, tt.cores); got != tt.want {
			t.Errorf("ID(%q, %q, %d) = %q, want %q", tt.cpu, tt.uarch, tt.cores, got, tt.want)
		}
	}
}

// TestMicroarchTable checks that no row of the table hides a later one
// for all its models and steppings: a row that can never match is a typo.
func TestMicroarchTable(t *testing.T) {
	for i, u := range uarchTable {
		if u.lo > u.hi || (u.stepLo >= 0 && u.stepLo > u.stepHi) || u.name == "" {
			t.Errorf("row %d %+v: empty range or name", i, u)
			continue
		}
		step := max(u.stepLo, 0)
		reached := false
		for model := u.lo; model <= u.hi && !reached; model++ {
			reached = Microarch(u.vendor, u.family, model, step) == u.name
		}
		if !reached {
			t.Errorf("row %d %+v: no model reaches it", i, u)
		}
	}
}

// TestHere checks this machine's ID has the shape of one.
func TestHere(t *testing.T) {
	id := Here()
	if id == "" || strings.ContainsAny(id, "/\\ ") || !strings.HasSuffix(id, "c") {
		t.Errorf("Here() = %q", id)
	}
}
