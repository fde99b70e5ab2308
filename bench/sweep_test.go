package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
)

func TestExpandOps(t *testing.T) {
	// The example: 3 types x 4 n x 2 k.
	e := Entry{Ops: []string{"mul_mat"}, Types: []string{"q4_0", "q8_0", "q4_K"},
		Dims: map[string][]int64{"m": {4096}, "n": {1, 8, 32, 512}, "k": {4096, 14336}}}
	pts, notes, err := e.Expand()
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	if len(pts) != 24 {
		t.Fatalf("%d points, want 24", len(pts))
	}
	seen := map[string]bool{}
	for _, p := range pts {
		if seen[p.String()] {
			t.Errorf("duplicate %v", p)
		}
		seen[p.String()] = true
		if p.Plan.Cost.Flops != 2*p.Dims["m"]*p.Dims["n"]*p.Dims["k"] {
			t.Errorf("%v: %d FLOPs", p, p.Plan.Cost.Flops)
		}
	}
	if !seen["MUL_MAT/q4_K/m=4096,n=512,k=14336"] || !seen["MUL_MAT/q8_0/m=4096,n=1,k=4096"] {
		t.Errorf("points %v", seen)
	}

	// Several ops: each takes the types and sizes it has.
	e = Entry{Ops: []string{"mul_mat", "rms_norm"}, Types: []string{"q4_0"}, Dims: map[string][]int64{"n": {1, 2}, "m": {64}}}
	pts, notes, err = e.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pts {
		names = append(names, p.String())
	}
	want := "MUL_MAT/q4_0/m=64,n=1,k=4096 MUL_MAT/q4_0/m=64,n=2,k=4096 RMS_NORM/f32/k=4096,n=1 RMS_NORM/f32/k=4096,n=2"
	if strings.Join(names, " ") != want || len(notes) != 1 || !strings.Contains(notes[0], "rms_norm takes none") {
		t.Errorf("points %v, notes %v", names, notes)
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		e    Entry
		want string
	}{
		{Entry{}, "ops or a preset"},
		{Entry{Ops: []string{"frob"}}, `op: ops: unknown op "frob"`},
		{Entry{Ops: []string{"view"}}, "op: VIEW computes nothing"},
		{Entry{Ops: []string{"mul_mat"}, Types: []string{"q9"}}, "type: "},
		{Entry{Ops: []string{"rms_norm"}, Types: []string{"q4_0"}}, "type: rms_norm takes no type q4_0"},
		{Entry{Ops: []string{"rms_norm"}, Dims: map[string][]int64{"m": {4}}}, "m: rms_norm has no size m"},
		{Entry{Ops: []string{"mul_mat"}, Dims: map[string][]int64{"n": {0}}}, "n: 0 is not a positive size"},
		{Entry{Ops: []string{"mul_mat"}, Dims: map[string][]int64{"n": {}}}, "n: no values"},
		{Entry{Ops: []string{"mul_mat"}, Types: []string{"q4_K"}, Dims: map[string][]int64{"k": {4000}}}, "row length"},
		{Entry{Ops: []string{"flash_attn_ext"}, Dims: map[string][]int64{"heads": {6}, "kv_heads": {4}}}, "not a multiple"},
		{Entry{Preset: "llama-9b"}, `preset: unknown preset "llama-9b"`},
		{Entry{Preset: "llama-7b", Dims: map[string][]int64{"m": {4}}}, "m: preset llama-7b fixes m"},
		{Entry{Preset: "llama-7b", Types: []string{"i32"}}, "type: i32 is not a weight type"},
		{Entry{Preset: "mamba-1.4b", Ops: []string{"flash_attn_ext"}}, "no layer of the ops"},
	}
	for _, tt := range tests {
		_, _, err := tt.e.Expand()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.e, err, tt.want)
		}
	}
}

