package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const ncuHelp = `Usage: opbench ncu -gpu NAME [-out DIR] [-ncu PATH] [-only targets] [-details] [-dry-run]

On a machine with an NVIDIA GPU and Nsight Compute, profiles ten kernels
of the cuda backend, each in its own "opbench sweep" run under ncu (the
first launch of the kernel, all counters replayed):

  mmvq        quantized mat-vec        mul_mat q4_0 4096x4096, n=1
  mmq         int8 tile product        mul_mat q4_0 4096x4096, n=512
  mmf16       f16 tile product         mul_mat f16 4096x4096, n=512
  fa_prefill  flash attention prefill  flash_attn_ext f16, n=512, kv=512
  fa_decode   flash attention decode   flash_attn_ext f16, n=1, kv=4096
  soft_max    soft_max                 soft_max, n=512, kv=512
  mmq_splitk      int8 product split over k  mul_mat q4_0 4096x14336, n=64
  mmq_splitk_sum  its partials' sum          the same
  fa_decode_q8_0  decode, q8_0 K/V           flash_attn_ext q8_0, n=1, kv=4096
  mmid_f16        f16 MoE tile product       mul_mat_id f16 4096x4096, n=512,
                                             8 experts, 2 used

and records for each: global load and store requests and 32-byte sectors
(and sectors per request), shared-memory wavefronts and bank conflicts
(loads and stores), thread instructions per warp instruction (32 is no
divergence), DRAM bytes read and written, and the duration. They go to
DIR/ncu-DATE.json (DIR defaults to results/<gpu>), with ncu's raw CSV of
each target beside it (ncu-DATE-TARGET.csv).

-details profiles each target a second time with ncu's sections
(SpeedOfLight, Occupancy, LaunchStats, WarpStateStats,
ComputeWorkloadAnalysis, MemoryWorkloadAnalysis, SchedulerStats,
InstructionStats) and adds to its record every number of the details page
by "Section/Metric Name", ncu's rules (OPT ones with their estimated
speedup), the warp instructions executed and, for the targets with a
tensor-core product (mmq, mmf16, fa_prefill, mmq_splitk, mmid_f16), the
instructions per mma the product needs when dense; a line per target says
what limits it: time, instructions per mma, registers, shared memory,
blocks per SM, occupancy, issue and waves. The details page goes beside
the raw one (ncu-DATE-TARGET-details.csv).

When ncu may not read the counters (ERR_NVGPUCTRPERM: profiling needs
root or the driver's NVreg_RestrictProfilingAtAdminOnly=0), the record
says so for that target and the others still run. scripts/gpu-ncu.sh
runs all of it in one call. -dry-run prints the ncu command lines and
runs nothing.

Examples:

	opbench ncu -gpu H100 -dry-run
	opbench ncu -gpu H100 -only mmvq,soft_max
`

