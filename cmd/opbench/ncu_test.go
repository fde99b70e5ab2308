package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testdata/ncu-raw.csv is written by hand in the layout of ncu's --csv
// --page raw --print-units base output (the header, a units row, a row
// per launch, ==PROF== lines around them): no GPU was at hand to capture
// the real thing.
func TestParseNCURaw(t *testing.T) {
	b, err := os.ReadFile("testdata/ncu-raw.csv")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := parseNCURaw(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 {
		t.Fatalf("%d kernels", len(ks))
	}
	k := ks[0]
	if k.Kernel != "kb_mmvq_q4_0" || k.Block != "(128, 1, 1)" || k.Grid != "(1024, 1, 1)" {
		t.Errorf("kernel %q block %q grid %q", k.Kernel, k.Block, k.Grid)
	}
	for m, want := range map[string]float64{
		"dram__bytes_read.sum": 9535488, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1179648,
		"smsp__thread_inst_executed_per_inst_executed.ratio": 31.86, "gpu__time_duration.sum": 7840,
	} {
		if k.Values[m] != want {
			t.Errorf("%s = %v, want %v", m, k.Values[m], want)
		}
	}
	if len(k.Values) != len(ncuMetrics) {
		t.Errorf("%d metrics, want %d", len(k.Values), len(ncuMetrics))
	}
	if k.Units["gpu__time_duration.sum"] != "nsecond" {
		t.Errorf("units %v", k.Units)
	}
	text := string(b)
	for _, tt := range []struct{ name, text, want string }{
		{"empty", "", "no header row"},
		{"no rows", text[:strings.Index(text, `"0","4242"`)], "no profiled kernel"},
		{"bad number", strings.Replace(text, `"31.86"`, `"many"`, 1), `"many" is not a number`},
		{"short row", strings.Replace(text, `,"31.86"`, "", 1), "has 22 fields, the header 23"},
		{"no kernel column", strings.Replace(text, `"Kernel Name"`, `"Name"`, 1), `no "Kernel Name" column`},
	} {
		if _, err := parseNCURaw(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNCUError(t *testing.T) {
	for _, tt := range []struct{ text, code string }{
		{"==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.\n", "ERR_NVGPUCTRPERM"},
		{"==ERROR== The application returned an error code (1).\n", "ncu error"},
		{"==PROF== Disconnected\n", ""},
	} {
		if code, _ := ncuError(tt.text); code != tt.code {
			t.Errorf("ncuError(%q) = %q, want %q", tt.text, code, tt.code)
		}
	}
}

func TestNCUUsage(t *testing.T) {
	tests := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"ncu", "-h"}, exitOK, "ERR_NVGPUCTRPERM", ""},
		{[]string{"ncu"}, exitUsage, "", "-gpu: want a name"},
		{[]string{"ncu", "-gpu", "H 100"}, exitUsage, "", "-gpu: want a name"},
		{[]string{"ncu", "-gpu", "H100", "-only", "mmvq,nope"}, exitUsage, "", `unknown target "nope" (known: mmvq, mmq, mmf16, fa_prefill, fa_decode, soft_max, mmq_splitk, mmq_splitk_sum, fa_decode_q8_0, mmid_f16)`},
		{[]string{"ncu", "-gpu", "H100", "x"}, exitUsage, "", `unexpected argument "x"`},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("opbench %q: code %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.stdout, tt.stderr)
		}
	}
	// -dry-run: one ncu command per target, with every metric.
	code, out, errOut := runArgs("ncu", "-gpu", "H100", "-dry-run", "-ncu", "/opt/ncu")
	if code != exitOK {
		t.Fatalf("-dry-run: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(ncuTargets) {
		t.Fatalf("-dry-run printed %d lines, want %d:\n%s", len(lines), len(ncuTargets), out)
	}
	for i, l := range lines {
		tg := ncuTargets[i]
		for _, want := range []string{"/opt/ncu --csv --page raw", "regex:" + tg.Kernel, ncuMetrics[0].metric, " sweep -backend cuda ", strings.Join(tg.Sweep, " "), filepath.Join("results", "H100", "ncu-")} {
			if !strings.Contains(l, want) {
				t.Errorf("-dry-run line %d lacks %q:\n%s", i, want, l)
			}
		}
	}
}

// fakeNCU writes a shell script that stands in for ncu: it writes the
// sample CSV to the --log-file path, the real details page of
// kb_mmq128_q4_0 for --page details (or, with perm, prints ncu's
// ERR_NVGPUCTRPERM error and exits 1).
func fakeNCU(t *testing.T, perm bool) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for ncu")
	}
	sample, err := filepath.Abs("testdata/ncu-raw.csv")
	if err != nil {
		t.Fatal(err)
	}
	details, err := filepath.Abs("testdata/ncu-details-h200-mmq.csv")
	if err != nil {
		t.Fatal(err)
	}
	body := `#!/bin/sh
if [ "$1" = --version ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2099.1.0.0 (fake)"; exit 0; fi
log=""
page=""
while [ $# -gt 0 ]; do
	if [ "$1" = --log-file ]; then log="$2"; fi
	if [ "$1" = --page ]; then page="$2"; fi
	shift
done
if [ "$page" = details ]; then cp "` + details + `" "$log"; exit 0; fi
`
	if perm {
		body += `echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." >"$log"
exit 1
`
	} else {
		body += `cp "` + sample + `" "$log"
`
	}
	p := filepath.Join(t.TempDir(), "ncu")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNCURecords runs opbench ncu with a stand-in ncu: the JSON records
// the counters of each target, or ERR_NVGPUCTRPERM for each, and goes on.
func TestNCURecords(t *testing.T) {
	for _, perm := range []bool{false, true} {
		dir := t.TempDir()
		code, out, errOut := runArgs("ncu", "-gpu", "H100", "-out", dir, "-ncu", fakeNCU(t, perm), "-only", "mmvq,soft_max")
		if want := map[bool]int{false: exitOK, true: exitFailure}[perm]; code != want {
			t.Fatalf("perm %v: exit %d, want %d\n%s\n%s", perm, code, want, out, errOut)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "ncu-*.json"))
		if len(files) != 1 {
			t.Fatalf("perm %v: files %v", perm, files)
		}
		var rep ncuReport
		b, err := os.ReadFile(files[0])
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err != nil {
			t.Fatal(err)
		}
		if rep.GPU != "H100" || len(rep.Records) != 2 || rep.NCUVersion != "Version 2099.1.0.0 (fake)" {
			t.Fatalf("perm %v: report %+v", perm, rep)
		}
		for _, r := range rep.Records {
			if perm {
				if r.Error != "ERR_NVGPUCTRPERM" || !strings.Contains(r.Message, "permission") || r.Metrics != nil {
					t.Errorf("record %+v", r)
				}
				continue
			}
			// 1179648 sectors over 294912 requests; 4096 over 1024.
			if r.Error != "" || r.LoadSectorsPerRequest != 4 || r.StoreSectorsPerRequest != 4 ||
				r.Metrics["thread_inst_per_warp_inst"] != 31.86 || r.Metrics["shared_ld_wavefronts"] != 2048 || r.Units["duration_ns"] != "nsecond" {
				t.Errorf("record %+v", r)
			}
		}
	}
}

