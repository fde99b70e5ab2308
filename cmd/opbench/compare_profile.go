package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// readProfileSet reads path as opbench profile's JSON records; ok is
// false when the file is not one (then it is a sweep's record set).
func readProfileSet(path string) (set *profileSet, ok bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	if !bytes.Contains(b, []byte(`"`+ProfileSchema+`"`)) {
		return nil, false, nil
	}
	var s profileSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != ProfileSchema {
		return nil, false, nil
	}
	return &s, true, nil
}

// profileMetric is one counter compared between two profiles: higher is
// worse unless higher is set; a neutral one is shown with no verdict.
type profileMetric struct {
	name    string
	get     func(k *profileKernel) float64
	higher  bool // higher is better
	neutral bool // no verdict either way
	// verdict, where set, judges a change from a to b instead of higher
	// and neutral: "better", "WORSE" or "neutral".
	verdict func(a, b float64) string
}

// Sectors per request are neutral: wider loads (16 bytes a lane) raise
// them by design while cutting the requests, so a kernel's global loads
// are judged by the share of the moved bytes the lanes used (gld bytes
// used) and by the requests.
var profileMetrics = []profileMetric{
	{name: "gld sectors/req", get: func(k *profileKernel) float64 { return k.GlobalLoads.SectorsPerRequest() }, neutral: true},
	{name: "gst sectors/req", get: func(k *profileKernel) float64 { return k.GlobalStores.SectorsPerRequest() }, neutral: true},
	{name: "gld bytes used", get: func(k *profileKernel) float64 { return k.GlobalLoads.Efficiency() }, higher: true},
	{name: "gst bytes used", get: func(k *profileKernel) float64 { return k.GlobalStores.Efficiency() }, higher: true},
	{name: "global requests", get: func(k *profileKernel) float64 {
		return float64(k.GlobalLoads.Requests + k.GlobalStores.Requests + k.Atomics.Requests)
	}},
	{name: "shared wavefronts", get: func(k *profileKernel) float64 {
		return float64(k.SharedLoads.Wavefronts + k.SharedStores.Wavefronts)
	}},
	{name: "bank conflicts", get: func(k *profileKernel) float64 {
		return float64(k.SharedLoads.BankConflicts() + k.SharedStores.BankConflicts())
	}},
	{name: "warp efficiency", get: func(k *profileKernel) float64 { return k.WarpEfficiency() }, higher: true},
	{name: "DRAM bytes", get: func(k *profileKernel) float64 { return k.DRAMBytes() }},
	{name: "tensor share", get: func(k *profileKernel) float64 { return k.TensorShare }, higher: true, verdict: shareVerdict},
	{name: "estimate", get: func(k *profileKernel) float64 {
		if len(k.Estimates) == 0 {
			return 0
		}
		return k.Estimates[0].Seconds
	}},
}

// shareVerdict judges a change of a kernel's tensor share (its tensor
// FLOPs over the op's): more of the op on the tensor cores is better, up
// to all of it (1). Past 1 the rest is tensor work the op does not ask
// for (padding, or a second product such as q2_K's mins in
// kb_mmq128_q2_K), which the estimate weighs against what it saves, so a
// change above 1 gets no verdict, and one across it is judged on the
// share up to 1.
func shareVerdict(a, b float64) string {
	ca, cb := min(a, 1), min(b, 1)
	switch {
	case ca == cb:
		return "neutral"
	case cb > ca:
		return "better"
	}
	return "WORSE"
}

