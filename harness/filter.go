package harness

import (
	"slices"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A Filter selects cases. Empty fields select everything.
type Filter struct {
	// Ops keeps cases of these ops.
	Ops []ops.Op
	// Types keeps cases that exercise any of these types.
	Types []quant.Type
	// Name keeps cases whose name or ID contains this substring.
	Name string
}

// Match reports whether c passes the filter.
func (f Filter) Match(c Case) bool {
	if len(f.Ops) > 0 && !slices.Contains(f.Ops, c.Op) {
		return false
	}
	if len(f.Types) > 0 && !slices.ContainsFunc(c.Types, func(t quant.Type) bool { return slices.Contains(f.Types, t) }) {
		return false
	}
	if f.Name != "" && !strings.Contains(c.Name, f.Name) && !strings.Contains(c.ID(), f.Name) {
		return false
	}
	return true
}

// Select returns the cases that pass the filter, in order.
func Select(cases []Case, f Filter) []Case {
	var out []Case
	for _, c := range cases {
		if f.Match(c) {
			out = append(out, c)
		}
	}
	return out
}
