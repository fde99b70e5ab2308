package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	_ "github.com/kernbench/kernbench/ops/backends" // every backend registers itself
	"github.com/kernbench/kernbench/ops/registry"
)

// backends is the registry opbench opens backends from: every backend
// registered itself there. Tests swap in registries of their own.
var backends = registry.Default

const backendsHelp = `Usage: opbench backends

Lists every registered backend and each of its variants (the CPU's kernel
tiers), each a backend of its own for validate and sweep ("cpu-avx2"),
with whether it can open on this machine and, where it cannot, why.
"-backend all" in validate and sweep means every one marked yes.

Examples:

	opbench backends
	opbench validate -backend all -op mul_mat    # every one marked yes
	opbench validate -backend cpu -tier generic  # one CPU tier
`

// runBackends is "opbench backends".
func runBackends(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("backends")
	pos, help, err := parseArgs(fs, args)
	if help {
		fmt.Fprint(stdout, backendsHelp)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		return usageError(stderr, "backends", flagErr(err))
	}
	if err := writeBackends(stdout); err != nil {
		fmt.Fprintf(stderr, "opbench backends: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// writeBackends lists every entry and variant: its name, whether it can
// open here, and its description, or why it cannot open (then the
// description on a line of its own).
func writeBackends(w io.Writer) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tavailable\tdescription, or why it cannot open here")
	for _, e := range backends.Entries() {
		if err := e.Err(); err != nil {
			fmt.Fprintf(tw, "%s\tno\t%v\n", e.Name, err)
			fmt.Fprintf(tw, "\t\t%s\n", e.Description)
		} else {
			fmt.Fprintf(tw, "%s\tyes\t%s\n", e.Name, e.Description)
		}
		if e.Variants == nil {
			continue
		}
		def, _ := backends.Resolve(e.Name, "")
		for _, t := range e.Targets() {
			switch err := t.Err(); {
			case err != nil:
				fmt.Fprintf(tw, "  %s\tno\t%v\n", t.Name(), err)
			case t.Name() == def.Name():
				fmt.Fprintf(tw, "  %s\tyes\tthe default: what %s alone opens\n", t.Name(), e.Name)
			default:
				fmt.Fprintf(tw, "  %s\tyes\t\n", t.Name())
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Rows without a description would end in the padding.
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if _, err := fmt.Fprintln(w, strings.TrimRight(l, " ")); err != nil {
			return err
		}
	}
	return nil
}

// selectTargets returns the backends that a -backend list and a -tier
// list select, in order and without repeats. Each name is "all" (every
// backend that can open here), a backend ("cpu", "cuda") or one variant
// of one ("cpu-avx2"). A backend with variants named alone (or by "all")
// stands for the variants tiers names: none means its default variant,
// "all" every variant that can run here. A backend or variant named
// explicitly that cannot open here is an error saying why; "all" passes
// over those. Errors start with the flag at fault.
func selectTargets(names, tiers []string) ([]registry.Target, error) {
	if len(names) == 0 {
		return nil, errors.New("-backend: no backend named")
	}
	var out []registry.Target
	add := func(ts ...registry.Target) {
		for _, t := range ts {
			if !slices.ContainsFunc(out, func(x registry.Target) bool { return x.Name() == t.Name() }) {
				out = append(out, t)
			}
		}
	}
	for _, name := range names {
		if strings.EqualFold(name, "all") {
			for _, e := range backends.Entries() {
				if e.Err() != nil {
					continue
				}
				ts, err := variantTargets(e, tiers, true)
				if err != nil {
					return nil, err
				}
				add(ts...)
			}
			continue
		}
		if e, err := backends.Lookup(strings.ToLower(name)); err == nil {
			ts, err := variantTargets(e, tiers, false)
			if err != nil {
				return nil, err
			}
			add(ts...)
			continue
		}
		t, err := backends.Resolve(name, "")
		if err != nil {
			return nil, fmt.Errorf("-backend: %w", err)
		}
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("-backend: %w", &registry.UnavailableError{Target: t.Name(), Err: err})
		}
		add(t)
	}
	return out, nil
}

// variantTargets returns the targets of e that tiers selects (see
// selectTargets); e alone when it has no variants. Tiers select among the
// variants of an entry whose variants are tiers (the CPU's); for another
// (a GPU per variant, an emulator) the entry means its default variant,
// and under "all" (fromAll) every variant that can open.
func variantTargets(e registry.Entry, tiers []string, fromAll bool) ([]registry.Target, error) {
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("-backend: %w", &registry.UnavailableError{Target: e.Name, Err: err})
	}
	all := e.Targets()
	if e.Variants == nil {
		return all, nil
	}
	if !e.Tiers {
		if fromAll {
			var out []registry.Target
			for _, t := range all {
				if t.Err() == nil {
					out = append(out, t)
				}
			}
			return out, nil
		}
		tiers = nil
	}
	if len(tiers) == 0 {
		d, err := backends.Resolve(e.Name, "")
		if err != nil {
			return nil, fmt.Errorf("-backend: %w", err)
		}
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("-backend: %w", &registry.UnavailableError{Target: d.Name(), Err: err})
		}
		return []registry.Target{d}, nil
	}
	if len(tiers) == 1 && strings.EqualFold(tiers[0], "all") {
		var out []registry.Target
		for _, t := range all {
			if t.Err() == nil {
				out = append(out, t)
			}
		}
		return out, nil
	}
	var out []registry.Target
	for _, name := range tiers {
		i := slices.IndexFunc(all, func(t registry.Target) bool { return t.Variant == name })
		if i < 0 {
			var known []string
			for _, t := range all {
				known = append(known, t.Variant)
			}
			return nil, fmt.Errorf("-tier: unknown tier %q of backend %s (known: %s)", name, e.Name, strings.Join(known, ", "))
		}
		if err := all[i].Err(); err != nil {
			return nil, fmt.Errorf("-tier: tier %s is not supported here: %v", name, err)
		}
		out = append(out, all[i])
	}
	return out, nil
}