// compareProfiles prints the counters that differ by more than 1%
// between two profile record sets, kernel by kernel, and returns how many
// got worse. Kernels are joined on op, type, shape, backend, kernel name
// and its launch number in the point; then the kernels of a point left
// over on both sides (a kernel replaced by another of a new name, such
// as kb_mmq_q4_0 by kb_mmq128_q4_0) are joined in launch order when both
// sides have as many, and shown as "A-name -> B-name".
func compareProfiles(w io.Writer, a, b *profileSet, pathA, pathB string) (worse int, err error) {
	fmt.Fprintf(w, "A: %s (commit %s, %s)\nB: %s (commit %s, %s)\n", pathA, short(a.Provenance.Commit), a.Provenance.Date.Format("2006-01-02 15:04"),
		pathB, short(b.Provenance.Commit), b.Provenance.Date.Format("2006-01-02 15:04"))
	key := func(p profilePoint) string { return strings.Join([]string{p.Op, p.Type, p.Shape, p.Backend}, " ") }
	bp := map[string]profilePoint{}
	for _, p := range b.Points {
		bp[key(p)] = p
	}
	var rows [][]string
	joined := 0
	compare := func(point, name string, x, y *profileKernel) {
		joined++
		for _, m := range profileMetrics {
			va, vb := m.get(x), m.get(y)
			if va == vb || math.Abs(vb-va) <= 0.01*math.Max(math.Abs(va), math.Abs(vb)) {
				continue
			}
			verdict := "better"
			switch {
			case m.verdict != nil:
				verdict = m.verdict(va, vb)
			case m.neutral:
				verdict = "neutral"
			case (vb > va) != m.higher:
				verdict = "WORSE"
			}
			if verdict == "WORSE" {
				worse++
			}
			rows = append(rows, []string{point, name, m.name, fmt.Sprintf("%.4g", va), fmt.Sprintf("%.4g", vb), verdict})
		}
	}
	for _, pa := range a.Points {
		pb, ok := bp[key(pa)]
		if !ok {
			fmt.Fprintf(w, "only in A: %s\n", key(pa))
			continue
		}
		delete(bp, key(pa))
		la, lb := launches(pa), launches(pb)
		byName := map[string]*profileKernel{}
		for _, l := range lb {
			byName[l.name] = l.k
		}
		var leftA []launch
		for _, l := range la {
			y, ok := byName[l.name]
			if !ok {
				leftA = append(leftA, l)
				continue
			}
			delete(byName, l.name)
			compare(key(pa), strings.TrimSuffix(l.name, "#0"), l.k, y)
		}
		var leftB []launch
		for _, l := range lb {
			if _, ok := byName[l.name]; ok {
				leftB = append(leftB, l)
			}
		}
		if len(leftA) == len(leftB) {
			for i, l := range leftA {
				compare(key(pa), strings.TrimSuffix(l.name, "#0")+" -> "+strings.TrimSuffix(leftB[i].name, "#0"), l.k, leftB[i].k)
			}
			continue
		}
		for _, l := range leftA {
			fmt.Fprintf(w, "only in A: %s kernel %s\n", key(pa), l.name)
		}
		for _, l := range leftB {
			fmt.Fprintf(w, "only in B: %s kernel %s\n", key(pa), l.name)
		}
	}
	for _, p := range b.Points {
		if _, ok := bp[key(p)]; ok {
			fmt.Fprintf(w, "only in B: %s\n", key(p))
		}
	}
	if joined == 0 {
		return 0, fmt.Errorf("no kernel is in both sets")
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "%d kernels: no counter differs by more than 1%%\n", joined)
		return 0, nil
	}
	if err := renderTable(w, []string{"point", "kernel", "counter", "A", "B", "B vs A"}, rows); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "%d kernels, %d counters changed by more than 1%%, %d worse\n", joined, len(rows), worse)
	return worse, nil
}

// A launch is one kernel launch of a profiled point, named by its kernel
// and its launch number among that kernel's launches in the point
// ("kb_mmq128_q4_0#0").
type launch struct {
	name string
	k    *profileKernel
}

// launches lists p's kernel launches in launch order.
func launches(p profilePoint) []launch {
	seen := map[string]int{}
	out := make([]launch, len(p.Kernels))
	for i := range p.Kernels {
		k := &p.Kernels[i]
		out[i] = launch{fmt.Sprintf("%s#%d", k.Kernel, seen[k.Kernel]), k}
		seen[k.Kernel]++
	}
	return out
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
