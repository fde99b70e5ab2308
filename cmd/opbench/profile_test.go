package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	"github.com/kernbench/kernbench/simt"
)

func TestProfileBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile"}, "-op: name the ops"},
		{[]string{"profile", "-op", "mul_mat", "-backend", "cpu"}, "is not an emulated backend"},
		{[]string{"profile", "-op", "mul_mat", "-gpu", "h1000"}, `-gpu: roofline: unknown GPU "h1000"`},
		{[]string{"profile", "-op", "mul_mat", "-sample", "-1"}, "-sample: -1 is negative"},
		{[]string{"profile", "-op", "mul_mat", "-regs", "300"}, "-regs: 300 is not 1 to 255"},
		{[]string{"profile", "-op", "frob"}, `unknown op "frob"`},
	} {
		code, _, errOut := runArgs(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("opbench %q: code %d, stderr %q; want %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	code, out, _ := runArgs("profile", "-h")
	if code != exitOK || !strings.Contains(out, "never a time") || !strings.Contains(out, "-sample") {
		t.Errorf("profile -h: code %d, %q", code, out)
	}
}

// TestProfileCommand profiles a q4_0 mat-vec on both emulated backends:
// every kernel gets counters and an estimate, the weights are read once
// (their unique sectors cover the matrix), and a sampled run says it
// extrapolated.
func TestProfileCommand(t *testing.T) {
	if err := simt.Available(); err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	const m, k = 256, 256
	weights := float64(m * k / 32 * 18) // q4_0: 18 bytes a block of 32
	for _, tc := range []struct{ backend, gpu string }{{"cuda-emu", "h100"}, {"metal-emu", "m2max"}} {
		t.Run(tc.backend, func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "p.json")
			code, out, errOut := runArgs("profile", "-backend", tc.backend, "-op", "mul_mat", "-type", "q4_0", "-m", "256", "-k", "256", "-n", "1", "-sample", "4", "-json", js)
			if code != exitOK {
				t.Fatalf("code %d, stderr %s", code, errOut)
			}
			for _, w := range []string{"kernel ", "sectors/req", "estimate on " + tc.gpu + " (a lower bound, not a time)", "limited by", "extrapolated to all"} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var set profileSet
			if err := json.Unmarshal(b, &set); err != nil {
				t.Fatal(err)
			}
			if set.Schema != ProfileSchema || len(set.Points) != 1 || len(set.Points[0].Kernels) == 0 {
				t.Fatalf("records: %s", b)
			}
			var read float64
			for _, kp := range set.Points[0].Kernels {
				if kp.GlobalLoads.Requests == 0 || len(kp.Estimates) != 1 || kp.Estimates[0].GPU != tc.gpu || kp.Estimates[0].Limiter == "" {
					t.Errorf("kernel %s: %+v", kp.Kernel, kp)
				}
				for _, bt := range kp.Buffers {
					read = max(read, 32*float64(bt.ReadSectors))
				}
			}
			if read < weights {
				t.Errorf("largest buffer read %v bytes, want at least the weights' %v", read, weights)
			}
		})
	}
}

