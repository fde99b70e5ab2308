// Package chart draws kernbench record sets with gonum/plot: throughput
// against a swept size, one chart per op, and a roofline chart placing
// every point by its arithmetic intensity under the machine's measured
// ceilings. Charts are written as PNG and SVG, with the legend beside the
// data so that it never hides a point.
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kernbench/kernbench/bench"
	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
)

// Metrics for the y axis of throughput charts.
const (
	MetricAuto   = ""       // GFLOP/s for FLOP-bound ops, GB/s for the others
	MetricGFLOPS = "gflops" // GFLOP/s
	MetricGBPS   = "gbps"   // GB/s
)

// Options configure the charts. Zero fields take defaults.
type Options struct {
	// X is the size on the throughput charts' x axis; empty picks, per
	// op, the size with the most distinct values (n first on ties).
	X string
	// Y is one of the Metric constants.
	Y string
	// Width and Height are the data area's size; default 7 x 4.5 inches.
	Width, Height vg.Length
}

// A Figure is one chart ready to be written.
type Figure struct {
	// Name is the chart's file name suffix, such as "mul_mat" or
	// "roofline".
	Name   string
	plot   *plot.Plot
	legend plot.Legend
	opts   Options
}

// Title returns the chart's title.
func (f Figure) Title() string { return f.plot.Title.Text }

// Write draws the figure as "png" or "svg".
func (f Figure) Write(w io.Writer, format string) error {
	pw, h := f.opts.Width, f.opts.Height
	lw := legendWidth(f.legend)
	total := pw + lw
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(total, h), vgimg.UseDPI(110))}
	case "svg":
		c = vgsvg.New(total, h)
	default:
		return fmt.Errorf("chart: unknown format %q (png or svg)", format)
	}
	dc := draw.New(c)
	dc.FillPolygon(color.White, []vg.Point{{X: dc.Min.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Min.Y}, {X: dc.Max.X, Y: dc.Max.Y}, {X: dc.Min.X, Y: dc.Max.Y}})
	f.plot.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	if lw > 0 {
		// The legend goes right of the data area, level with its top.
		f.legend.Draw(draw.Crop(dc, pw+vg.Points(4), 0, 0, -vg.Points(30)))
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("chart: write %s: %w", format, err)
	}
	return nil
}

// legendWidth is the room the legend needs: its longest entry, the
// thumbnails and padding; 0 when it has no entries.
func legendWidth(l plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: 1000, Y: 1000}}})
	if r.Size().X <= 0 {
		return 0
	}
	return r.Size().X + vg.Points(16)
}

// WriteFiles writes each figure as DIR/BASE-NAME.png and .svg and returns
// the paths written.
func WriteFiles(figs []Figure, dir, base string) ([]string, error) {
	var paths []string
	for _, f := range figs {
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(dir, base+"-"+f.Name+"."+format)
			out, err := os.Create(path)
			if err != nil {
				return paths, fmt.Errorf("chart: %w", err)
			}
			err = f.Write(out, format)
			if cerr := out.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("chart: %w", cerr)
			}
			if err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = 7 * vg.Inch
	}
	if o.Height <= 0 {
		o.Height = 4.5 * vg.Inch
	}
	return o
}

// subtitle names the machine, commit and date of a set.
func subtitle(s *bench.Set) string {
	m := s.Machine.CPU
	if m == "" {
		m = s.Machine.ID
	}
	if n := s.Machine.Cores(); n > 0 && s.Machine.CPU != "" {
		m += fmt.Sprintf(" (%d cores)", n)
	}
	t := m + ", commit " + s.ShortCommit()
	if !s.Date.IsZero() {
		t += ", " + s.Date.Format("2006-01-02")
	}
	return t
}

func newPlot(title string, o Options) (*plot.Plot, plot.Legend) {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(9)
	return p, l
}

// timedRecords returns the records with samples and a positive rate.
func timedRecords(s *bench.Set) []bench.Record {
	var out []bench.Record
	for _, r := range s.Records {
		if r.Timed() {
			out = append(out, r)
		}
	}
	return out
}

// flopBound reports whether an op (by name) is read by GFLOP/s.
func flopBound(opName string) bool {
	o, err := ops.ParseOp(opName)
	if err != nil {
		return false
	}
	bo, err := harness.LookupOpDef(o)
	return err == nil && bo.FlopBound
}