func TestPresets(t *testing.T) {
	for _, name := range PresetNames() {
		pts, notes, err := Entry{Preset: name, Dims: map[string][]int64{"n": {1, 64}}}.Expand()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(notes) != 0 {
			t.Errorf("%s: notes %v", name, notes)
		}
		pr, _ := LookupPreset(name)
		if len(pts) != 2*len(pr.Layers) {
			t.Errorf("%s: %d points for %d layers x 2 n", name, len(pts), len(pr.Layers))
		}
		for _, p := range pts {
			if !strings.HasPrefix(p.Label, name+" ") {
				t.Errorf("%s: %v labelled %q", name, p, p.Label)
			}
			if kv, ok := p.Dims[harness.DimKV]; ok && p.Op == ops.OpFlashAttnExt && kv != max(512, p.Dims[harness.DimN]) {
				t.Errorf("%v: kv %d", p, kv)
			}
			if p.Op == ops.OpMulMat && p.Type != quant.Q4_0 {
				t.Errorf("%v: default weight type", p)
			}
			if p.Op == ops.OpFlashAttnExt && p.Type != quant.F16 {
				t.Errorf("%v: KV type", p)
			}
		}
	}
	// Shapes from the models: Llama-3's K/V projection and GQA, Mamba's
	// inner width.
	pts, _, _ := Entry{Preset: "llama-3-8b", Dims: map[string][]int64{"n": {1}}}.Expand()
	if !hasPoint(pts, "MUL_MAT/q4_0/m=1024,n=1,k=4096") || !hasPoint(pts, "FLASH_ATTN_EXT/f16/d=128,heads=32,kv_heads=8,n=1,kv=512") {
		t.Error("llama-3-8b shapes")
	}
	pts, _, _ = Entry{Preset: "mixtral", Dims: map[string][]int64{"n": {1}, "kv": {4096}}}.Expand()
	if !hasPoint(pts, "MUL_MAT_ID/q4_0/m=14336,n=1,k=4096,experts=8,used=2") || !hasPoint(pts, "SOFT_MAX/f32/kv=8,n=1,heads=1") ||
		!hasPoint(pts, "FLASH_ATTN_EXT/f16/d=128,heads=32,kv_heads=8,n=1,kv=4096") {
		t.Error("mixtral shapes")
	}
	// A type whose blocks do not fit a layer leaves it out, with a note.
	pts, notes, err := Entry{Preset: "mamba-1.4b", Types: []string{"q4_K"}, Dims: map[string][]int64{"n": {1}}}.Expand()
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "ssm_dt left out") || hasPoint(pts, "MUL_MAT/q4_K/m=4096,n=1,k=128") {
		t.Errorf("mamba q4_K: %v %v", notes, err)
	}
	if !hasPoint(pts, "SSM_SCAN/f32/d_state=16,d_inner=4096,head_dim=1,n=1,seqs=1") {
		t.Error("mamba scan shape")
	}
}

func hasPoint(pts []PlannedPoint, s string) bool {
	for _, p := range pts {
		if p.String() == s {
			return true
		}
	}
	return false
}

