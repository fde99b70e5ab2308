package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/harness"
)

// sampleSet returns a set with a validated, an unvalidated and a failed
// record of different ops (so the CSV has sparse size columns).
func sampleSet() *Set {
	tm := Timing{Clock: "wall clock", WarmupRuns: 7, RunsPerSample: 3, Samples: []float64{1.5e-3, 1.25e-3, 1.75e-3, 1.0000000000000002e-3}}
	tm.Stats = Summarize(tm.Samples)
	mm := Record{Op: "MUL_MAT", Type: "q4_0", Shape: "m=4096,n=1,k=4096", Label: "llama-7b attn_q; x",
		Dims: map[string]int64{"m": 4096, "n": 1, "k": 4096}, Backend: "cpu-avx2", Threads: 2,
		Flops: 2 * 4096 * 4096, Bytes: 9437184 + 16384 + 16384, Timing: tm,
		Validation: ValidOK, NMSE: 1.5e-5, MaxErr: 0.03125}
	Derive(&mm, nil, 0)
	mm.Intensity = float64(mm.Flops) / float64(mm.Bytes)
	fa := Record{Op: "FLASH_ATTN_EXT", Type: "f16", Shape: "d=128,heads=32,kv_heads=8,n=1,kv=4096",
		Dims: map[string]int64{"d": 128, "heads": 32, "kv_heads": 8, "n": 1, "kv": 4096}, Backend: "cpu-generic", Threads: 1,
		Flops: 1e8, Bytes: 2e7, Timing: tm, Validation: ValidSkipped, NMSE: harness.Metric(math.NaN()), MaxErr: harness.Metric(math.NaN()),
		RoofGFLOPS: 50, Roof: LevelDRAM, RooflinePct: 12.5}
	fa.GFLOPS, fa.GBPS = Rate(fa.Flops, fa.Median), Rate(fa.Bytes, fa.Median)
	bad := Record{Op: "RMS_NORM", Type: "f32", Shape: "k=4096,n=1", Dims: map[string]int64{"k": 4096, "n": 1},
		Backend: "cpu-avx2", Threads: 2, Bytes: 32768, Validation: ValidFail, Error: "FAIL: NMSE 1 above 1e-13, \"quoted\"",
		NMSE: 1, MaxErr: harness.Metric(math.Inf(1))}
	return &Set{
		Schema: Schema,
		Machine: Machine{ID: "amd-epyc-zen3-2c", CPU: "AMD EPYC", Vendor: "AuthenticAMD", Family: 25, Model: 1, Features: []string{"AVX2", "FMA3"},
			PhysicalCores: 2, LogicalCores: 2, L1D: 32768, L2: 524288, L3: 33554432, MemoryBytes: 24 << 30, OS: "linux", Arch: "amd64", GOMAXPROCS: 2},
		Provenance: Provenance{GoVersion: "go1.26.8", Commit: "0123456789abcdef", Dirty: true, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "opbench sweep -op mul_mat"},
		Protocol:   NewProtocolInfo(Protocol{}, harness.DefaultRefBudget),
		Roofline: &Roofline{MachineID: "amd-epyc-zen3-2c", Date: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), Note: RooflineNote,
			Peaks: []Peak{{Kind: KindF32FMA, Kernel: "x", Threads: 1, Best: 100, Median: 90, Unit: "GFLOP/s", Samples: 3}}},
		Records: []Record{mm, fa, bad},
	}
}