// Throughput returns one chart per op in s (in the order the ops first
// appear): the median throughput against the x size, log scale, one line
// per type, backend, thread count and combination of the other sizes that
// vary.
func Throughput(s *bench.Set, o Options) ([]Figure, error) {
	o = o.withDefaults()
	switch o.Y {
	case MetricAuto, MetricGFLOPS, MetricGBPS:
	default:
		return nil, fmt.Errorf("chart: unknown metric %q (gflops or gbps)", o.Y)
	}
	recs := timedRecords(s)
	if len(recs) == 0 {
		return nil, errors.New("chart: the set has no timed records")
	}
	var opOrder []string
	byOp := map[string][]bench.Record{}
	for _, r := range recs {
		if _, ok := byOp[r.Op]; !ok {
			opOrder = append(opOrder, r.Op)
		}
		byOp[r.Op] = append(byOp[r.Op], r)
	}
	var figs []Figure
	for _, op := range opOrder {
		rs := byOp[op]
		x := o.X
		if x == "" {
			x = pickX(rs)
		} else if !slices.ContainsFunc(rs, func(r bench.Record) bool { _, ok := r.Dims[x]; return ok }) {
			if o.X != "" && len(opOrder) == 1 {
				return nil, fmt.Errorf("chart: %s has no size %q (sizes: %s)", op, x, strings.Join(dimNames(rs), ", "))
			}
			continue // another op of the set has it
		}
		f, err := throughputFigure(s, op, x, rs, o)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("chart: no op of the set has size %q", o.X)
	}
	return figs, nil
}

