package llamabench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// A Result is one test as llama-bench (or kernbench's run -bench) reports
// it with -o json or -o jsonl: a prompt test (ppN: NPrompt > 0, NGen 0),
// a generation test (tgN) or both (ppN+tgM).
type Result struct {
	BuildCommit string `json:"build_commit"`
	BuildNumber int    `json:"build_number"`
	CPUInfo     string `json:"cpu_info"`
	Backends    string `json:"backends"`
	// CPUTier is kernbench's CPU kernel tier ("avx2"); llama-bench has
	// no such field.
	CPUTier       string `json:"cpu_tier"`
	ModelFilename string `json:"model_filename"`
	ModelType     string `json:"model_type"`
	ModelSize     int64  `json:"model_size"`
	ModelParams   int64  `json:"model_n_params"`
	NBatch        int    `json:"n_batch"`
	NUBatch       int    `json:"n_ubatch"`
	NThreads      int    `json:"n_threads"`
	TypeK         string `json:"type_k"`
	TypeV         string `json:"type_v"`
	// FlashAttn is 1 (on), 0 (off) or -1 (auto, llama-bench's default).
	FlashAttn int       `json:"flash_attn"`
	NPrompt   int       `json:"n_prompt"`
	NGen      int       `json:"n_gen"`
	NDepth    int       `json:"n_depth"`
	TestTime  string    `json:"test_time"`
	AvgNS     int64     `json:"avg_ns"`
	StddevNS  int64     `json:"stddev_ns"`
	AvgTS     float64   `json:"avg_ts"`
	StddevTS  float64   `json:"stddev_ts"`
	SamplesNS []int64   `json:"samples_ns"`
	SamplesTS []float64 `json:"samples_ts"`
}

// Name returns the test's name as llama-bench prints it: "pp512",
// "tg128", "pp512+tg128", with "@dN" for a depth.
func (r Result) Name() string {
	var s string
	switch {
	case r.NPrompt > 0 && r.NGen == 0:
		s = fmt.Sprintf("pp%d", r.NPrompt)
	case r.NGen > 0 && r.NPrompt == 0:
		s = fmt.Sprintf("tg%d", r.NGen)
	default:
		s = fmt.Sprintf("pp%d+tg%d", r.NPrompt, r.NGen)
	}
	if r.NDepth > 0 {
		s += fmt.Sprintf(" @ d%d", r.NDepth)
	}
	return s
}

// Tokens returns the tokens one repetition evaluates.
func (r Result) Tokens() int { return r.NPrompt + r.NGen }

// check reports a result whose fields disagree with each other: no
// tokens, no samples, a different number of times and speeds, or a
// speed that is not the tokens over the time (1% slack for rounding).
func (r Result) check() error {
	if r.NPrompt < 0 || r.NGen < 0 || r.Tokens() == 0 {
		return fmt.Errorf("n_prompt %d, n_gen %d: no tokens", r.NPrompt, r.NGen)
	}
	if len(r.SamplesNS) == 0 {
		return errors.New("no samples_ns")
	}
	if len(r.SamplesTS) != len(r.SamplesNS) {
		return fmt.Errorf("%d samples_ns but %d samples_ts", len(r.SamplesNS), len(r.SamplesTS))
	}
	for i, ns := range r.SamplesNS {
		if ns <= 0 {
			return fmt.Errorf("samples_ns[%d] = %d is not positive", i, ns)
		}
		want := 1e9 * float64(r.Tokens()) / float64(ns)
		if ts := r.SamplesTS[i]; !(math.Abs(ts-want) <= 0.01*want) {
			return fmt.Errorf("samples_ts[%d] = %g, but %d tokens in %d ns is %g t/s", i, ts, r.Tokens(), ns, want)
		}
	}
	return nil
}

// Parse reads the results of one run of llama-bench or run -bench in
// their JSON form: a JSON array of test objects (-o json) or one object
// per line (-o jsonl). Fields it does not know are ignored; a test whose
// samples are missing or disagree with its token counts is an error.
func Parse(r io.Reader) ([]Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("llamabench: reading the results: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("llamabench: no results (empty output)")
	}
	var out []Result
	if data[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&out); err != nil {
			return nil, fmt.Errorf("llamabench: not llama-bench's JSON: %w", err)
		}
		if dec.More() {
			return nil, errors.New("llamabench: text after the JSON array")
		}
	} else {
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			var res Result
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return nil, fmt.Errorf("llamabench: line %d: not llama-bench's JSON lines: %w", i+1, err)
			}
			out = append(out, res)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("llamabench: no tests in the results")
	}
	for i, res := range out {
		if err := res.check(); err != nil {
			return nil, fmt.Errorf("llamabench: test %d (%s): %w", i+1, res.Name(), err)
		}
	}
	return out, nil
}
