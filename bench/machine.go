package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
)

// Machine describes the computer a record set was measured on.
type Machine struct {
	// ID names the machine kind in paths: the CPU model, its
	// microarchitecture and core count, lower case, such as
	// "amd-epyc-zen3-2c" (see machineid.ID). Records made before the
	// microarchitecture was part of it say "amd-epyc-2c"; Kind gives
	// today's ID from the other fields.
	ID string `json:"id"`
	// CPU is the brand string cpuid reports, such as "AMD EPYC 7B13".
	CPU    string `json:"cpu"`
	Vendor string `json:"vendor"`
	Family int    `json:"family"`
	Model  int    `json:"model"`
	// Stepping is cpuid's stepping; it tells some Intel generations
	// apart (Skylake-SP and Cascade Lake are both model 85).
	Stepping int `json:"stepping,omitempty"`
	// Features are the CPU feature flags cpuid reports, sorted.
	Features []string `json:"features"`
	// X64Level is the x86-64 micro-architecture level (1 to 4); 0 on
	// other architectures.
	X64Level      int `json:"x64_level,omitempty"`
	PhysicalCores int `json:"physical_cores"`
	LogicalCores  int `json:"logical_cores"`
	// Cache sizes in bytes (per core or shared, as cpuid reports); -1 when
	// unknown.
	L1D int `json:"l1d_bytes"`
	L2  int `json:"l2_bytes"`
	L3  int `json:"l3_bytes"`
	// MemoryBytes is the installed memory; 0 when unknown.
	MemoryBytes int64 `json:"memory_bytes"`
	// Hypervisor names the hypervisor when running in a virtual machine.
	Hypervisor string `json:"hypervisor,omitempty"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	// GOMAXPROCS at the time of measuring.
	GOMAXPROCS int `json:"gomaxprocs"`
}

// Cores returns the core count used in the machine ID: physical cores, or
// logical ones (or the CPUs Go sees) when cpuid cannot tell.
func (m Machine) Cores() int {
	switch {
	case m.PhysicalCores > 0:
		return m.PhysicalCores
	case m.LogicalCores > 0:
		return m.LogicalCores
	}
	return runtime.NumCPU()
}

// DetectMachine describes the machine the program runs on.
func DetectMachine() Machine {
	c := cpuid.CPU
	m := Machine{
		CPU:           strings.TrimSpace(c.BrandName),
		Vendor:        c.VendorString,
		Family:        c.Family,
		Model:         c.Model,
		Stepping:      c.Stepping,
		Features:      c.FeatureSet(),
		PhysicalCores: c.PhysicalCores,
		LogicalCores:  c.LogicalCores,
		L1D:           c.Cache.L1D,
		L2:            c.Cache.L2,
		L3:            c.Cache.L3,
		MemoryBytes:   memoryBytes(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
	}
	if runtime.GOARCH == "amd64" {
		m.X64Level = c.X64Level()
	}
	if c.VM() {
		m.Hypervisor = c.HypervisorVendorString
		if m.Hypervisor == "" {
			m.Hypervisor = "unknown"
		}
	}
	if m.CPU == "" {
		m.CPU = "unknown " + runtime.GOARCH + " CPU"
	}
	m.ID = m.Kind()
	return m
}

// memoryBytes reads the installed memory from /proc/meminfo; 0 elsewhere.
func memoryBytes() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// Provenance is where and when a record set was made.
type Provenance struct {
	GoVersion string `json:"go_version"`
	// Commit is the source's git commit ("unknown" outside a work tree),
	// and Dirty whether the work tree had changes.
	Commit string    `json:"commit"`
	Dirty  bool      `json:"dirty"`
	Date   time.Time `json:"date"`
	// Command is the command line that made the set.
	Command string `json:"command"`
}

// DetectProvenance returns the Go version, the commit of the running
// binary's source and the current time. The commit is the one the Go
// toolchain stamped into the binary (vcs.revision and vcs.modified, as
// go build does in a git work tree): a binary carried to another machine,
// or one of two builds timed side by side, names its own source, not the
// tree it happens to run in. Without a stamp (go run, go test, a build
// with -buildvcs=false) it asks git about the working directory, with a
// short timeout.
func DetectProvenance(command string) Provenance {
	p := Provenance{GoVersion: runtime.Version(), Commit: "unknown", Date: time.Now().UTC().Truncate(time.Second), Command: command}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if c, dirty, ok := stampedCommit(bi.Settings); ok {
			p.Commit, p.Dirty = c, dirty
			return p
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return p
	}
	p.Commit = strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		p.Dirty = len(strings.TrimSpace(string(st))) > 0
	}
	return p
}

// stampedCommit returns the commit and modified flag the Go toolchain
// stamped into a binary's build settings, and whether there was one.
func stampedCommit(settings []debug.BuildSetting) (commit string, dirty, ok bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty, commit != ""
}

// ShortCommit returns the first 10 characters of the commit, with
// "+dirty" when the work tree had changes.
func (p Provenance) ShortCommit() string {
	c := p.Commit
	if len(c) > 10 {
		c = c[:10]
	}
	if p.Dirty {
		c += "+dirty"
	}
	return c
}

// String describes the machine in one line: "AMD EPYC, 2 cores, 23.4 GiB".
func (m Machine) String() string {
	s := fmt.Sprintf("%s, %d cores", m.CPU, m.Cores())
	if m.MemoryBytes > 0 {
		s += fmt.Sprintf(", %.1f GiB", float64(m.MemoryBytes)/(1<<30))
	}
	return s
}