// testdata/ncu-raw-h200.csv is ncu 2025's real output for kb_mmvq_q4_0
// on an H200 (gpu-check, 2026-11-27): besides the metrics, the raw page
// carries the device's and the launch's attributes, some of them words.
func TestParseNCURawH200(t *testing.T) {
	b, err := os.ReadFile("testdata/ncu-raw-h200.csv")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := parseNCURaw(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || !strings.HasPrefix(ks[0].Kernel, "kb_mmvq_q4_0") {
		t.Fatalf("kernels %+v", ks)
	}
	k := ks[0]
	for _, m := range ncuMetrics {
		if _, ok := k.Values[m.metric]; !ok {
			t.Errorf("no %s", m.metric)
		}
	}
	if k.Values["gpu__time_duration.sum"] <= 0 || k.Values["dram__bytes_read.sum"] <= 0 {
		t.Errorf("time %v, DRAM bytes read %v", k.Values["gpu__time_duration.sum"], k.Values["dram__bytes_read.sum"])
	}
	if got := k.Text["device__attribute_display_name"]; got != "NVIDIA H200" {
		t.Errorf("display name %q", got)
	}
	if got := k.Text["device__attribute_confidential_computing_mode"]; got != "No-CC" {
		t.Errorf("confidential computing mode %q", got)
	}
}

// testdata/ncu-details-h200-mmq.csv is ncu 2025's real details page
// (eight sections) of kb_mmq128_q4_0, q4_0 4096x4096 n=512, on an H200
// (2026-11-27).
func TestParseNCUDetails(t *testing.T) {
	b, err := os.ReadFile("testdata/ncu-details-h200-mmq.csv")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := parseNCUDetails(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].Kernel != "kb_mmq128_q4_0" || ks[0].Block != "(256, 1, 1)" || ks[0].Grid != "(32, 8, 1)" {
		t.Fatalf("kernels %+v", ks)
	}
	d := ks[0].Details
	for key, want := range map[string]ncuValue{
		"GPU Speed Of Light Throughput/Duration":            {330.34, "us"},
		"Instruction Statistics/Executed Instructions":      {155756544, "inst"},
		"Launch Statistics/Registers Per Thread":            {128, "register/thread"},
		"Launch Statistics/Dynamic Shared Memory Per Block": {70.14, "Kbyte/block"},
		"Occupancy/Achieved Occupancy":                      {22.72, "%"},
		"Memory Workload Analysis/Memory Throughput":        {37.05, "Gbyte/s"},
		"GPU Speed Of Light Throughput/Memory Throughput":   {35.73, "%"},
	} {
		if got := d.Values[key]; got != want {
			t.Errorf("%s = %+v, want %+v", key, got, want)
		}
	}
	for _, word := range []string{"Launch Statistics/Cluster Scheduling Policy", "Memory Workload Analysis/Local Memory Spilling Request Overhead"} {
		if _, ok := d.Values[word]; ok {
			t.Errorf("%s: a word read as a number", word)
		}
	}
	if d.WarpInstructions != 155756544 {
		t.Errorf("warp instructions %v", d.WarpInstructions)
	}
	opt := 0
	for _, r := range d.Rules {
		if r.Type == "OPT" {
			opt++
		}
		if r.Name == "TheoreticalOccupancy" && (r.Speedup != 75 || !strings.Contains(r.Description, "limited by the number of required registers")) {
			t.Errorf("rule %+v", r)
		}
	}
	if len(d.Rules) != 8 || opt != 5 {
		t.Errorf("%d rules, %d OPT; want 8, 5", len(d.Rules), opt)
	}
	text := string(b)
	for _, tt := range []struct{ name, text, want string }{
		{"empty", "", "no header row"},
		{"no rows", text[:strings.Index(text, "\n")+1], "no profiled kernel"},
		{"no section column", strings.Replace(text, `"Section Name"`, `"Section"`, 1), `no "Section Name" column`},
	} {
		if _, err := parseNCUDetails(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestNCUDetailsRecords runs opbench ncu -details with a stand-in ncu:
// the record carries the details page and the instructions per mma, and
// stdout a line per target saying what limits it.
func TestNCUDetailsRecords(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runArgs("ncu", "-gpu", "H200", "-out", dir, "-ncu", fakeNCU(t, false), "-only", "mmq", "-details")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"mmq", "330.3 us", "74.3 instr/mma", "128 regs", "70.14 Kbyte smem", "blocks/SM by regs 2, by smem 2", "occupancy 22.7%", "issue busy 65.8%", "0.97 waves"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ncu-*-mmq-details.csv"))
	if len(files) != 1 {
		t.Errorf("details pages %v", files)
	}
	files, _ = filepath.Glob(filepath.Join(dir, "ncu-*.json"))
	if len(files) != 1 {
		t.Fatalf("records %v", files)
	}
	var rep ncuReport
	b, err := os.ReadFile(files[0])
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Records[0]
	if r.Details == nil || r.Details.InstructionsPerMMA < 74.2 || r.Details.InstructionsPerMMA > 74.3 || r.Metrics["duration_ns"] == 0 {
		t.Fatalf("record %+v", r)
	}
	// -dry-run prints both command lines per target.
	_, out, _ = runArgs("ncu", "-gpu", "H200", "-dry-run", "-only", "mmq,mmvq", "-details")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "--page details") || !strings.Contains(lines[1], "--section InstructionStats") || !strings.Contains(lines[1], "-n 512") {
		t.Errorf("-dry-run -details:\n%s", out)
	}
}
