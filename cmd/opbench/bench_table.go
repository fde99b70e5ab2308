package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/kernbench/kernbench/bench"
)

// writePoints lists planned points without measuring them.
func writePoints(w io.Writer, points []bench.PlannedPoint) error {
	rows := make([][]string, 0, len(points))
	for _, p := range points {
		rows = append(rows, []string{p.Op.String(), p.Type.String(), p.Shape(), p.Label,
			fmt.Sprintf("%.3g", float64(p.Plan.Cost.Flops)), fmt.Sprintf("%.3g", float64(p.Plan.Cost.Bytes)), humanSize(p.Plan.Memory)})
	}
	return renderTable(w, []string{"op", "type", "shape", "label", "FLOPs", "bytes", "memory"}, rows)
}

// writeSweepTable prints the records of a sweep.
func writeSweepTable(w io.Writer, rs []bench.Record) error {
	hasLabel := false
	for _, r := range rs {
		hasLabel = hasLabel || r.Label != ""
	}
	header := []string{"op", "type", "shape"}
	if hasLabel {
		header = append(header, "layer")
	}
	header = append(header, "backend", "thr", "median", "±sd", "n", "GFLOP/s", "GB/s", "FLOP/B", "% roof", "valid")
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		row := []string{r.Op, r.Type, r.Shape}
		if hasLabel {
			row = append(row, r.Label)
		}
		row = append(row, r.Backend, strconv.Itoa(r.Threads))
		switch {
		case r.Emulated:
			// Validated, not timed: an emulator's times are not the
			// device's performance.
			row = append(row, "emulated", "-", "-", "-", "-", intensity(r), "-")
		case r.Timed():
			row = append(row, seconds(r.Median), fmt.Sprintf("%.1f%%", 100*r.Stddev/r.Mean), strconv.Itoa(len(r.Samples)),
				rate(r.GFLOPS, r.Flops > 0), rate(r.GBPS, true), intensity(r), roofPct(r))
		default:
			row = append(row, "-", "-", "-", "-", "-", "-", "-")
		}
		valid := r.Validation
		switch r.Validation {
		case bench.ValidOK:
			valid = "ok " + metric(r.NMSE)
		case bench.ValidSampled:
			valid = "sampled " + metric(r.NMSE)
		}
		if r.Error != "" {
			valid += ": " + r.Error
		}
		rows = append(rows, append(row, valid))
	}
	return renderTable(w, header, rows)
}

// seconds formats a time in seconds with a unit.
func seconds(s float64) string {
	if s <= 0 || math.IsNaN(s) {
		return "-"
	}
	scale, format, unit := timeUnit(s)
	return fmt.Sprintf(format+" %s", s*scale, unit)
}

// timeUnit is the unit seconds writes s in: the scale into it, the
// number's format and the unit's name.
func timeUnit(s float64) (scale float64, format, unit string) {
	switch {
	case s < 1e-6:
		return 1e9, "%.0f", "ns"
	case s < 1e-3:
		return 1e6, "%.2f", "µs"
	case s < 1:
		return 1e3, "%.3f", "ms"
	}
	return 1, "%.3f", "s"
}

// secondsRange is a median time and the range of the samples it is the
// median of, both in the median's unit (seconds'): "25.74 µs
// (24.38-26.52)"; the median alone where the range is unknown.
func secondsRange(median, lo, hi float64) string {
	m := seconds(median)
	if m == "-" || !(lo > 0) || !(hi >= lo) {
		return m
	}
	scale, format, _ := timeUnit(median)
	return fmt.Sprintf("%s ("+format+"-"+format+")", m, lo*scale, hi*scale)
}

func rate(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func intensity(r bench.Record) string {
	if r.Flops == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r.Intensity)
}

// roofPct is a record's share of its roofline bound and the ceiling that
// sets it: "34% int8", "80% dram".
func roofPct(r bench.Record) string {
	if r.RooflinePct <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% %s", r.RooflinePct, r.Roof)
}
