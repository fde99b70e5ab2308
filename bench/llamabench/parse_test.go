package llamabench

import (
	"os"
	"strings"
	"testing"
)

// TestParseCaptured reads the outputs captured from the real programs on
// stories260K: run -bench -o json, and llama-bench's -o json and -o jsonl
// (llama.cpp 3f545bec), and llama-bench's layout written by hand with a
// build commit (testdata/README.md).
func TestParseCaptured(t *testing.T) {
	tests := []struct {
		file        string
		names       []string
		reps        int
		tier, build string
	}{
		{"run-bench-stories260K.json", []string{"pp16", "tg8"}, 2, "avx2", "unknown"},
		{"llama-bench-stories260K.json", []string{"pp16", "tg8"}, 2, "", "unknown"},
		{"llama-bench-stories260K.jsonl", []string{"pp16", "tg8"}, 2, "", "unknown"},
		{"llama-bench-format.json", []string{"pp16", "tg8"}, 2, "", "3f545bec"},
		{"llama-bench-format.jsonl", []string{"pp16", "tg8"}, 2, "", "3f545bec"},
	}
	for _, tt := range tests {
		f, err := os.Open("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if len(res) != len(tt.names) {
			t.Fatalf("%s: %d tests, want %d", tt.file, len(res), len(tt.names))
		}
		for i, r := range res {
			if r.Name() != tt.names[i] || len(r.SamplesNS) != tt.reps || r.CPUTier != tt.tier || r.BuildCommit != tt.build {
				t.Errorf("%s test %d: %s, %d samples, tier %q, build %q; want %s, %d, %q, %q",
					tt.file, i, r.Name(), len(r.SamplesNS), r.CPUTier, r.BuildCommit, tt.names[i], tt.reps, tt.tier, tt.build)
			}
			if r.ModelFilename != "stories260K.gguf" || r.ModelSize <= 0 || r.NThreads < 1 || r.AvgTS <= 0 {
				t.Errorf("%s test %d: %+v", tt.file, i, r)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := `{"n_prompt": 16, "n_gen": 0, "samples_ns": [1000000], "samples_ts": [16000]}`
	tests := []struct {
		name, in, want string
	}{
		{"empty", "  \n", "empty output"},
		{"markdown", "| model | size |\n| --- | --- |", "JSON lines"},
		{"empty array", "[]", "no tests"},
		{"truncated", "[" + good, "not llama-bench's JSON"},
		{"two arrays", "[" + good + "] []", "text after"},
		{"no tokens", `[{"n_prompt": 0, "n_gen": 0, "samples_ns": [1], "samples_ts": [1]}]`, "no tokens"},
		{"no samples", `[{"n_prompt": 16, "n_gen": 0}]`, "no samples_ns"},
		{"uneven samples", `[{"n_prompt": 16, "n_gen": 0, "samples_ns": [1000000, 2], "samples_ts": [16000]}]`, "2 samples_ns but 1"},
		{"zero time", `[{"n_prompt": 16, "n_gen": 0, "samples_ns": [0], "samples_ts": [16000]}]`, "not positive"},
		{"wrong speed", `[{"n_prompt": 16, "n_gen": 0, "samples_ns": [1000000], "samples_ts": [8000]}]`, "is 16000 t/s"},
		{"bad jsonl line", good + "\n{", "line 2"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	res, err := Parse(strings.NewReader(good + "\n\n" + strings.Replace(good, `"n_gen": 0`, `"n_gen": 0, "n_depth": 64`, 1) + "\n"))
	if err != nil || len(res) != 2 || res[0].Name() != "pp16" || res[1].Name() != "pp16 @ d64" {
		t.Errorf("two JSON lines: %+v, %v", res, err)
	}
}

func TestResultName(t *testing.T) {
	for _, tt := range []struct {
		p, n int
		want string
	}{{512, 0, "pp512"}, {0, 128, "tg128"}, {512, 128, "pp512+tg128"}} {
		if got := (Result{NPrompt: tt.p, NGen: tt.n}).Name(); got != tt.want {
			t.Errorf("p %d n %d: %q, want %q", tt.p, tt.n, got, tt.want)
		}
	}
}