// ncuMetrics are the Nsight Compute metrics recorded, by their short
// names in the JSON.
var ncuMetrics = []struct{ short, metric string }{
	{"gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"},
	{"gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"},
	{"gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
	{"gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
	{"shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"},
	{"shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"},
	{"shared_ld_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"},
	{"shared_st_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"},
	{"thread_inst_per_warp_inst", "smsp__thread_inst_executed_per_inst_executed.ratio"},
	{"dram_bytes_read", "dram__bytes_read.sum"},
	{"dram_bytes_write", "dram__bytes_write.sum"},
	{"duration_ns", "gpu__time_duration.sum"},
}

// An ncuTarget is one kernel to profile: the sweep point that launches
// it and the regexp ncu picks the kernel by.
type ncuTarget struct {
	Name, What, Kernel string
	Sweep              []string
	// MMAs are the tensor-core instructions the point's product needs
	// when dense: int8 m16n8k32 (8192 ops) or f16 m16n8k16 (4096 FLOPs);
	// zero for kernels without one.
	MMAs float64
}

var ncuTargets = []ncuTarget{
	{"mmvq", "quantized mat-vec", "kb_mmvq1?_q4_0", []string{"-op", "mul_mat", "-type", "q4_0", "-m", "4096", "-k", "4096", "-n", "1"}, 0},
	{"mmq", "int8 tile product", "kb_mmq(128)?_", []string{"-op", "mul_mat", "-type", "q4_0", "-m", "4096", "-k", "4096", "-n", "512"}, 2 * 4096 * 4096 * 512 / 8192},
	{"mmf16", "f16 tile product", "kb_mm[hf](128x[0-9]+(w4)?)?_f16", []string{"-op", "mul_mat", "-type", "f16", "-m", "4096", "-k", "4096", "-n", "512"}, 2 * 4096 * 4096 * 512 / 4096},
	{"fa_prefill", "flash attention prefill", "kb_flash_attn_(mma|ext)_", []string{"-op", "flash_attn_ext", "-type", "f16", "-n", "512", "-kv", "512"}, 4 * 512 * 512 * 128 * 32 / 4096},
	{"fa_decode", "flash attention decode", "kb_flash_attn_(ext|vec)_", []string{"-op", "flash_attn_ext", "-type", "f16", "-n", "1", "-kv", "4096"}, 0},
	{"soft_max", "soft_max", "kb_soft_max_f32", []string{"-op", "soft_max", "-n", "512", "-kv", "512"}, 0},
	{"mmq_splitk", "int8 tile product split over k", "kb_mmq(128)?_q4_0", []string{"-op", "mul_mat", "-type", "q4_0", "-m", "4096", "-k", "14336", "-n", "64"}, 2 * 4096 * 14336 * 64 / 8192},
	{"mmq_splitk_sum", "split-k partials' sum", "kb_mmq_splitk_sum", []string{"-op", "mul_mat", "-type", "q4_0", "-m", "4096", "-k", "14336", "-n", "64"}, 0},
	{"fa_decode_q8_0", "flash attention decode, q8_0 K/V", "kb_flash_attn_vec_q8_0_", []string{"-op", "flash_attn_ext", "-type", "q8_0", "-n", "1", "-kv", "4096"}, 0},
	{"mmid_f16", "f16 MoE tile product", "kb_mmh(128x[0-9]+(w4)?)?_f16", []string{"-op", "mul_mat_id", "-type", "f16", "-m", "4096", "-k", "4096", "-n", "512", "-experts", "8", "-used", "2"}, 2 * 4096 * 4096 * 512 * 2 / 4096},
}

// ncuRecord is one target's result.
type ncuRecord struct {
	Target  string `json:"target"`
	What    string `json:"what"`
	Command string `json:"command"`
	// Kernel, Block and Grid are what ncu profiled.
	Kernel string `json:"kernel,omitempty"`
	Block  string `json:"block,omitempty"`
	Grid   string `json:"grid,omitempty"`
	// Metrics are by short name (ncuMetrics); Units by short name too.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Units   map[string]string  `json:"units,omitempty"`
	// Derived: sectors per request of global loads and stores.
	LoadSectorsPerRequest  float64 `json:"gld_sectors_per_request,omitempty"`
	StoreSectorsPerRequest float64 `json:"gst_sectors_per_request,omitempty"`
	// Details is the details page (-details only).
	Details *ncuDetails `json:"details,omitempty"`
	// Error is "ERR_NVGPUCTRPERM" when ncu could not read the counters,
	// else what went wrong; Message is ncu's line.
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`
}

// ncuReport is the JSON file.
type ncuReport struct {
	GPU        string      `json:"gpu"`
	Date       string      `json:"date"`
	NCUVersion string      `json:"ncu_version,omitempty"`
	Note       string      `json:"note"`
	Records    []ncuRecord `json:"records"`
}

// runNCU is "opbench ncu".
func runNCU(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ncu")
	gpu := fs.String("gpu", "", "the GPU's name for the records (such as H100); required")
	out := fs.String("out", "", "directory for the records (default results/<gpu>)")
	ncuPath := fs.String("ncu", "ncu", "the Nsight Compute command line")
	only := fs.String("only", "", "comma-separated targets (default all)")
	dry := fs.Bool("dry-run", false, "print the ncu command lines and run nothing")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per target")
	details := fs.Bool("details", false, "also collect ncu's details page (sections, rules) per target")
	pos, help, err := parseArgs(fs, args)
	if help {
		fmt.Fprint(stdout, ncuHelp)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil && !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`).MatchString(*gpu) {
		err = fmt.Errorf("-gpu: want a name of letters, digits, '.', '_' and '-' (such as H100), not %q", *gpu)
	}
	var targets []ncuTarget
	if err == nil {
		targets, err = selectNCUTargets(splitList(*only))
	}
	if err != nil {
		return usageError(stderr, "ncu", flagErr(err))
	}
	if *out == "" {
		*out = filepath.Join("results", *gpu)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "opbench ncu: %v\n", err)
		return exitFailure
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	base := filepath.Join(*out, "ncu-"+stamp)
	if *dry {
		for _, tg := range targets {
			fmt.Fprintln(stdout, shellQuote(ncuCommand(*ncuPath, self, tg, base+"-"+tg.Name+".csv", filepath.Join(os.TempDir(), "ncu-sweep"))))
			if *details {
				fmt.Fprintln(stdout, shellQuote(ncuDetailsCommand(*ncuPath, self, tg, base+"-"+tg.Name+"-details.csv", filepath.Join(os.TempDir(), "ncu-sweep"))))
			}
		}
		return exitOK
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "opbench ncu: %v\n", err)
		return exitFailure
	}
	rep := ncuReport{GPU: *gpu, Date: time.Now().UTC().Format(time.RFC3339),
		Note: "measured by Nsight Compute on a real GPU: the first launch of each kernel, counters replayed; compare with the emulator's counters, never with its timings"}
	if v, err := exec.Command(*ncuPath, "--version").CombinedOutput(); err == nil {
		rep.NCUVersion = strings.TrimSpace(lastLine(string(v)))
	}
	failed := 0
	for _, tg := range targets {
		fmt.Fprintf(stderr, "ncu: %s (%s)\n", tg.Name, tg.What)
		rec := profileTarget(*ncuPath, self, tg, base+"-"+tg.Name+".csv", *timeout)
		if *details && rec.Error == "" {
			rec.Details, rec.Error, rec.Message = profileDetails(*ncuPath, self, tg, base+"-"+tg.Name+"-details.csv", *timeout)
			if rec.Details != nil {
				fmt.Fprintf(stdout, "%-15s %s\n", tg.Name, ncuDetailsSummary(*rec.Details))
			}
		}
		if rec.Error != "" {
			failed++
			fmt.Fprintf(stderr, "ncu: %s: %s %s\n", tg.Name, rec.Error, rec.Message)
		}
		rep.Records = append(rep.Records, rec)
	}
	if err := writeJSONFile(base+".json", rep); err != nil {
		fmt.Fprintf(stderr, "opbench ncu: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote %s (%d of %d targets profiled)\n", base+".json", len(targets)-failed, len(targets))
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// selectNCUTargets returns the named targets, or all.
func selectNCUTargets(names []string) ([]ncuTarget, error) {
	if len(names) == 0 {
		return ncuTargets, nil
	}
	var out []ncuTarget
	for _, n := range names {
		found := false
		for _, tg := range ncuTargets {
			if tg.Name == n {
				out, found = append(out, tg), true
			}
		}
		if !found {
			var known []string
			for _, tg := range ncuTargets {
				known = append(known, tg.Name)
			}
			return nil, fmt.Errorf("-only: unknown target %q (known: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// ncuCommand returns the command line profiling tg: ncu writing its CSV
// to logFile, around an opbench sweep of one short point on the cuda
// backend (no validation: the counters are the point) into sweepDir.
func ncuCommand(ncu, opbench string, tg ncuTarget, logFile, sweepDir string) []string {
	metrics := make([]string, len(ncuMetrics))
	for i, m := range ncuMetrics {
		metrics[i] = m.metric
	}
	cmd := []string{ncu, "--csv", "--page", "raw", "--print-units", "base", "--log-file", logFile,
		"--kernel-name", "regex:" + tg.Kernel, "--launch-count", "1", "--metrics", strings.Join(metrics, ",")}
	return append(cmd, ncuSweepArgs(opbench, tg, sweepDir)...)
}

// ncuSweepArgs is the opbench sweep ncu runs for tg: one short point on
// the cuda backend, not validated (the counters are the point).
func ncuSweepArgs(opbench string, tg ncuTarget, sweepDir string) []string {
	cmd := []string{opbench, "sweep", "-backend", "cuda", "-time", "1ms", "-min-samples", "3", "-ref-budget", "-1",
		"-roofline", "off", "-out", sweepDir, "-name", "ncu-" + tg.Name}
	return append(cmd, tg.Sweep...)
}

// runNCU1 runs one ncu command line within timeout and returns the CSV
// it wrote to csvFile (empty if none), what it printed, and how it ended.
func runNCU1(argv []string, csvFile string, timeout time.Duration) (logText, output string, runErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr = cmd.Run()
	b, _ := os.ReadFile(csvFile)
	return string(b), out.String(), runErr
}

// profileDetails runs ncu's sections on tg and reads its details page;
// on failure it returns the record's error and message.
func profileDetails(ncu, opbench string, tg ncuTarget, csvFile string, timeout time.Duration) (*ncuDetails, string, string) {
	sweepDir, err := os.MkdirTemp("", "ncu-sweep")
	if err != nil {
		return nil, "setup", err.Error()
	}
	defer os.RemoveAll(sweepDir)
	logText, output, runErr := runNCU1(ncuDetailsCommand(ncu, opbench, tg, csvFile, sweepDir), csvFile, timeout)
	if code, line := ncuError(logText + "\n" + output); code != "" {
		return nil, code, "details: " + line
	}
	kernels, err := parseNCUDetails(logText)
	if err != nil {
		if runErr != nil {
			return nil, "ncu failed", fmt.Sprintf("details: %v: %s", runErr, lastLine(output))
		}
		return nil, "unreadable ncu details", err.Error()
	}
	d := kernels[0].Details
	if tg.MMAs > 0 && d.WarpInstructions > 0 {
		d.InstructionsPerMMA = d.WarpInstructions / tg.MMAs
	}
	return &d, "", ""
}

// profileTarget runs ncu on tg and reads its CSV.
func profileTarget(ncu, opbench string, tg ncuTarget, csvFile string, timeout time.Duration) ncuRecord {
	sweepDir, err := os.MkdirTemp("", "ncu-sweep")
	if err != nil {
		return ncuRecord{Target: tg.Name, What: tg.What, Error: "setup", Message: err.Error()}
	}
	defer os.RemoveAll(sweepDir)
	argv := ncuCommand(ncu, opbench, tg, csvFile, sweepDir)
	rec := ncuRecord{Target: tg.Name, What: tg.What, Command: shellQuote(argv)}
	logText, output, runErr := runNCU1(argv, csvFile, timeout)
	if code, line := ncuError(logText + "\n" + output); code != "" {
		rec.Error, rec.Message = code, line
		return rec
	}
	kernels, err := parseNCURaw(logText)
	switch {
	case err != nil && runErr != nil:
		rec.Error, rec.Message = "ncu failed", fmt.Sprintf("%v: %s", runErr, lastLine(output))
		return rec
	case err != nil:
		rec.Error, rec.Message = "unreadable ncu output", err.Error()
		return rec
	}
	k := kernels[0]
	rec.Kernel, rec.Block, rec.Grid = k.Kernel, k.Block, k.Grid
	rec.Metrics, rec.Units = map[string]float64{}, map[string]string{}
	for _, m := range ncuMetrics {
		v, ok := k.Values[m.metric]
		if !ok {
			rec.Error = "missing metric"
			rec.Message = m.metric
			continue
		}
		rec.Metrics[m.short] = v
		if u := k.Units[m.metric]; u != "" {
			rec.Units[m.short] = u
		}
	}
	if r := rec.Metrics["gld_requests"]; r > 0 {
		rec.LoadSectorsPerRequest = rec.Metrics["gld_sectors"] / r
	}
	if r := rec.Metrics["gst_requests"]; r > 0 {
		rec.StoreSectorsPerRequest = rec.Metrics["gst_sectors"] / r
	}
	return rec
}

// ncuError finds an error ncu reported: ERR_NVGPUCTRPERM (or another
// ERR_ code) and its line, or "ncu error" and the first ==ERROR== line.
func ncuError(text string) (code, line string) {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if m := regexp.MustCompile(`\bERR_[A-Z_]+\b`).FindString(l); m != "" {
			return m, l
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "==ERROR==") {
			return "ncu error", l
		}
	}
	return "", ""
}

// ncuKernel is one profiled launch of ncu's raw page.
type ncuKernel struct {
	Kernel, Block, Grid string
	Values              map[string]float64
	Units               map[string]string
	// Text holds the columns whose value is not a number (device and
	// launch attributes such as device__attribute_display_name).
	Text map[string]string
}

// parseNCURaw reads ncu's --csv --page raw output: a header row of
// column names ("ID", ..., "Kernel Name", ..., then the metrics), with
// --print-units base a row of units, then a row per profiled launch.
// Lines ncu writes around it (==PROF==, ==WARNING==) are skipped.
// Metric values are numbers, possibly with thousands separators; "n/a"
// leaves a metric out. The raw page also carries the device's and the
// launch's attributes, some of them words ("No-CC", "PolicySpread",
// "NVIDIA H200"): those go to Text. A word in a column of ncuMetrics is
// an error.
func parseNCURaw(text string) ([]ncuKernel, error) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "==") {
			lines = append(lines, l)
		}
	}
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), `"ID"`) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, errors.New("ncu CSV: no header row (\"ID\",...)")
	}
	r := csv.NewReader(strings.NewReader(strings.Join(lines[start:], "\n")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("ncu CSV: %w", err)
	}
	head := rows[0]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"Kernel Name", "Block Size", "Grid Size"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("ncu CSV: no %q column", need)
		}
	}
	rows = rows[1:]
	var units []string
	if len(rows) > 0 && rows[0][col["Kernel Name"]] == "" {
		units, rows = rows[0], rows[1:]
	}
	if len(rows) == 0 {
		return nil, errors.New("ncu CSV: no profiled kernel (did the kernel regexp match a launch?)")
	}
	var out []ncuKernel
	for n, row := range rows {
		if len(row) != len(head) {
			return nil, fmt.Errorf("ncu CSV: row %d has %d fields, the header %d", n+1, len(row), len(head))
		}
		k := ncuKernel{Kernel: row[col["Kernel Name"]], Block: row[col["Block Size"]], Grid: row[col["Grid Size"]],
			Values: map[string]float64{}, Units: map[string]string{}, Text: map[string]string{}}
		for i, h := range head {
			if !strings.Contains(h, "__") { // metric names have a double underscore
				continue
			}
			s := strings.ReplaceAll(strings.TrimSpace(row[i]), ",", "")
			if s == "" || s == "n/a" {
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				if isNCUMetric(h) {
					return nil, fmt.Errorf("ncu CSV: row %d, %s: %q is not a number", n+1, h, row[i])
				}
				k.Text[h] = strings.TrimSpace(row[i])
				continue
			}
			k.Values[h] = v
			if units != nil && i < len(units) {
				k.Units[h] = units[i]
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// isNCUMetric reports whether column h is one of ncuMetrics.
func isNCUMetric(h string) bool {
	for _, m := range ncuMetrics {
		if m.metric == h {
			return true
		}
	}
	return false
}

// shellQuote joins argv for a shell, quoting where needed.
func shellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()[]*?{}!#~") {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}

// lastLine returns s's last non-empty line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