// dimNames returns the size names of rs, sorted.
func dimNames(rs []bench.Record) []string {
	var out []string
	for _, r := range rs {
		for k := range r.Dims {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// distinct returns the distinct values of size d in rs.
func distinct(rs []bench.Record, d string) []int64 {
	var vs []int64
	for _, r := range rs {
		if v, ok := r.Dims[d]; ok && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// pickX returns the size with the most distinct values, preferring n, m,
// k, kv on ties.
func pickX(rs []bench.Record) string {
	pref := []string{harness.DimN, harness.DimM, harness.DimK, harness.DimKV}
	names := dimNames(rs)
	sort.SliceStable(names, func(i, j int) bool {
		pi, pj := slices.Index(pref, names[i]), slices.Index(pref, names[j])
		if pi < 0 {
			pi = len(pref)
		}
		if pj < 0 {
			pj = len(pref)
		}
		return pi < pj
	})
	best, most := harness.DimN, 0
	for _, d := range names {
		if n := len(distinct(rs, d)); n > most {
			best, most = d, n
		}
	}
	return best
}

// seriesKey groups records into lines: type, backend, threads and the
// sizes other than x that vary in the set.
func seriesKey(r bench.Record, x string, varying []string) string {
	k := fmt.Sprintf("%s %s %dt", r.Type, r.Backend, r.Threads)
	for _, d := range varying {
		if d == x {
			continue
		}
		if v, ok := r.Dims[d]; ok {
			k += " " + d + "=" + strconv.FormatInt(v, 10)
		}
	}
	return k
}

func throughputFigure(s *bench.Set, op, x string, rs []bench.Record, o Options) (Figure, error) {
	metric := o.Y
	if metric == MetricAuto {
		metric = MetricGBPS
		if flopBound(op) {
			metric = MetricGFLOPS
		}
	}
	var varying []string
	for _, d := range dimNames(rs) {
		if len(distinct(rs, d)) > 1 {
			varying = append(varying, d)
		}
	}
	var order []string
	series := map[string]plotter.XYs{}
	for _, r := range rs {
		if r.Emulated {
			return Figure{}, fmt.Errorf("%s on %s ran on an emulator: its times are not a device's, so they have no throughput to plot", op, r.Backend)
		}
		xv, ok := r.Dims[x]
		if !ok {
			continue
		}
		y := r.GBPS
		if metric == MetricGFLOPS {
			y = r.GFLOPS
		}
		k := seriesKey(r, x, varying)
		if _, ok := series[k]; !ok {
			order = append(order, k)
		}
		series[k] = append(series[k], plotter.XY{X: float64(xv), Y: y})
	}
	unit := "GB/s"
	if metric == MetricGFLOPS {
		unit = "GFLOP/s"
	}
	title := fmt.Sprintf("%s throughput (%s, median) vs %s\n%s", op, unit, x, subtitle(s))
	p, legend := newPlot(title, o)
	p.X.Label.Text = x + ": " + dimDoc(op, x) + ", log scale"
	p.Y.Label.Text = "throughput (" + unit + ")"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks125{}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), 0.0
	for _, xys := range series {
		for _, xy := range xys {
			if xy.Y > 0 {
				ymin = min(ymin, xy.Y)
			}
			ymax = max(ymax, xy.Y)
		}
	}
	// Series far apart (a generic tier next to a SIMD one) share a log
	// axis, else the slow ones flatten against zero.
	logY := ymax > 0 && ymax/ymin > 20
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ticks125{}
		p.Y.Label.Text += ", log scale"
		for _, k := range order {
			series[k] = slices.DeleteFunc(series[k], func(xy plotter.XY) bool { return xy.Y <= 0 })
		}
	}
	for i, k := range order {
		if len(series[k]) == 0 {
			continue
		}
		xys := series[k]
		sort.Slice(xys, func(a, b int) bool { return xys[a].X < xys[b].X })
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return Figure{}, fmt.Errorf("chart: %s: %w", k, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(i / 7)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(3)
		p.Add(line, pts)
		legend.Add(k, line, pts)
		for _, xy := range xys {
			xmin, xmax = min(xmin, xy.X), max(xmax, xy.X)
		}
	}
	// Room around the points: a log axis with one value has no range.
	p.X.Min, p.X.Max = xmin/1.5, xmax*1.5
	p.Y.Min, p.Y.Max = 0, ymax*1.1
	switch {
	case logY:
		p.Y.Min, p.Y.Max = ymin/1.5, ymax*1.5
	case ymax == 0:
		p.Y.Max = 1
	}
	if xmin == xmax {
		p.X.Tick.Marker = plot.ConstantTicks{{Value: xmin, Label: strconv.FormatFloat(xmin, 'g', -1, 64)}}
	}
	return Figure{Name: strings.ToLower(op), plot: p, legend: legend, opts: o}, nil
}

// dimDoc returns the benchmark op's description of a size.
func dimDoc(op, dim string) string {
	o, err := ops.ParseOp(op)
	if err == nil {
		if bo, err := harness.LookupOpDef(o); err == nil {
			for _, d := range bo.Dims {
				if d.Name == dim {
					return d.Doc
				}
			}
		}
	}
	return dim
}

// Roofline returns the roofline chart of s: GFLOP/s against FLOP per byte
// (both log scale), a point per timed record that does FLOPs, and for each
// thread count in the records the measured ceilings of s's roofline:
// the f32 FMA peak (solid), DRAM and in-cache read bandwidth (dashed,
// rising with intensity until they meet the peak), and the int8 dot-product
// peak (dotted, in GOP/s: the ceiling of integer-dot quantized kernels).
func Roofline(s *bench.Set, o Options) (Figure, error) {
	o = o.withDefaults()
	var rs []bench.Record
	for _, r := range timedRecords(s) {
		if r.Flops > 0 && r.Intensity > 0 && !r.Emulated {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return Figure{}, errors.New("chart: roofline: no timed record of a real device does any FLOPs")
	}
	title := "roofline: attained GFLOP/s vs arithmetic intensity\n" + subtitle(s)
	if s.Roofline == nil {
		title = "attained GFLOP/s vs arithmetic intensity (no roofline measured)\n" + subtitle(s)
	}
	p, legend := newPlot(title, o)
	p.X.Label.Text = "arithmetic intensity (FLOP/byte, op cost model), log scale"
	p.Y.Label.Text = "attained (GFLOP/s), log scale"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks125{}, ticks125{}

	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	var threads []int
	for _, r := range rs {
		xmin, xmax = min(xmin, r.Intensity), max(xmax, r.Intensity)
		ymin, ymax = min(ymin, r.GFLOPS), max(ymax, r.GFLOPS)
		if !slices.Contains(threads, r.Threads) {
			threads = append(threads, r.Threads)
		}
	}
	slices.Sort(threads)
	if s.Roofline != nil {
		for _, t := range threads {
			c, ok := s.Roofline.Compute(t)
			if !ok {
				continue
			}
			ymax = max(ymax, c.Best)
			for _, lvl := range []string{bench.LevelDRAM, bench.LevelL3, bench.LevelCache} {
				if bw, ok := s.Roofline.Bandwidth(t, lvl); ok {
					xmin = min(xmin, bench.Ridge(c, bw)/4)
					xmax = max(xmax, bench.Ridge(c, bw)*2)
				}
			}
			if i8, ok := s.Roofline.Int8(t); ok {
				ymax = max(ymax, i8.Best)
			}
			if b16, ok := s.Roofline.BF16(t); ok {
				ymax = max(ymax, b16.Best)
			}
		}
	}
	xmin, xmax = xmin/2, xmax*2
	ymin, ymax = ymin/2, ymax*1.6

	// Ceilings first, so the points draw over them.
	ceilColor := []color.Color{color.RGBA{R: 40, G: 40, B: 40, A: 255}, color.RGBA{R: 120, G: 120, B: 120, A: 255}, color.RGBA{R: 170, G: 90, B: 40, A: 255}, color.RGBA{R: 40, G: 90, B: 170, A: 255}}
	if s.Roofline != nil {
		for ti, t := range threads {
			c, ok := s.Roofline.Compute(t)
			if !ok {
				continue
			}
			clr := ceilColor[ti%len(ceilColor)]
			for li, lvl := range []string{bench.LevelDRAM, bench.LevelL3, bench.LevelCache} {
				bw, ok := s.Roofline.Bandwidth(t, lvl)
				if !ok {
					continue
				}
				xs := logSpace(xmin, xmax, 64)
				xys := make(plotter.XYs, len(xs))
				for i, x := range xs {
					xys[i] = plotter.XY{X: x, Y: min(c.Best, x*bw.Best)}
				}
				l, err := plotter.NewLine(xys)
				if err != nil {
					return Figure{}, fmt.Errorf("chart: %w", err)
				}
				l.Color, l.Width = clr, vg.Points(1.2)
				switch li {
				case 1:
					l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				case 2:
					l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
				}
				p.Add(l)
				legend.Add(fmt.Sprintf("%s: f32 FMA peak %.0f GFLOP/s, %s read %.1f GB/s", threadsName(t), c.Best, levelName(lvl), bw.Best), l)
			}
			for _, dot := range []struct {
				peak  func(int) (bench.Peak, bool)
				label string
				dash  vg.Length
			}{
				{s.Roofline.Int8, "int8 dot peak %.0f GOP/s", vg.Points(1.5)},
				{s.Roofline.BF16, "bf16 dot peak %.0f GFLOP/s", vg.Points(4)},
			} {
				pk, ok := dot.peak(t)
				if !ok {
					continue
				}
				l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: pk.Best}, {X: xmax, Y: pk.Best}})
				if err != nil {
					return Figure{}, fmt.Errorf("chart: %w", err)
				}
				l.Color, l.Width = clr, vg.Points(1)
				l.Dashes = []vg.Length{dot.dash, vg.Points(2.5)}
				p.Add(l)
				legend.Add(fmt.Sprintf("%s: "+dot.label, threadsName(t), pk.Best), l)
			}
		}
	}

	var order []string
	groups := map[string]plotter.XYs{}
	for _, r := range rs {
		k := fmt.Sprintf("%s %s %s %dt", r.Op, r.Type, r.Backend, r.Threads)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], plotter.XY{X: r.Intensity, Y: r.GFLOPS})
	}
	for i, k := range order {
		sc, err := plotter.NewScatter(groups[k])
		if err != nil {
			return Figure{}, fmt.Errorf("chart: %w", err)
		}
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3.5)
		p.Add(sc)
		legend.Add(k, sc)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	return Figure{Name: "roofline", plot: p, legend: legend, opts: o}, nil
}

