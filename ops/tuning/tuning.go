// Package tuning holds the tunable parameters kernels declare, the search
// that picks their values on a machine, and the file that keeps the
// values per machine: results/<machine-id>/tuned.json.
//
// A kernel declares a Param (a name, its default, the values worth
// trying); a backend resolves each of its parameters from Values when it
// opens, and Load gives the Values the environment asks for:
// $KERNBENCH_TUNED=off gives none (every parameter its default), a path
// gives that file's, and unset gives results/<machine-id>/tuned.json
// below the working folder when there is one. Search measures every
// candidate in alternating rounds and keeps the cheapest, with the
// measurement (validation included) left to the caller: opbench tune
// times real kernels, tests inject a cost function.
package tuning

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/kernbench/kernbench/internal/machineid"
)

// A Param is one tunable integer parameter of a kernel.
type Param struct {
	// Name is unique across backends: "cpu.mulmat.gemv_rows".
	Name string
	// Doc says what the value controls.
	Doc string
	// Default is the value without tuning; it is one of Candidates.
	Default int
	// Candidates are the values a search tries, in increasing order.
	Candidates []int
}

// Allowed reports whether v is one of the parameter's candidates.
func (p Param) Allowed(v int) bool { return slices.Contains(p.Candidates, v) }

// Values maps parameter names to their chosen values.
type Values map[string]int

// Get returns p's value in v, or p's default when v has none.
func (v Values) Get(p Param) int {
	if x, ok := v[p.Name]; ok {
		return x
	}
	return p.Default
}

// Check reports a value that is not one of its parameter's candidates,
// and names in v that are not among params.
func (v Values) Check(params []Param) error {
	known := map[string]Param{}
	for _, p := range params {
		known[p.Name] = p
	}
	names := make([]string, 0, len(v))
	for n := range v {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, ok := known[n]
		if !ok {
			return fmt.Errorf("tuning: unknown parameter %q (a tuned.json of a newer kernbench? %s=off runs with the defaults, %s=FILE with another file)", n, Env, Env)
		}
		if !p.Allowed(v[n]) {
			return fmt.Errorf("tuning: %s = %d is not one of %v", n, v[n], p.Candidates)
		}
	}
	return nil
}

// Env is the environment variable that chooses the tuned values: "off",
// or the path of a tuned.json.
const Env = "KERNBENCH_TUNED"

// FileName is the tuned values' file in a machine's results folder.
const FileName = "tuned.json"

// DefaultPath is where Load looks when $KERNBENCH_TUNED is unset:
// results/<this machine's id>/tuned.json, relative to the working
// folder.
func DefaultPath() string { return filepath.Join("results", machineid.Here(), FileName) }

// Load returns the tuned values the environment asks for and where they
// came from ("" for none). A file named by $KERNBENCH_TUNED must exist,
// parse and be of this machine; the default file may be missing (then
// there are none), but not malformed.
func Load() (Values, string, error) {
	env := os.Getenv(Env)
	switch env {
	case "off":
		return nil, "", nil
	case "":
		path := DefaultPath()
		f, err := ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		return f.Values(), path, nil
	}
	f, err := ReadFile(env)
	if err != nil {
		return nil, "", fmt.Errorf("$%s: %w", Env, err)
	}
	if here := machineid.Here(); f.Machine != here {
		return nil, "", fmt.Errorf("$%s: %s was tuned on %s, this is %s", Env, env, f.Machine, here)
	}
	return f.Values(), env, nil
}

// Schema names the tuned.json format.
const Schema = "kernbench-tuned/v1"

// A File is tuned.json: the chosen values of one machine, with the
// search that chose each.
type File struct {
	Schema  string    `json:"schema"`
	Machine string    `json:"machine"`
	Date    time.Time `json:"date"`
	Commit  string    `json:"commit,omitempty"`
	Command string    `json:"command,omitempty"`
	Params  []Result  `json:"params"`
}

