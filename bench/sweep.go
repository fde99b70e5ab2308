package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A Spec is a sweep file: entries of points, measured on every tier at
// every thread count. The JSON form:
//
//	{
//	  "time": "500ms",
//	  "threads": [1, 2],
//	  "tiers": ["generic", "avx2"],
//	  "sweeps": [
//	    {"ops": ["mul_mat"], "types": ["q4_0", "q8_0"],
//	     "dims": {"m": [4096], "n": [1, 8, 32], "k": [4096, 14336]}},
//	    {"preset": "llama-3-8b", "dims": {"n": [1, 512]}}
//	  ]
//	}
//
// Every field but sweeps is optional, and the command line's flags
// override time, threads and tiers. Each entry is a cross product: ops x
// types x the listed values of each size (sizes not listed take the op's
// default). See Entry for the rules.
type Spec struct {
	Time    string   `json:"time,omitempty"`
	Threads []int    `json:"threads,omitempty"`
	Tiers   []string `json:"tiers,omitempty"`
	Sweeps  []Entry  `json:"sweeps"`
}

// An Entry is one cross product of a sweep.
//
// With Ops: every op in Ops x every type in Types that the op takes (an op
// that takes none of them runs with its default type; a type no op takes
// is an error) x every combination of the Dims values for the op's sizes
// (a size no op has is an error; sizes not listed take the op's default).
//
// With Preset: the preset's layers (only those of Ops, if given) at the
// model's sizes, x the Dims values of the sizes left free, n (tokens,
// default 1 and 512) and kv (KV length, default max(512, n)). Types set
// the weight type of the matrix products (default q4_0); the other ops
// run with their default types (f16 KV cache, f32 activations). A layer
// whose shape a type cannot take (a row length not a multiple of its
// block) is left out with a note.
type Entry struct {
	Ops    []string           `json:"ops,omitempty"`
	Preset string             `json:"preset,omitempty"`
	Types  []string           `json:"types,omitempty"`
	Dims   map[string][]int64 `json:"dims,omitempty"`
}

// ParseSpec reads a sweep file, refusing unknown fields.
func ParseSpec(r io.Reader) (Spec, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return Spec{}, fmt.Errorf("read sweep file: %w", err)
	}
	if len(b) > 1<<20 {
		return Spec{}, errors.New("sweep file larger than 1 MiB")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("sweep file: %w", err)
	}
	if dec.More() {
		return Spec{}, errors.New("sweep file: data after the JSON object")
	}
	if len(s.Sweeps) == 0 {
		return Spec{}, errors.New(`sweep file: no "sweeps"`)
	}
	if s.Time != "" {
		if d, err := time.ParseDuration(s.Time); err != nil || d <= 0 {
			return Spec{}, fmt.Errorf("sweep file: time %q is not a positive duration", s.Time)
		}
	}
	for _, t := range s.Threads {
		if t < 1 {
			return Spec{}, fmt.Errorf("sweep file: threads %d", t)
		}
	}
	return s, nil
}

// A PlannedPoint is a point to measure, with what it will cost.
type PlannedPoint struct {
	harness.Point
	// Label names where the point comes from, such as "llama-7b ffn_down".
	Label string
	Plan  harness.Plan
}

// maxPoints bounds the points one sweep expands to.
const maxPoints = 100000

