package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// anonHugeKB is the process's memory in transparent huge pages, in KiB.
func anonHugeKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "AnonHugePages:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("smaps_rollup has no AnonHugePages")
	return 0
}

// TestDRAMProbeHugePages: where the kernel gives transparent huge pages
// on request, the DRAM probe's buffer gets them (a read of 4 KiB pages
// was 5-20% slower on a Zen 4 VM, so the probe understated what a
// decode on huge pages streams).
func TestDRAMProbeHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages off: %q %v", mode, err)
	}
	before := anonHugeKB(t)
	p, err := NewDRAMProbe(1, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := anonHugeKB(t) - before; got < hugePage>>10 {
		t.Errorf("a 64 MiB probe added %d KiB of huge pages (THP %q)", got, strings.TrimSpace(string(mode)))
	}
	p.Measure(1)
}