// Values returns the file's chosen values.
func (f *File) Values() Values {
	v := Values{}
	for _, r := range f.Params {
		v[r.Name] = r.Value
	}
	return v
}

// ReadFile reads and checks a tuned.json.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tuning: %s: not a tuned.json: %w", path, err)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("tuning: %s: schema %q, want %q", path, f.Schema, Schema)
	}
	if f.Machine == "" {
		return nil, fmt.Errorf("tuning: %s: no machine", path)
	}
	seen := map[string]bool{}
	for _, r := range f.Params {
		if r.Name == "" || seen[r.Name] {
			return nil, fmt.Errorf("tuning: %s: parameter %q empty or given twice", path, r.Name)
		}
		seen[r.Name] = true
	}
	return &f, nil
}

// WriteFile writes f as indented JSON.
func WriteFile(path string, f *File) error {
	if f.Schema == "" {
		f.Schema = Schema
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("tuning: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tuning: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("tuning: %w", err)
	}
	return nil
}

// A Result is the search of one parameter: the value chosen and every
// candidate's costs.
type Result struct {
	Name    string `json:"name"`
	Value   int    `json:"value"`
	Default int    `json:"default"`
	// Point is what each candidate was measured on, such as
	// "MUL_MAT q4_0 m=4096,n=1,k=4096, 2 threads".
	Point      string      `json:"point,omitempty"`
	Candidates []Candidate `json:"candidates"`
}

// A Candidate is one value's measurements: a cost per round (seconds
// for opbench tune) and their median, or why it was left out.
type Candidate struct {
	Value  int       `json:"value"`
	Costs  []float64 `json:"costs"`
	Median float64   `json:"median"`
	Error  string    `json:"error,omitempty"`
}

// Search measures every candidate of p for rounds rounds, alternating
// the order (increasing in even rounds, decreasing in odd ones) so that
// a drift reaches all alike, and returns the candidate of least median
// cost; a tie keeps the default, then the smaller value. measure returns
// a candidate's cost, or an error when the candidate is invalid (its
// output does not match the reference) or cannot run: such a candidate
// is measured no more and never chosen. It is an error when no
// candidate succeeds.
func Search(p Param, rounds int, measure func(v int) (float64, error)) (Result, error) {
	res := Result{Name: p.Name, Default: p.Default}
	if len(p.Candidates) == 0 || !p.Allowed(p.Default) {
		return res, fmt.Errorf("tuning: %s: default %d is not among the candidates %v", p.Name, p.Default, p.Candidates)
	}
	if rounds < 1 {
		return res, fmt.Errorf("tuning: %d rounds", rounds)
	}
	cands := make([]Candidate, len(p.Candidates))
	for i, v := range p.Candidates {
		cands[i].Value = v
	}
	for r := range rounds {
		for k := range cands {
			i := k
			if r%2 == 1 {
				i = len(cands) - 1 - k
			}
			c := &cands[i]
			if c.Error != "" {
				continue
			}
			cost, err := measure(c.Value)
			if err == nil && !(cost >= 0 && !math.IsInf(cost, 0)) {
				err = fmt.Errorf("cost %v is not a finite non-negative number", cost)
			}
			if err != nil {
				c.Error, c.Costs = err.Error(), nil
				continue
			}
			c.Costs = append(c.Costs, cost)
		}
	}
	best := -1
	for i := range cands {
		c := &cands[i]
		if c.Error != "" {
			continue
		}
		c.Median = median(c.Costs)
		if best < 0 || c.Median < cands[best].Median ||
			(c.Median == cands[best].Median && c.Value == p.Default) {
			best = i
		}
	}
	res.Candidates = cands
	if best < 0 {
		return res, fmt.Errorf("tuning: %s: no candidate could be measured (%s)", p.Name, cands[0].Error)
	}
	res.Value = cands[best].Value
	return res, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