// TestCompareProfiles: compare on two profile record files flags a
// kernel whose sectors per request doubled for the same bytes (half of
// the moved bytes used) and bank conflicts appeared, and not one whose
// loads got wider (fewer requests, more sectors each, every byte used).
func TestCompareProfiles(t *testing.T) {
	mkReq := func(name string, requests, sectors, waves uint64) string {
		q := profileKernel{}
		q.Kernel = "kb_quantize_q8a"
		q.GlobalLoads = simt.GlobalCounters{Requests: 10, Sectors: 40, Bytes: 1280, Lanes: 320}
		k := profileKernel{}
		k.Kernel = name
		k.GlobalLoads = simt.GlobalCounters{Requests: requests, Sectors: sectors, Bytes: 12800, Lanes: 32 * requests}
		k.SharedLoads = simt.SharedCounters{Requests: 10, Wavefronts: waves, Ideal: 10, Lanes: 320}
		set := profileSet{Schema: ProfileSchema, Points: []profilePoint{{Op: "MUL_MAT", Type: "q4_0", Shape: "m=64", Backend: "cuda-emu", Kernels: []profileKernel{q, k}}}}
		b, err := json.Marshal(set)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "p.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mkNamed := func(name string, sectors, waves uint64) string { return mkReq(name, 100, sectors, waves) }
	mk := func(sectors, waves uint64) string { return mkNamed("kb_mmvq_q4_0", sectors, waves) }
	a, same, worse := mk(400, 10), mk(400, 10), mk(800, 40)
	code, out, errOut := runArgs("compare", "-fail-on-regression", a, same)
	if code != exitOK || !strings.Contains(out, "no counter differs") {
		t.Errorf("same counters: code %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = runArgs("compare", "-fail-on-regression", a, worse)
	if code != exitFailure || !strings.Contains(out, "gld sectors/req") || !strings.Contains(out, "bank conflicts") || !strings.Contains(out, "WORSE") {
		t.Errorf("doubled sectors: code %d, %q, %q", code, out, errOut)
	}
	if !strings.Contains(out, "gld bytes used") || !strings.Contains(out, "shared wavefronts") || !regexp.MustCompile(`gld sectors/req .*neutral`).MatchString(out) {
		t.Errorf("doubled sectors: no bytes-used or wavefront row, or sectors/req not neutral: %q", out)
	}
	code, out, _ = runArgs("compare", worse, a)
	if code != exitOK || !strings.Contains(out, "better") || strings.Contains(out, "WORSE") {
		t.Errorf("halved sectors: code %d, %q", code, out)
	}
	// 16-byte loads: a quarter of the requests, four times the sectors
	// each, the same sectors in all: fewer requests, nothing worse.
	code, out, _ = runArgs("compare", "-fail-on-regression", a, mkReq("kb_mmvq_q4_0", 25, 400, 10))
	if code != exitOK || strings.Contains(out, "WORSE") || !regexp.MustCompile(`gld sectors/req .*neutral`).MatchString(out) || !regexp.MustCompile(`global requests .*better`).MatchString(out) {
		t.Errorf("wider loads: code %d, %q", code, out)
	}
	// A kernel replaced by one of a new name in the same point is joined
	// with it in launch order, the unchanged kernel by its name.
	code, out, errOut = runArgs("compare", "-fail-on-regression", a, mkNamed("kb_mmvq1_q4_0", 800, 40))
	if code != exitFailure || !strings.Contains(out, "kb_mmvq_q4_0 -> kb_mmvq1_q4_0") || strings.Contains(out, "only in") ||
		!strings.Contains(out, "2 kernels") {
		t.Errorf("renamed kernel: code %d, %q, %q", code, out, errOut)
	}
}

// TestShareVerdict: a tensor share is better the closer it comes to 1
// from below; above 1 (tensor work past the op's FLOPs) a change gets no
// verdict, and one across 1 is judged on the part up to it.
func TestShareVerdict(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{0.5, 1, "better"}, {1, 0.5, "WORSE"}, {0, 0.25, "better"},
		{1, 2, "neutral"}, {2, 1, "neutral"}, {1.5, 2, "neutral"},
		{0.5, 2, "better"}, {2, 0.5, "WORSE"},
	} {
		if got := shareVerdict(tc.a, tc.b); got != tc.want {
			t.Errorf("shareVerdict(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestProfileTensorShare: an f16 product on cuda-emu goes through the
// emulated mma.sync (kb_mma_f16), which the profiler counts, so the
// tensor cores do all of the op's FLOPs; every block is run.
func TestProfileTensorShare(t *testing.T) {
	if err := simt.Available(); err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	js := filepath.Join(t.TempDir(), "p.json")
	code, _, errOut := runArgs("profile", "-backend", "cuda-emu", "-op", "mul_mat", "-type", "f16", "-m", "128", "-k", "128", "-n", "64", "-sample", "0", "-json", js)
	if code != exitOK {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var set profileSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	var share float64
	for _, p := range set.Points {
		for _, k := range p.Kernels {
			share += k.TensorShare
		}
	}
	if math.Abs(share-1) > 1e-9 {
		t.Errorf("tensor-core share of the op's FLOPs %v, want 1", share)
	}

	// Causal prefill on the tensor-core kernel skips the tiles every row
	// masks: the share counts the work it did, q·k and weights·v on
	// tensor cores, the softmax (5 of every 261 FLOPs at head 64) not.
	code, _, errOut = runArgs("profile", "-backend", "cuda-emu", "-op", "flash_attn_ext", "-type", "f16", "-d", "64", "-heads", "2", "-kv_heads", "2", "-n", "128", "-kv", "128", "-sample", "0", "-json", js)
	if code != exitOK {
		t.Fatalf("flash attention: code %d, stderr %s", code, errOut)
	}
	if b, err = os.ReadFile(js); err != nil {
		t.Fatal(err)
	}
	set = profileSet{}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	share = 0
	for _, p := range set.Points {
		for _, k := range p.Kernels {
			share += k.TensorShare
		}
	}
	if want := 256.0 / 261; math.Abs(share-want) > 1e-6 {
		t.Errorf("flash attention: tensor-core share %v, want %v", share, want)
	}
}

func TestExecutedFlops(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		opFlops, matrix, tensor, want float64
	}{
		{"no matrix products counted", 100, 90, 0, 100},
		{"every matrix product counted", 100, 90, 90, 100},
		{"half skipped", 100, 90, 45, 50},
		{"a quarter skipped", 200, 160, 120, 150},
		{"op without matrix products", 100, 0, 0, 100},
		{"more counted than the model", 100, 90, 120, 100},
	} {
		if got := executedFlops(tc.opFlops, tc.matrix, tc.tensor); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: executedFlops(%v, %v, %v) = %v, want %v", tc.name, tc.opFlops, tc.matrix, tc.tensor, got, tc.want)
		}
	}
}

func TestSweepProfileBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-backend", "cpu", "-profile"}, "-profile: cpu"},
		{[]string{"-backend", "cpu", "-profile"}, "is not an emulated backend (cuda-emu, metal-emu)"},
		{[]string{"-backend", "cuda-emu", "-gpu", "h100"}, "-gpu: only with -profile"},
		{[]string{"-backend", "cuda-emu", "-sample", "4"}, "-sample: only with -profile"},
		{[]string{"-backend", "cuda-emu", "-profile", "-gpu", "h1000"}, `-gpu: roofline: unknown GPU "h1000"`},
		{[]string{"-backend", "cuda-emu", "-profile", "-sample", "-1"}, "-sample: -1 is negative"},
		{[]string{"-backend", "cuda-emu", "-profile", "-plot"}, "-plot: a profile has no timings"},
		{[]string{"-backend", "cuda-emu", "-profile", "-cpuprofile", t.TempDir()}, "-cpuprofile: a profile runs on the emulator"},
	} {
		args := append([]string{"sweep", "-op", "mul_mat", "-type", "q4_0"}, tc.args...)
		code, _, errOut := runArgs(args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("opbench %q: code %d, stderr %q; want %d and %q", args, code, errOut, exitUsage, tc.want)
		}
	}
	// The profiler's flags are sweep's own, not ggml's.
	if code, _, errOut := runArgs("ggml", "-op", "mul_mat", "-profile"); code != exitUsage || !strings.Contains(errOut, "-profile") {
		t.Errorf("ggml -profile: code %d, stderr %q", code, errOut)
	}
	code, out, _ := runArgs("sweep", "-h")
	if code != exitOK || !strings.Contains(out, "-profile") || !strings.Contains(out, "NAME.profile.json") {
		t.Errorf("sweep -h: code %d, lacks -profile", code)
	}
}

// TestSweepProfile sweeps one small q4_0 mat-vec on cuda-emu with
// -profile: the kernels' counters and H100 estimate are printed, no
// timed record is written, and NAME.profile.json holds opbench profile's
// records of the point with the weights read at least once.
func TestSweepProfile(t *testing.T) {
	if err := simt.Available(); err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	dir := t.TempDir()
	code, out, errOut := runArgs("sweep", "-backend", "cuda-emu", "-profile", "-op", "mul_mat", "-type", "q4_0", "-m", "128", "-k", "256", "-n", "1", "-sample", "4", "-out", dir, "-name", "p")
	if code != exitOK {
		t.Fatalf("code %d, stdout %s, stderr %s", code, out, errOut)
	}
	for _, w := range []string{"MUL_MAT q4_0", "on cuda-emu", "kernel ", "sectors/req", "estimate on h100 (a lower bound, not a time)", "1 profiled points", "p.profile.json"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p.json")); err == nil {
		t.Errorf("-profile wrote a timing record p.json")
	}
	b, err := os.ReadFile(filepath.Join(dir, "p.profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var set profileSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	if set.Schema != ProfileSchema || len(set.Points) != 1 {
		t.Fatalf("records: %s", b)
	}
	p := set.Points[0]
	if p.Op != "MUL_MAT" || p.Type != "q4_0" || p.Backend != "cuda-emu" || p.Error != "" || len(p.Kernels) == 0 || !strings.Contains(set.Provenance.Command, "-profile") {
		t.Fatalf("point: %+v", p)
	}
	const weights = 128 * 256 / 32 * 18 // q4_0: 18 bytes a block of 32
	var read float64
	for _, k := range p.Kernels {
		if k.GlobalLoads.Requests == 0 || len(k.Estimates) != 1 || k.Estimates[0].GPU != "h100" || k.Estimates[0].Seconds <= 0 {
			t.Errorf("kernel %s: %+v", k.Kernel, k)
		}
		for _, bt := range k.Buffers {
			read = max(read, 32*float64(bt.ReadSectors))
		}
	}
	if read < weights {
		t.Errorf("largest buffer read %v bytes, want at least the weights' %v", read, weights)
	}
	csvb, err := os.ReadFile(filepath.Join(dir, "p.profile.csv"))
	if err != nil || !strings.HasPrefix(string(csvb), strings.Join(profileCSVHeader, ",")) || strings.Count(string(csvb), "\n") < 2 {
		t.Errorf("p.profile.csv: %v, %q", err, csvb)
	}
}
