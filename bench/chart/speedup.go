package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/kernbench/kernbench/bench"
)

// Speedups returns a bar chart of a comparison's speeds (A's median time
// over B's, so above 1 means B is faster), one horizontal bar per point,
// from 0, with lines at 1 (parity) and at goal (such as 1.25; none
// when goal <= 0). Bars are green where B is significantly faster, red
// where it is significantly slower and grey otherwise. a and b name the
// two sides in the axis label ("ggml-cpu", "cpu-avx2").
func Speedups(rep bench.Report, title, a, b string, goal float64, o Options) (Figure, error) {
	o = o.withDefaults()
	if len(rep.Comparisons) == 0 {
		return Figure{}, errors.New("chart: no comparisons to draw")
	}
	n := len(rep.Comparisons)
	labels := make([]string, n)
	hi := 1.0
	if goal > 0 {
		hi = max(hi, goal)
	}
	for i, c := range rep.Comparisons {
		// The first point at the top: bars are drawn bottom up.
		labels[n-1-i] = fmt.Sprintf("%s %s %s", c.A.Op, c.A.Type, c.A.Shape)
		if !(c.Speedup > 0) || math.IsInf(c.Speedup, 0) {
			return Figure{}, fmt.Errorf("chart: %s: speed %v cannot be drawn", c.Key, c.Speedup)
		}
		hi = max(hi, c.Speedup)
	}
	p, legend := newPlot(title, o)
	p.X.Label.Text = fmt.Sprintf("speed of %s relative to %s (%s time / %s time)", b, a, a, b)
	p.X.Min, p.X.Max = 0, hi*1.1
	colors := map[bench.Verdict]color.Color{
		bench.Faster: color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		bench.Slower: color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	}
	grey := color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	w := vg.Points(min(18, 360/float64(n)))
	for _, v := range []bench.Verdict{bench.Faster, bench.Slower, bench.WithinNoise} {
		vals := make(plotter.Values, n)
		drawn := false
		for i, c := range rep.Comparisons {
			match := c.Verdict == v || v == bench.WithinNoise && c.Verdict != bench.Faster && c.Verdict != bench.Slower
			if match {
				vals[n-1-i] = c.Speedup
				drawn = true
			}
		}
		if !drawn {
			continue
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return Figure{}, fmt.Errorf("chart: %w", err)
		}
		bars.Horizontal = true
		bars.LineStyle.Width = 0
		if col, ok := colors[v]; ok {
			bars.Color = col
		} else {
			bars.Color = grey
		}
		p.Add(bars)
		name := v.String()
		if v == bench.WithinNoise {
			name = "within noise or too few samples"
		}
		legend.Add(name, bars)
	}
	addLine := func(x float64, name string, dashed bool) {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: -0.5}, {X: x, Y: float64(n) - 0.5}})
		if err != nil {
			return
		}
		l.Color = color.Black
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		legend.Add(name, l)
	}
	addLine(1, "parity", false)
	if goal > 0 {
		addLine(goal, fmt.Sprintf("goal %.2fx", goal), true)
	}
	p.NominalY(labels...)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	o.Height = max(o.Height, vg.Points(float64(n)*14+80))
	return Figure{Name: "speedup", plot: p, legend: legend, opts: o}, nil
}
