// Package cudatools reads what NVIDIA's compiler tools say about compiled
// CUDA kernels: ptxas's verbose resource report (registers, spills,
// shared memory), cuobjdump's SASS listing (the instruction mix that shows
// tensor cores, cp.async, ldmatrix and load widths), and the theoretical
// occupancy those resources allow on a named GPU. It finds and runs the
// stand-alone tools (cuobjdump) but has no CUDA dependency of its own:
// the parsers take text, so they are tested on captured output.
package cudatools

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Resources is ptxas's report on one entry function.
type Resources struct {
	Name string
	Arch string // "sm_90"
	// Registers is the registers per thread.
	Registers int
	// StackFrame, SpillStores and SpillLoads are bytes per thread of
	// local memory: a non-zero spill means registers did not suffice.
	StackFrame, SpillStores, SpillLoads int
	// SharedStatic is the static shared memory per block, in bytes
	// (dynamic shared memory is the launch's).
	SharedStatic int
	// Constant0 is the bytes of constant bank 0 (kernel parameters and
	// driver constants), where ptxas reports it.
	Constant0 int
	// Barriers is the named barriers the function uses (ptxas 12.x and
	// later report "used N barriers"; -1 where it did not say).
	Barriers int
	// CumulativeStack is the bytes of stack the function and what it
	// calls need per thread (ptxas 13 reports it where a function uses
	// the stack).
	CumulativeStack int
}

// Spills reports whether the function spills registers to local memory.
func (r Resources) Spills() bool { return r.SpillStores > 0 || r.SpillLoads > 0 }

var (
	reCompiling  = regexp.MustCompile(`^ptxas info\s*: Compiling entry function '([^']+)' for '(sm_\w+)'$`)
	reProperties = regexp.MustCompile(`^ptxas info\s*: Function properties for (\S+)$`)
	reFrame      = regexp.MustCompile(`^ptxas\s+\.\s+(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads$`)
	reUsed       = regexp.MustCompile(`^ptxas info\s*: Used (\d+) registers(.*)$`)
	reUsedPart   = regexp.MustCompile(`^(\d+) bytes (smem|cmem\[0\]|cmem\[\d+\]|lmem|gmem)$`)
	reBarriers   = regexp.MustCompile(`^used (\d+) barriers?$`)
	reCumStack   = regexp.MustCompile(`^(\d+) bytes cumulative stack size$`)
	reBindings   = regexp.MustCompile(`^(\d+) (textures?|samplers?|surfaces?)$`)
)

// ParsePtxasReport reads ptxas's verbose output (ptxas -v, or NVRTC's
// log with --ptxas-options=-v) and returns the entry functions in the
// order reported. Lines it does not know (warnings, gmem totals, device
// functions' properties) are skipped; a function whose report is cut
// short, or a known line with unexpected fields, is an error naming the
// line.
func ParsePtxasReport(text string) ([]Resources, error) {
	var out []Resources
	var cur *Resources // the entry function being reported
	haveFrame, inEntry := false, false
	finish := func(line int) error {
		if cur == nil {
			return nil
		}
		if !haveFrame {
			return fmt.Errorf("ptxas report, line %d: entry function %s has no stack frame/spill line", line, cur.Name)
		}
		if cur.Registers == 0 {
			return fmt.Errorf("ptxas report, line %d: entry function %s has no \"Used N registers\" line", line, cur.Name)
		}
		out = append(out, *cur)
		cur, haveFrame = nil, false
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if m := reCompiling.FindStringSubmatch(line); m != nil {
			if err := finish(n); err != nil {
				return nil, err
			}
			cur = &Resources{Name: m[1], Arch: m[2], Barriers: -1}
			inEntry = true
			continue
		}
		if m := reProperties.FindStringSubmatch(line); m != nil {
			// A device function's properties follow its own header;
			// only the entry function's are kept.
			inEntry = cur != nil && m[1] == cur.Name
			continue
		}
		if strings.HasPrefix(line, "ptxas") && strings.Contains(line, "bytes stack frame") {
			m := reFrame.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("ptxas report, line %d: cannot read %q", n, line)
			}
			if cur != nil && inEntry {
				cur.StackFrame, cur.SpillStores, cur.SpillLoads = atoi(m[1]), atoi(m[2]), atoi(m[3])
				haveFrame = true
			}
			continue
		}
		if m := reUsed.FindStringSubmatch(line); m != nil {
			if cur == nil {
				return nil, fmt.Errorf("ptxas report, line %d: %q before any entry function", n, line)
			}
			cur.Registers = atoi(m[1])
			for _, part := range strings.Split(m[2], ",") {
				part = strings.TrimSpace(part)
				if part == "" {
					continue
				}
				if bm := reBarriers.FindStringSubmatch(part); bm != nil {
					cur.Barriers = atoi(bm[1])
					continue
				}
				if sm := reCumStack.FindStringSubmatch(part); sm != nil {
					cur.CumulativeStack = atoi(sm[1])
					continue
				}
				if reBindings.MatchString(part) {
					continue
				}
				pm := reUsedPart.FindStringSubmatch(part)
				if pm == nil {
					return nil, fmt.Errorf("ptxas report, line %d: cannot read %q in %q", n, part, line)
				}
				switch pm[2] {
				case "smem":
					cur.SharedStatic = atoi(pm[1])
				case "cmem[0]":
					cur.Constant0 = atoi(pm[1])
				}
			}
			if err := finish(n); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(line, "ptxas fatal") || strings.HasPrefix(line, "ptxas error") {
			return nil, fmt.Errorf("ptxas report, line %d: %s", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ptxas report: %w", err)
	}
	if cur != nil {
		return nil, fmt.Errorf("ptxas report: entry function %s is cut short (no \"Used N registers\" line)", cur.Name)
	}
	return out, nil
}

// atoi converts a string the regexps matched as digits.
func atoi(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil {
		return -1 // only on overflow: shows as an impossible value
	}
	return v
}