// sameRecords compares records, with NaN equal to NaN.
func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		for _, p := range [][2]*harness.Metric{{&g.NMSE, &w.NMSE}, {&g.MaxErr, &w.MaxErr}} {
			if math.IsNaN(float64(*p[0])) && math.IsNaN(float64(*p[1])) {
				*p[0], *p[1] = 0, 0
			}
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	s := sampleSet()
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema": "kernbench-bench/v1"`, `"nmse": "NaN"`, `"max_err": "+Inf"`, `"samples_s": [`, `"median_s"`, `"inputs": "same input tensors`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	got, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got.Records, s.Records)
	got.Records, s.Records = nil, nil
	if !reflect.DeepEqual(got, s) {
		t.Errorf("set:\n got %+v\nwant %+v", got, s)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	s := sampleSet()
	var buf bytes.Buffer
	if err := s.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(buf.String(), "\n")
	// Size columns in benchmark order, between the key and the timing.
	if !strings.Contains(header, ",threads,m,n,k,kv,heads,d,kv_heads,flops,") {
		t.Errorf("header %s", header)
	}
	got, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got.Records, s.Records)
	if got.Machine.ID != s.Machine.ID || got.Machine.CPU != s.Machine.CPU || got.Commit != s.Commit || !got.Dirty ||
		got.GoVersion != s.GoVersion || !got.Date.Equal(s.Date) {
		t.Errorf("set fields from the first row: %+v %+v", got.Machine, got.Provenance)
	}
}

func TestReadErrors(t *testing.T) {
	s := sampleSet()
	var js bytes.Buffer
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var csvBuf bytes.Buffer
	if err := s.WriteCSV(&csvBuf); err != nil {
		t.Fatal(err)
	}
	jsonCases := map[string]string{
		"not json":       "{",
		"other schema":   strings.Replace(js.String(), Schema, "kernbench-bench/v0", 1),
		"negative time":  strings.Replace(js.String(), "0.0015,", "-0.0015,", 1),
		"array":          "[]",
		"no op":          strings.Replace(js.String(), `"op": "MUL_MAT"`, `"op": ""`, 1),
		"negative flops": strings.Replace(js.String(), `"flops": 33554432`, `"flops": -1`, 1),
	}
	for name, in := range jsonCases {
		if _, err := ReadJSON(strings.NewReader(in)); err == nil {
			t.Errorf("ReadJSON %s: no error", name)
		}
	}
	lines := strings.Split(csvBuf.String(), "\n")
	csvCases := map[string]string{
		"empty":          "",
		"no op column":   strings.Replace(csvBuf.String(), ",op,", ",operation,", 1),
		"sample count":   lines[0] + "\n" + strings.Replace(lines[1], ",4,", ",5,", 1) + "\n",
		"bad number":     lines[0] + "\n" + strings.Replace(lines[1], ",33554432,", ",3x,", 1) + "\n",
		"short row":      lines[0] + "\n" + "a,b\n",
		"bad sample":     lines[0] + "\n" + strings.Replace(lines[1], "0.0015 ", "zero ", 1) + "\n",
		"duplicate cols": strings.Replace(lines[0], ",cpu,", ",op,", 1) + "\n",
	}
	for name, in := range csvCases {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("ReadCSV %s: no error", name)
		}
	}
}

// TestReadChecksSummary: a record's stored summary and throughputs must
// be its samples'; a record of an emulated backend is marked so by its
// name.
func TestReadChecksSummary(t *testing.T) {
	one := func(edit func(r *Record)) *Set {
		tm := Timing{Clock: "wall clock", RunsPerSample: 1, Samples: make([]float64, 2000)}
		for i := range tm.Samples {
			tm.Samples[i] = 1e-6
		}
		tm.Stats = Summarize(tm.Samples)
		r := Record{Op: "ADD", Type: "f32", Shape: "k=64,n=1", Dims: map[string]int64{"k": 64, "n": 1}, Backend: "cpu-avx2", Threads: 1,
			Flops: 64, Bytes: 768, Timing: tm, Validation: ValidOK}
		Derive(&r, nil, 0)
		edit(&r)
		return &Set{Schema: Schema, Records: []Record{r}}
	}
	for _, c := range []struct {
		name string
		edit func(r *Record)
		want string // "" for no error
	}{
		{"intact", func(*Record) {}, ""},
		{"median", func(r *Record) { r.Median = 14.22e-6 }, "stored median 1.422e-05s disagrees with its 2000 samples' median 1e-06s"},
		{"min", func(r *Record) { r.Min = 0.5e-6 }, "stored min"},
		{"max", func(r *Record) { r.Max = 3e-6 }, "stored max"},
		{"gflops", func(r *Record) { r.GFLOPS *= 2 }, "stored gflops"},
		{"gbps", func(r *Record) { r.GBPS = 0 }, "stored gbps"},
		{"negative stddev", func(r *Record) { r.Stddev = -1 }, "stddev is -1"},
		{"emulated by name", func(r *Record) { r.Backend = "cuda-emu"; r.GFLOPS, r.GBPS = 1, 1 }, ""},
	} {
		s := one(c.edit)
		for _, format := range []string{"json", "csv"} {
			var buf bytes.Buffer
			read := ReadJSON
			if format == "csv" {
				if err := s.WriteCSV(&buf); err != nil {
					t.Fatal(err)
				}
				read = ReadCSV
			} else if err := s.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			got, err := read(&buf)
			if c.want == "" {
				if err != nil {
					t.Errorf("%s (%s): %v", c.name, format, err)
				} else if r := got.Records[0]; r.Emulated != EmulatedBackend(r.Backend) {
					t.Errorf("%s (%s): backend %s read as emulated %v", c.name, format, r.Backend, r.Emulated)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "op=ADD type=f32 shape=k=64,n=1 backend=cpu-avx2") {
				t.Errorf("%s (%s): error %v, want one naming the record and saying %q", c.name, format, err, c.want)
			}
		}
	}
}

func FuzzReadJSON(f *testing.F) {
	var buf bytes.Buffer
	if err := sampleSet().WriteJSON(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"kernbench-bench/v1","records":[{"op":"X","backend":"b","samples_s":[1e308,5]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		// What reads must write and read back the same.
		var out bytes.Buffer
		if err := s.WriteJSON(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadJSON(&out); err != nil {
			t.Fatalf("re-read: %v", err)
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	var buf bytes.Buffer
	if err := sampleSet().WriteCSV(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadCSV(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := s.WriteCSV(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCSV(&out); err != nil {
			t.Fatalf("re-read: %v", err)
		}
	})
}

func TestRecordKey(t *testing.T) {
	r := sampleSet().Records[0]
	if got := r.Key(); got != "op=MUL_MAT type=q4_0 shape=m=4096,n=1,k=4096 backend=cpu-avx2 threads=2" {
		t.Errorf("Key = %q", got)
	}
	if got := r.KeyWithout("threads", "backend"); got != "op=MUL_MAT type=q4_0 shape=m=4096,n=1,k=4096" {
		t.Errorf("KeyWithout = %q", got)
	}
	if !r.Timed() || sampleSet().Records[2].Timed() {
		t.Error("Timed")
	}
	// A record's JSON keeps the timing fields at the top level.
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"runs_per_sample":3`) || !strings.Contains(string(b), `"median_s":`) {
		t.Errorf("record JSON %s", b)
	}
}
