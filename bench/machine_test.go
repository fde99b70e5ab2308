package bench

import (
	"strings"
	"testing"
)

func TestMachineID(t *testing.T) {
	tests := []struct {
		cpu   string
		cores int
		want  string
	}{
		{"AMD EPYC", 2, "amd-epyc-2c"},
		{"AMD EPYC 7B13 64-Core Processor", 64, "amd-epyc-7b13-64c"},
		{"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 32, "intel-xeon-platinum-8375c-32c"},
		{"Apple M2 Max", 12, "apple-m2-max-12c"},
		{"  ", 0, "cpu-1c"},
		{"Weird/../CPU;rm -rf", 4, "weird-rm-rf-4c"},
	}
	for _, tt := range tests {
		if got := MachineID(tt.cpu, tt.cores); got != tt.want {
			t.Errorf("MachineID(%q, %d) = %q, want %q", tt.cpu, tt.cores, got, tt.want)
		}
	}
}

func TestDetectMachine(t *testing.T) {
	m := DetectMachine()
	if m.ID == "" || strings.ContainsAny(m.ID, "/ \\") || m.Cores() < 1 || m.CPU == "" || m.OS == "" || m.GOMAXPROCS < 1 {
		t.Errorf("machine %+v", m)
	}
	if !strings.HasSuffix(m.ID, "c") || !strings.Contains(m.String(), "cores") {
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