func TestParseSpec(t *testing.T) {
	good := `{"time": "200ms", "threads": [1, 2], "tiers": ["generic"],
		"sweeps": [{"ops": ["mul_mat"], "types": ["q4_0"], "dims": {"n": [1, 8]}},
		           {"preset": "llama-7b", "ops": ["mul_mat"], "dims": {"n": [1]}}]}`
	s, err := ParseSpec(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	pts, _, err := ExpandAll(s.Sweeps)
	if err != nil {
		t.Fatal(err)
	}
	// m=4096,n=1,k=4096 is in both entries: merged, keeping the label.
	if len(pts) != 2+3-1 || pts[0].Label != "llama-7b attn_q,attn_k,attn_v,attn_output" || s.Time != "200ms" || len(s.Threads) != 2 {
		t.Errorf("spec %+v, %d points, first label %q", s, len(pts), pts[0].Label)
	}
	bad := map[string]string{
		`{"sweeps": [{"op": ["mul_mat"]}]}`: "unknown field",
		`{"sweeps": []}`:                    "no \"sweeps\"",
		`{}`:                                "no \"sweeps\"",
		`{"time": "soon", "sweeps": [{"ops": ["add"]}]}`:     "not a positive duration",
		`{"threads": [0], "sweeps": [{"ops": ["add"]}]}`:     "threads 0",
		`{"sweeps": [{"ops": ["add"]}]} {"sweeps": []}`:      "after the JSON",
		`{"sweeps": [{"ops": ["add"], "dims": {"k": [-1]}}]`: "sweep file",
	}
	for in, want := range bad {
		_, err := ParseSpec(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpec(%s): %v, want %q", in, err, want)
		}
	}
	if _, _, err := ExpandAll([]Entry{{Ops: []string{"add"}}, {Ops: []string{"frob"}}}); err == nil || !strings.HasPrefix(err.Error(), "sweep 2: ") {
		t.Errorf("ExpandAll names the entry: %v", err)
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(`{"sweeps": [{"ops": ["mul_mat"], "types": ["q4_0"], "dims": {"n": [1, 8]}}]}`))
	f.Add([]byte(`{"sweeps": [{"preset": "mixtral", "dims": {"n": [1]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		// Expansion plans every point without allocating: it must not
		// panic or run away on any sizes.
		_, _, _ = ExpandAll(s.Sweeps)
	})
}

// failing is a CPU backend whose Compute fails or Supports refuses.
type failing struct {
	*cpu.Backend
	refuse bool
}

func (f failing) Supports(t *ops.Tensor) error {
	if f.refuse {
		return errors.New("not here")
	}
	return f.Backend.Supports(t)
}

func (f failing) Compute(t *ops.Tensor) error {
	if f.refuse {
		return errors.New("not here")
	}
	return errors.New("broken")
}

func TestRunner(t *testing.T) {
	b1, b2 := cputest.New(t, 1), cputest.New(t, 2)
	defer b1.Close()
	defer b2.Close()
	pts, _, err := Entry{Ops: []string{"mul_mat", "rms_norm"}, Types: []string{"q8_0"},
		Dims: map[string][]int64{"m": {32}, "n": {2}, "k": {256}}}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	roof := &Roofline{Peaks: []Peak{
		{Kind: KindF32FMA, Threads: 1, Best: 1000}, {Kind: KindRead, Level: LevelCache, Threads: 1, Best: 1000},
		{Kind: KindRead, Level: LevelDRAM, Threads: 1, Best: 100},
	}}
	var progress []string
	ru := &Runner{
		Backends: []Backend{{Name: "cpu-a", Threads: 1, Backend: b1}, {Name: "cpu-b", Threads: 2, Backend: b2},
			{Name: "broken", Threads: 1, Backend: failing{Backend: b1}}, {Name: "refuses", Threads: 1, Backend: failing{Backend: b1, refuse: true}}},
		Protocol: Protocol{Time: 5 * time.Millisecond, Warmup: time.Millisecond},
		Roofline: roof, CacheBytes: 1 << 20,
		Progress: func(done, total int, r Record, _ time.Duration) {
			progress = append(progress, r.Backend)
			if total != 8 || done != len(progress) {
				t.Errorf("progress %d/%d", done, total)
			}
		},
	}
	rs := ru.Run(pts)
	if len(rs) != 8 || len(progress) != 8 {
		t.Fatalf("%d records, %d progress calls", len(rs), len(progress))
	}
	for i, r := range rs {
		switch r.Backend {
		case "cpu-a", "cpu-b":
			if r.Validation != ValidOK || !r.Timed() || len(r.Samples) < DefaultMinSamples || r.GBPS <= 0 || r.Error != "" {
				t.Errorf("record %d: %+v", i, r)
			}
			if r.Op == "MUL_MAT" && (r.GFLOPS <= 0 || r.Intensity <= 0) {
				t.Errorf("record %d: no FLOP rate %+v", i, r)
			}
			if r.Op == "MUL_MAT" && r.Threads == 1 && (r.Roof != LevelCache && r.Roof != "compute" || r.RooflinePct <= 0) {
				t.Errorf("record %d: roofline %q %v", i, r.Roof, r.RooflinePct)
			}
			if r.Threads == 2 && r.RooflinePct != 0 {
				t.Errorf("record %d: roofline share without a 2-thread roofline", i)
			}
		case "broken":
			if r.Validation != ValidFail || r.Timed() || !strings.Contains(r.Error, "broken") {
				t.Errorf("broken backend: %+v", r)
			}
		case "refuses":
			if r.Validation != ValidUnsupported || r.Timed() {
				t.Errorf("refusing backend: %+v", r)
			}
		}
	}
	if rs[0].Label != "" || rs[0].Dims["m"] != 32 || rs[0].Shape != "m=32,n=2,k=256" || rs[0].Clock != "wall clock" {
		t.Errorf("first record %+v", rs[0])
	}

	// A cancelled context stops the run between records.
	ctx, cancel := context.WithCancel(context.Background())
	ru.Progress = func(done, _ int, _ Record, _ time.Duration) {
		if done == 3 {
			cancel()
		}
	}
	ru.Context = ctx
	if rs := ru.Run(pts); len(rs) != 3 {
		t.Errorf("cancelled after 3 records: %d records", len(rs))
	}

	// Points over the memory limit are refused before anything is drawn.
	ru = &Runner{Backends: ru.Backends[:1], MaxMemory: 1000}
	rs = ru.Run(pts[:1])
	if rs[0].Validation != ValidError || !strings.Contains(rs[0].Error, "above the limit") {
		t.Errorf("memory limit: %+v", rs[0])
	}
}

// emulatedBackend is a backend that says it runs on an emulator.
type emulatedBackend struct{ ops.Backend }

func (emulatedBackend) Emulated() bool { return true }

// TestEmulatedNotTimed checks that an emulated backend's points are
// validated and never timed: an emulator's times are not performance.
func TestEmulatedNotTimed(t *testing.T) {
	b := cputest.New(t, 1)
	defer b.Close()
	pts, _, err := Entry{Ops: []string{"rms_norm"}, Dims: map[string][]int64{"k": {256}, "n": {2}}}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	ru := &Runner{Backends: []Backend{{Name: "x-emu", Threads: 1, Backend: emulatedBackend{b}}},
		Protocol: Protocol{Time: 5 * time.Millisecond, Warmup: time.Millisecond}}
	for _, r := range ru.Run(pts) {
		if r.Validation != ValidOK || r.Timed() || !r.Emulated || r.GFLOPS != 0 || r.GBPS != 0 {
			t.Errorf("emulated record %+v", r)
		}
	}
}
