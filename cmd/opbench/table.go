package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kernbench/kernbench/harness"
)

// writeResults prints results as a table; verbose adds the tolerance and
// the compute time.
func writeResults(w io.Writer, results []harness.Result, verbose bool) error {
	header := []string{"op", "case", "type(s)", "backend", "NMSE", "max err"}
	if verbose {
		header = append(header, "max NMSE", "time")
	}
	header = append(header, "result")
	rows := make([][]string, 0, len(results))
	for _, r := range results {
		row := []string{r.OpName, r.Case, r.Types, r.Backend, metric(r.NMSE), metric(r.MaxErr)}
		if verbose {
			tol, t := "-", "-"
			if r.Status == harness.StatusOK || r.Status == harness.StatusFail && r.Elements > 0 {
				tol = tolerance(r.Tol)
			}
			if r.Compute > 0 {
				t = r.Compute.String()
			}
			row = append(row, tol, t)
		}
		rows = append(rows, append(row, r.Summary()))
	}
	return renderTable(w, header, rows)
}

// writeCases lists cases without running them.
func writeCases(w io.Writer, cases []harness.Case) error {
	rows := make([][]string, 0, len(cases))
	for _, c := range cases {
		expect := "match"
		switch c.Expect {
		case harness.ExpectRefuse:
			expect = "refuse"
		case harness.ExpectReject:
			expect = "reject"
		}
		rows = append(rows, []string{c.Op.String(), c.Name, c.TypeString(), expect})
	}
	return renderTable(w, []string{"op", "case", "type(s)", "expect"}, rows)
}

func renderTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return nil
}

// metric formats an error metric; NaN means not measured.
func metric(m harness.Metric) string {
	f := float64(m)
	switch {
	case math.IsNaN(f):
		return "-"
	case f == 0:
		return "0"
	}
	return fmt.Sprintf("%.2e", f)
}

func tolerance(t harness.Tolerance) string {
	if t.Exact {
		return "exact"
	}
	return strings.TrimSpace(fmt.Sprintf("%.0e", t.MaxNMSE))
}
