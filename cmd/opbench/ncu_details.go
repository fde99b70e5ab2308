package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ncuSections are the Nsight Compute sections "opbench ncu -details"
// collects: enough to say what limits a kernel (issue, latency, memory,
// occupancy) and why.
var ncuSections = []string{
	"SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
	"ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis", "SchedulerStats", "InstructionStats",
}

// An ncuValue is one number of ncu's details page with its unit as ncu
// writes it ("us", "Kbyte/block", "%", "inst").
type ncuValue struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// An ncuRule is one of the rules ncu's sections apply to a launch: its
// name, type (OPT: an optimization with an estimated speedup; WRN, INF)
// and text.
type ncuRule struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Speedup     float64 `json:"estimated_speedup_pct,omitempty"`
	Description string  `json:"description"`
}

// ncuDetails is a launch's details page: every number by "Section/Metric
// Name", the rules, and what the record derives from them.
type ncuDetails struct {
	Values map[string]ncuValue `json:"values"`
	Rules  []ncuRule           `json:"rules,omitempty"`
	// WarpInstructions are the warp-level instructions executed;
	// InstructionsPerMMA divides them by the tensor-core instructions
	// the target's product needs when dense (zero for targets without
	// one: a kernel that skips masked tiles issues fewer).
	WarpInstructions   float64 `json:"warp_instructions,omitempty"`
	InstructionsPerMMA float64 `json:"instructions_per_dense_mma,omitempty"`
}

// ncuDetailsKernel is one profiled launch of ncu's details page.
type ncuDetailsKernel struct {
	Kernel, Block, Grid string
	Details             ncuDetails
}

// parseNCUDetails reads ncu's --csv --page details output: a header
// ("ID", ..., "Section Name", "Metric Name", "Metric Unit", "Metric
// Value", "Rule Name", ...), then a row per metric or rule of each launch.
// Values that are not numbers ("PolicySpread", "no data") are left out;
// numbers may carry thousands separators.
func parseNCUDetails(text string) ([]ncuDetailsKernel, error) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "==") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || !strings.HasPrefix(strings.TrimSpace(lines[0]), `"ID"`) {
		return nil, errors.New("ncu details CSV: no header row (\"ID\",...)")
	}
	r := csv.NewReader(strings.NewReader(strings.Join(lines, "\n")))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("ncu details CSV: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"ID", "Kernel Name", "Block Size", "Grid Size", "Section Name", "Metric Name", "Metric Unit", "Metric Value"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("ncu details CSV: no %q column", need)
		}
	}
	field := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return strings.TrimSpace(row[i])
		}
		return ""
	}
	var out []ncuDetailsKernel
	byID := map[string]int{}
	for n := 1; ; n++ {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ncu details CSV: row %d: %w", n, err)
		}
		if len(row) < col["Metric Value"]+1 {
			return nil, fmt.Errorf("ncu details CSV: row %d has %d fields", n, len(row))
		}
		id := field(row, "ID")
		k, ok := byID[id]
		if !ok {
			k = len(out)
			byID[id] = k
			out = append(out, ncuDetailsKernel{Kernel: field(row, "Kernel Name"), Block: field(row, "Block Size"),
				Grid: field(row, "Grid Size"), Details: ncuDetails{Values: map[string]ncuValue{}}})
		}
		d := &out[k].Details
		if rule := field(row, "Rule Name"); rule != "" {
			sp, _ := strconv.ParseFloat(strings.ReplaceAll(field(row, "Estimated Speedup"), ",", ""), 64)
			d.Rules = append(d.Rules, ncuRule{Name: rule, Type: field(row, "Rule Type"), Speedup: sp, Description: field(row, "Rule Description")})
			continue
		}
		name := field(row, "Metric Name")
		if name == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(field(row, "Metric Value"), ",", ""), 64)
		if err != nil {
			continue // a word: a policy, a cache configuration, "no data"
		}
		d.Values[field(row, "Section Name")+"/"+name] = ncuValue{Value: v, Unit: field(row, "Metric Unit")}
	}
	if len(out) == 0 {
		return nil, errors.New("ncu details CSV: no profiled kernel (did the kernel regexp match a launch?)")
	}
	for i := range out {
		if v, ok := out[i].Details.Values["Instruction Statistics/Executed Instructions"]; ok {
			out[i].Details.WarpInstructions = v.Value
		}
	}
	return out, nil
}

// ncuDetailsSummary is one line for a target's details: time, the
// instructions per dense mma where the target has a product, registers,
// shared memory, blocks per SM, occupancy, issue and the waves.
func ncuDetailsSummary(d ncuDetails) string {
	get := func(key string) (float64, string) { v := d.Values[key]; return v.Value, v.Unit }
	var parts []string
	if v, u := get("GPU Speed Of Light Throughput/Duration"); u != "" {
		parts = append(parts, fmt.Sprintf("%.4g %s", v, u))
	}
	if d.InstructionsPerMMA > 0 {
		parts = append(parts, fmt.Sprintf("%.1f instr/mma", d.InstructionsPerMMA))
	}
	regs, _ := get("Launch Statistics/Registers Per Thread")
	dyn, du := get("Launch Statistics/Dynamic Shared Memory Per Block")
	blocksRegs, _ := get("Occupancy/Block Limit Registers")
	blocksSmem, _ := get("Occupancy/Block Limit Shared Mem")
	ach, _ := get("Occupancy/Achieved Occupancy")
	busy, _ := get("Compute Workload Analysis/Issue Slots Busy")
	noElig, _ := get("Scheduler Statistics/No Eligible")
	waves, _ := get("Launch Statistics/Waves Per SM")
	parts = append(parts, fmt.Sprintf("%.0f regs", regs), fmt.Sprintf("%.4g %s smem", dyn, strings.TrimSuffix(du, "/block")),
		fmt.Sprintf("blocks/SM by regs %.0f, by smem %.0f", blocksRegs, blocksSmem),
		fmt.Sprintf("occupancy %.1f%%", ach), fmt.Sprintf("issue busy %.1f%%", busy),
		fmt.Sprintf("no eligible %.1f%%", noElig), fmt.Sprintf("%.2f waves", waves))
	return strings.Join(parts, ", ")
}

// ncuDetailsCommand returns the command line collecting tg's details
// page into logFile (see ncuCommand for the sweep it wraps).
func ncuDetailsCommand(ncu, opbench string, tg ncuTarget, logFile, sweepDir string) []string {
	cmd := []string{ncu, "--csv", "--page", "details", "--log-file", logFile}
	for _, s := range ncuSections {
		cmd = append(cmd, "--section", s)
	}
	cmd = append(cmd, "--kernel-name", "regex:"+tg.Kernel, "--launch-count", "1")
	return append(cmd, ncuSweepArgs(opbench, tg, sweepDir)...)
}