// Expand returns the entry's points, and notes on what it left out or
// defaulted. Errors name the entry's field at fault.
func (e Entry) Expand() ([]PlannedPoint, []string, error) {
	if len(e.Ops) == 0 && e.Preset == "" {
		return nil, nil, errors.New("an entry names ops or a preset (ops with a preset keep only those ops' layers)")
	}
	var opList []ops.Op
	for _, s := range e.Ops {
		o, err := ops.ParseOp(s)
		if err != nil {
			return nil, nil, fmt.Errorf("op: %w", err)
		}
		if _, err := harness.LookupOpDef(o); err != nil {
			return nil, nil, fmt.Errorf("op: %v computes nothing and has no benchmark", o)
		}
		if !slices.Contains(opList, o) {
			opList = append(opList, o)
		}
	}
	var typs []quant.Type
	for _, s := range e.Types {
		t, err := quant.ParseType(s)
		if err != nil {
			return nil, nil, fmt.Errorf("type: %w", err)
		}
		if !slices.Contains(typs, t) {
			typs = append(typs, t)
		}
	}
	for name, vs := range e.Dims {
		if len(vs) == 0 {
			return nil, nil, fmt.Errorf("%s: no values", name)
		}
		for _, v := range vs {
			if v < 1 {
				return nil, nil, fmt.Errorf("%s: %d is not a positive size", name, v)
			}
		}
	}
	if e.Preset != "" {
		return e.expandPreset(opList, typs)
	}
	return e.expandOps(opList, typs)
}

