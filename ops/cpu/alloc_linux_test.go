package cpu

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
)

// TestAllocAdvisesHugePages: a buffer of several huge pages from Alloc
// lies in a mapping marked for transparent huge pages (VmFlags "hg" in
// /proc/self/smaps), where the kernel has them.
func TestAllocAdvisesHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here:", err)
	}
	b := &Backend{}
	buf, err := b.Alloc(5 * hugePage)
	if err != nil {
		t.Fatal(err)
	}
	mem := buf.(*ops.HostBuffer).Bytes()
	p := uintptr(unsafe.Pointer(&mem[0]))
	mid := (p + hugePage - 1) / hugePage * hugePage // a whole huge page inside
	flags, err := vmFlags(mid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("mapping of %#x has VmFlags %q, no hg", mid, flags)
	}
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps
// that holds address a.
func vmFlags(a uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	in := false
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", a)
}