// ticks125 marks a log axis with labelled ticks at 1, 2 and 5 times each
// power of ten and unlabelled ones at the other integers, so that an axis
// spanning less than a decade or two still reads easily.
type ticks125 struct{}

// Ticks returns the ticks between lo and hi.
func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			out = append(out, t)
		}
	}
	return out
}

// threadsName returns "1 thread" or "N threads".
func threadsName(t int) string {
	if t == 1 {
		return "1 thread"
	}
	return strconv.Itoa(t) + " threads"
}

// levelName names a memory level in a legend.
func levelName(level string) string {
	switch level {
	case bench.LevelDRAM:
		return "DRAM"
	case bench.LevelL3:
		return "L3"
	}
	return "in-cache"
}

// logSpace returns n values from lo to hi evenly spaced in log scale.
func logSpace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	a, b := math.Log(lo), math.Log(hi)
	for i := range out {
		out[i] = math.Exp(a + (b-a)*float64(i)/float64(n-1))
	}
	return out
}

// All returns the throughput charts and, when any record does FLOPs, the
// roofline chart of s.
func All(s *bench.Set, o Options) ([]Figure, error) {
	figs, err := Throughput(s, o)
	if err != nil {
		return nil, err
	}
	if rf, err := Roofline(s, o); err == nil {
		figs = append(figs, rf)
	}
	return figs, nil
}
