package timing

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// A Row sums the records of one op or one layer.
type Row struct {
	// Name is the op label (such as "MUL_MAT(q4_0)" or
	// "COPY(cpu->cuda)") or the layer ("layer.3", or the block of nodes
	// outside layers, such as "output").
	Name  string
	Count int
	Time  time.Duration
	Flops int64
	Bytes int64
}

// GFLOPS returns the row's FLOPs per second, in billions.
func (r Row) GFLOPS() float64 { return rate(r.Flops, r.Time) / 1e9 }

// GBPS returns the row's bytes per second, in billions.
func (r Row) GBPS() float64 { return rate(r.Bytes, r.Time) / 1e9 }

// A Summary is a trace's time by op and by layer.
type Summary struct {
	// Total sums every record.
	Total Row
	// ByOp has a row per op label, the most time first.
	ByOp []Row
	// ByLayer has a row per layer (or block outside layers), in the
	// order the records first reach it.
	ByLayer []Row
}

// Share returns r's fraction of the total time.
func (s Summary) Share(r Row) float64 {
	if s.Total.Time <= 0 {
		return 0
	}
	return float64(r.Time) / float64(s.Total.Time)
}

// Summary sums the trace's records by op and by layer.
func (t Trace) Summary() Summary {
	s := Summary{Total: Row{Name: "total"}}
	ops, layers := map[string]int{}, map[string]int{}
	add := func(rows *[]Row, index map[string]int, name string, d time.Duration, flops, bytes int64) {
		i, ok := index[name]
		if !ok {
			i = len(*rows)
			index[name] = i
			*rows = append(*rows, Row{Name: name})
		}
		r := &(*rows)[i]
		r.Count++
		r.Time += d
		r.Flops += flops
		r.Bytes += bytes
	}
	for r := range t.records() {
		d := r.Duration()
		layer := r.Block
		if r.Layer >= 0 {
			layer = "layer." + strconv.Itoa(r.Layer)
		}
		if layer == "" {
			layer = "-"
		}
		add(&s.ByOp, ops, r.Label(), d, r.Cost.Flops, r.Cost.Bytes)
		add(&s.ByLayer, layers, layer, d, r.Cost.Flops, r.Cost.Bytes)
		s.Total.Count++
		s.Total.Time += d
		s.Total.Flops += r.Cost.Flops
		s.Total.Bytes += r.Cost.Bytes
	}
	slices.SortStableFunc(s.ByOp, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Time, a.Time), cmp.Compare(a.Name, b.Name))
	})
	return s
}

// Write prints the summary as two tables, by op and by layer, each with
// count, time in ms, share of the total, GFLOP/s and GB/s, and a total
// row.
func (s Summary) Write(w io.Writer) error {
	for _, part := range []struct {
		title string
		rows  []Row
	}{{"op", s.ByOp}, {"layer", s.ByLayer}} {
		rows := make([][]string, 0, len(part.rows)+1)
		for _, r := range slices.Concat(part.rows, []Row{s.Total}) {
			rows = append(rows, s.cells(r))
		}
		t := tablewriter.NewTable(w,
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{
				tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight,
			}}),
		)
		t.Header([]string{part.title, "count", "time ms", "share", "us/call", "GFLOP/s", "GB/s"})
		if err := t.Bulk(rows); err != nil {
			return fmt.Errorf("timing: summary table: %w", err)
		}
		if err := t.Render(); err != nil {
			return fmt.Errorf("timing: summary table: %w", err)
		}
	}
	return nil
}

func (s Summary) cells(r Row) []string {
	perCall := 0.0
	if r.Count > 0 {
		perCall = float64(r.Time.Nanoseconds()) / 1e3 / float64(r.Count)
	}
	gflops := "-"
	if r.Flops > 0 {
		gflops = strconv.FormatFloat(r.GFLOPS(), 'f', 2, 64)
	}
	return []string{
		r.Name,
		strconv.Itoa(r.Count),
		strconv.FormatFloat(float64(r.Time.Nanoseconds())/1e6, 'f', 3, 64),
		strconv.FormatFloat(100*s.Share(r), 'f', 1, 64) + "%",
		strconv.FormatFloat(perCall, 'f', 1, 64),
		gflops,
		strconv.FormatFloat(r.GBPS(), 'f', 2, 64),
	}
}