func (e Entry) expandOps(opList []ops.Op, typs []quant.Type) ([]PlannedPoint, []string, error) {
	var bos []harness.OpDef
	for _, o := range opList {
		bo, _ := harness.LookupOpDef(o)
		bos = append(bos, bo)
	}
	for _, t := range typs {
		if !slices.ContainsFunc(bos, func(bo harness.OpDef) bool { return bo.TakesType(t) }) {
			return nil, nil, fmt.Errorf("type: %s takes no type %v (%s takes %s)", strings.Join(e.Ops, ","), t, bos[0].Name(), typeNames(bos[0].Types))
		}
	}
	for _, name := range sortedKeys(e.Dims) {
		if !slices.ContainsFunc(bos, func(bo harness.OpDef) bool { return bo.HasDim(name) }) {
			return nil, nil, fmt.Errorf("%s: %s has no size %s (%s)", name, strings.Join(e.Ops, ","), name, sizesOf(bos))
		}
	}
	var out []PlannedPoint
	var notes []string
	for _, bo := range bos {
		var ts []quant.Type
		for _, t := range typs {
			if bo.TakesType(t) {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			ts = []quant.Type{bo.DefaultType}
			if len(typs) > 0 {
				notes = append(notes, fmt.Sprintf("%s takes none of the types asked for; it runs with %v", bo.Name(), bo.DefaultType))
			}
		}
		for _, d := range combos(bo, e.Dims, nil) {
			for _, t := range ts {
				p, err := harness.NewPoint(bo.Op, t, d)
				if err != nil {
					return nil, nil, err
				}
				pl, err := p.Plan()
				if err != nil {
					return nil, nil, fmt.Errorf("%v: %w", p, err)
				}
				out = append(out, PlannedPoint{Point: p, Plan: pl})
				if len(out) > maxPoints {
					return nil, nil, fmt.Errorf("more than %d points", maxPoints)
				}
			}
		}
	}
	return out, notes, nil
}

func (e Entry) expandPreset(opList []ops.Op, typs []quant.Type) ([]PlannedPoint, []string, error) {
	pr, err := LookupPreset(e.Preset)
	if err != nil {
		return nil, nil, fmt.Errorf("preset: %w", err)
	}
	for _, name := range sortedKeys(e.Dims) {
		if !slices.Contains(presetFree, name) {
			return nil, nil, fmt.Errorf("%s: preset %s fixes %s; only %s vary", name, pr.Name, name, strings.Join(presetFree, " and "))
		}
	}
	mmTypes := typs
	for _, t := range typs {
		if !slices.Contains(weightTypes(), t) {
			return nil, nil, fmt.Errorf("type: %v is not a weight type", t)
		}
	}
	if len(mmTypes) == 0 {
		mmTypes = []quant.Type{quant.Q4_0}
	}
	dims := map[string][]int64{harness.DimN: {1, 512}}
	for k, v := range e.Dims {
		dims[k] = v
	}
	_, kvGiven := e.Dims[harness.DimKV]
	var out []PlannedPoint
	var notes []string
	for _, l := range pr.Layers {
		if len(opList) > 0 && !slices.Contains(opList, l.Op) {
			continue
		}
		bo, err := harness.LookupOpDef(l.Op)
		if err != nil {
			return nil, nil, err
		}
		ts := []quant.Type{bo.DefaultType}
		if l.Op == ops.OpMulMat || l.Op == ops.OpMulMatID {
			ts = mmTypes
		}
		for _, d := range combos(bo, dims, l.Dims) {
			if !kvGiven && bo.HasDim(harness.DimKV) && !hasKey(l.Dims, harness.DimKV) {
				d[harness.DimKV] = max(512, d[harness.DimN])
			}
			for _, t := range ts {
				p, err := harness.NewPoint(bo.Op, t, d)
				if err != nil {
					return nil, nil, err
				}
				pl, err := p.Plan()
				if err != nil {
					notes = append(notes, fmt.Sprintf("%s %s left out: %v", pr.Name, l.Label, err))
					continue
				}
				out = append(out, PlannedPoint{Point: p, Label: pr.Name + " " + l.Label, Plan: pl})
				if len(out) > maxPoints {
					return nil, nil, fmt.Errorf("more than %d points", maxPoints)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, notes, fmt.Errorf("preset %s has no layer of the ops asked for", pr.Name)
	}
	return out, notes, nil
}

func hasKey(d harness.Dims, k string) bool {
	_, ok := d[k]
	return ok
}

// weightTypes are the types a matrix product takes as weights.
func weightTypes() []quant.Type {
	bo, _ := harness.LookupOpDef(ops.OpMulMat)
	return bo.Types
}

// combos returns every combination of the listed values of bo's sizes,
// with fixed sizes taking precedence and the rest their defaults, in bo's
// dimension order (the last size varying fastest).
func combos(bo harness.OpDef, lists map[string][]int64, fixed harness.Dims) []harness.Dims {
	out := []harness.Dims{{}}
	for _, d := range bo.Dims {
		vals := []int64{d.Default}
		if v, ok := fixed[d.Name]; ok {
			vals = []int64{v}
		} else if l, ok := lists[d.Name]; ok {
			vals = l
		}
		var next []harness.Dims
		for _, c := range out {
			for _, v := range vals {
				n := harness.Dims{}
				for k, x := range c {
					n[k] = x
				}
				n[d.Name] = v
				next = append(next, n)
				if len(next) > maxPoints {
					return next // the caller refuses more than maxPoints
				}
			}
		}
		out = next
	}
	return out
}

func sortedKeys(m map[string][]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func typeNames(ts []quant.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

func sizesOf(bos []harness.OpDef) string {
	var parts []string
	for _, bo := range bos {
		var names []string
		for _, d := range bo.Dims {
			names = append(names, d.Name)
		}
		parts = append(parts, bo.Name()+" has "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

// ExpandAll expands every entry of a spec and merges identical points
// (joining their labels), keeping the first occurrence's place.
func ExpandAll(entries []Entry) ([]PlannedPoint, []string, error) {
	var out []PlannedPoint
	var notes []string
	seen := map[string]int{}
	for i, e := range entries {
		pts, ns, err := e.Expand()
		if err != nil {
			if len(entries) > 1 {
				return nil, nil, fmt.Errorf("sweep %d: %w", i+1, err)
			}
			return nil, nil, err
		}
		notes = append(notes, ns...)
		for _, p := range pts {
			k := p.String()
			if j, ok := seen[k]; ok {
				if p.Label != "" && !strings.Contains(out[j].Label, p.Label) {
					out[j].Label = strings.TrimPrefix(out[j].Label+"; "+p.Label, "; ")
				}
				continue
			}
			seen[k] = len(out)
			out = append(out, p)
		}
		if len(out) > maxPoints {
			return nil, nil, fmt.Errorf("more than %d points", maxPoints)
		}
	}
	return out, notes, nil
}
