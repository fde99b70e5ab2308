package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Progress reports how far a long job is, with an estimate of the time
// left. On a terminal (Live) it redraws one line in place; otherwise it
// writes a line after the first step, then at most one per Interval, and
// one when the job is complete, so logs stay short.
type Progress struct {
	// Interval is the least time between two lines when not Live.
	Interval time.Duration

	w     io.Writer
	label string
	unit  string
	total int
	live  bool
	width int // bar width in characters

	now      func() time.Time
	start    time.Time
	lastLine time.Time
	done     int
	lines    int // lines written when not live
	drawn    bool
}

// NewProgress returns a progress report of total steps (in unit, e.g.
// "chunks") written to w under label. live selects the redrawn bar; pass
// IsTerminal(w). The clock starts now.
func NewProgress(w io.Writer, label, unit string, total int, live bool) *Progress {
	p := &Progress{Interval: 5 * time.Second, w: w, label: label, unit: unit, total: total, live: live, width: 20, now: time.Now}
	p.start = p.now()
	return p
}

// Update records that done of the total steps are complete; note (may be
// empty) is shown after the estimate, e.g. the running perplexity.
func (p *Progress) Update(done int, note string) {
	if p == nil {
		return
	}
	p.done = min(max(done, 0), p.total)
	t := p.now()
	if p.live {
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(t, note, true))
		p.drawn = true
		return
	}
	if p.lines == 0 || t.Sub(p.lastLine) >= p.Interval || p.done == p.total {
		fmt.Fprintln(p.w, p.line(t, note, false))
		p.lastLine = t
		p.lines++
	}
}

// Clear erases a live bar (so other output can be written on its line); it
// does nothing when not live. The next Update draws it again.
func (p *Progress) Clear() {
	if p != nil && p.live && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Finish erases a live bar and writes a closing line: the steps done and
// the time taken.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.Clear()
	el := p.now().Sub(p.start)
	fmt.Fprintf(p.w, "%s: %d/%d %s in %s\n", p.label, p.done, p.total, p.unit, FormatDuration(el))
}

// line renders the report at time t: a compact bar for a live display
// (short enough not to wrap on an 80-column terminal with a short note),
// a fuller sentence for a log line.
func (p *Progress) line(t time.Time, note string, live bool) string {
	var b strings.Builder
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.done) / float64(p.total)
	}
	el := t.Sub(p.start)
	var eta, per time.Duration
	running := p.done > 0 && p.done < p.total
	if running {
		per = el / time.Duration(p.done)
		eta = time.Duration(float64(el) / float64(p.done) * float64(p.total-p.done))
	}
	if live {
		n := int(math.Round(frac * float64(p.width)))
		fmt.Fprintf(&b, "%s [%s", p.label, strings.Repeat("=", n))
		if n < p.width {
			b.WriteByte('>')
			b.WriteString(strings.Repeat(" ", p.width-n-1))
		}
		fmt.Fprintf(&b, "] %d/%d %3.0f%%", p.done, p.total, 100*frac)
		if running {
			fmt.Fprintf(&b, " ETA %s", FormatDuration(eta))
		} else if p.done == p.total {
			fmt.Fprintf(&b, " %s", FormatDuration(el))
		}
	} else {
		fmt.Fprintf(&b, "%s: %d/%d %s (%3.0f%%)", p.label, p.done, p.total, p.unit, 100*frac)
		if running {
			fmt.Fprintf(&b, ", %s per %s, ETA %s", FormatDuration(per), strings.TrimSuffix(p.unit, "s"), FormatDuration(eta))
		} else if p.done == p.total {
			fmt.Fprintf(&b, ", %s", FormatDuration(el))
		}
	}
	if note != "" {
		if live {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(note)
	}
	return b.String()
}

// FormatDuration writes d compactly: "850ms", "12.3s", "4m05s", "1h02m".
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s := int(d.Round(time.Second).Seconds())
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := int(d.Round(time.Minute).Minutes())
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}
