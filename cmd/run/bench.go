package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// benchSeed seeds the random tokens the tests feed the model, so every run
// evaluates the same tokens.
const benchSeed = 42

// A benchTest is one measured test: ppN (nPrompt > 0) or tgN (nGen > 0),
// with its settings and the wall time of each repetition.
type benchTest struct {
	nPrompt, nGen    int
	nBatch, nUBatch  int
	threads          int
	kvType           quant.Type
	flash            bool
	testTime         time.Time
	samplesNs        []int64
	backend, cpuTier string
}

// name is the test's name as llama-bench writes it.
func (t *benchTest) name() string {
	switch {
	case t.nPrompt > 0 && t.nGen == 0:
		return fmt.Sprintf("pp%d", t.nPrompt)
	case t.nGen > 0 && t.nPrompt == 0:
		return fmt.Sprintf("tg%d", t.nGen)
	}
	return fmt.Sprintf("pp%d+tg%d", t.nPrompt, t.nGen)
}

// samplesTS returns the speed of each repetition in tokens per second.
func (t *benchTest) samplesTS() []float64 {
	ts := make([]float64, len(t.samplesNs))
	for i, ns := range t.samplesNs {
		ts[i] = 1e9 * float64(t.nPrompt+t.nGen) / float64(ns)
	}
	return ts
}

// meanStd returns the mean and the sample standard deviation (n-1 in the
// denominator, 0 for fewer than two values) of v, as llama-bench reports.
func meanStd(v []float64) (mean, std float64) {
	if len(v) == 0 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// benchmark runs the -bench mode: every pp test, then every tg test, each
// reported as soon as it is done.
func benchmark(cx context.Context, c *config, m *model.Model, be ops.Backend, stdout, stderr io.Writer) error {
	var tests []*benchTest
	for _, n := range c.ppList {
		if n > 0 {
			tests = append(tests, &benchTest{nPrompt: n})
		}
	}
	for _, n := range c.tgList {
		if n > 0 {
			tests = append(tests, &benchTest{nGen: n})
		}
	}
	tok, err := loadTokenizer(m)
	if err != nil {
		return err
	}
	v := tok.Vocab()
	first := int32(-1)
	if v.AddBOS && v.BOS >= 0 {
		first = v.BOS
	}
	info := describe(c.modelPath, m)
	p := newPrinter(c.output, stdout, c, info)
	p.header()
	rng := rand.New(rand.NewPCG(benchSeed, 0))
	for _, t := range tests {
		cp := c.contextParams(m, t.nPrompt+t.nGen)
		t.nBatch, t.nUBatch, t.kvType, t.flash = cp.NBatch, cp.NUBatch, cp.KVType, cp.FlashAttn
		t.threads = cli.Threads(be)
		t.backend, t.cpuTier = strings.ToUpper(be.Name()), c.target.Variant
		if err := runTest(cx, c, m, be, cp, t, first, rng); err != nil {
			return fmt.Errorf("%s: %w", t.name(), err)
		}
		p.test(t)
	}
	p.footer()
	return p.err()
}

// runTest measures t on a fresh context: the warm-up run, then c.reps
// timed repetitions, each from an empty cache.
func runTest(cx context.Context, c *config, m *model.Model, be ops.Backend, cp model.ContextParams, t *benchTest, first int32, rng *rand.Rand) error {
	ctx, err := m.NewContext(be, cp)
	if err != nil {
		return err
	}
	defer ctx.Close()
	nv := m.Hparams.NVocab
	randTok := func() int32 { return int32(rng.IntN(nv)) }
	prompt := func(n int) error {
		toks := make([]int32, 0, cp.NBatch)
		for done := 0; done < n; {
			k := min(n-done, cp.NBatch)
			toks = toks[:0]
			for i := range k {
				if done == 0 && i == 0 && first >= 0 {
					toks = append(toks, first)
				} else {
					toks = append(toks, randTok())
				}
			}
			if err := ctx.DecodeContext(cx, model.SimpleBatch(toks, int32(done), 0)); err != nil {
				return err
			}
			c.notes.Note(ctx.LastGraph())
			done += k
		}
		return nil
	}
	gen := func(n int) error {
		tok := first
		if tok < 0 {
			tok = randTok()
		}
		var b model.Batch // kept: a generated token allocates nothing
		one := []int32{tok}
		for i := range n {
			one[0] = tok
			b.SetSimple(one, int32(i), 0)
			if err := ctx.DecodeContext(cx, b); err != nil {
				return err
			}
			c.notes.Note(ctx.LastGraph())
			tok = randTok()
		}
		return nil
	}
	t.testTime = time.Now().UTC()
	if !c.noWarmup {
		if t.nPrompt > 0 {
			if err := prompt(t.nPrompt); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		if t.nGen > 0 {
			ctx.KV().Clear()
			if err := gen(1); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	for range c.reps {
		ctx.KV().Clear()
		start := time.Now()
		if t.nPrompt > 0 {
			if err := prompt(t.nPrompt); err != nil {
				return err
			}
		}
		if t.nGen > 0 {
			if err := gen(t.nGen); err != nil {
				return err
			}
		}
		t.samplesNs = append(t.samplesNs, time.Since(start).Nanoseconds())
	}
	return nil
}

// A printer writes the bench results in one format.
type printer interface {
	header()
	test(t *benchTest)
	footer()
	err() error
}

// newPrinter returns the printer for format (md, json or csv).
func newPrinter(format string, w io.Writer, c *config, info modelInfo) printer {
	base := basePrinter{w: bufio.NewWriter(w), c: c, info: info}
	switch format {
	case "json":
		return &jsonPrinter{basePrinter: base}
	case "csv":
		return &csvPrinter{basePrinter: base}
	}
	return &mdPrinter{basePrinter: base}
}

// basePrinter holds what every printer needs.
type basePrinter struct {
	w    *bufio.Writer
	c    *config
	info modelInfo
	werr error
}

// flush writes out what is buffered, keeping the first error.
func (p *basePrinter) flush() {
	if err := p.w.Flush(); err != nil && p.werr == nil {
		p.werr = fmt.Errorf("writing the results: %w", err)
	}
}

func (p *basePrinter) err() error { return p.werr }

// mdPrinter writes llama-bench's markdown table.
type mdPrinter struct {
	basePrinter
	cols []mdCol
}

// An mdCol is one column: its title, width (negative: left-aligned) and
// how to render a test.
type mdCol struct {
	title string
	width int
	val   func(t *benchTest) string
}

func (p *mdPrinter) header() {
	c := p.c
	p.cols = []mdCol{
		{"model", -30, func(*benchTest) string { return p.info.Desc }},
		{"size", 10, func(*benchTest) string { return formatSize(p.info.Size) }},
		{"params", 10, func(*benchTest) string { return formatParams(p.info.Params) }},
		{"backend", -10, func(t *benchTest) string { return t.backend }},
		{"threads", 7, func(t *benchTest) string { return strconv.Itoa(t.threads) }},
	}
	// Like llama-bench, show the settings that differ from the defaults.
	if c.nBatch != 2048 {
		p.cols = append(p.cols, mdCol{"n_batch", 7, func(t *benchTest) string { return strconv.Itoa(c.nBatch) }})
	}
	if c.nUBatch != 512 {
		p.cols = append(p.cols, mdCol{"n_ubatch", 8, func(t *benchTest) string { return strconv.Itoa(c.nUBatch) }})
	}
	if c.kvType != quant.F16 {
		p.cols = append(p.cols,
			mdCol{"type_k", 6, func(t *benchTest) string { return t.kvType.String() }},
			mdCol{"type_v", 6, func(t *benchTest) string { return t.kvType.String() }})
	}
	if !c.flash {
		p.cols = append(p.cols, mdCol{"fa", 3, func(t *benchTest) string { return "0" }})
	}
	if c.target.Variant != "" && (c.be.Tier != "" || !strings.EqualFold(strings.TrimSpace(c.be.Name), c.target.Entry.Name)) {
		p.cols = append(p.cols, mdCol{"tier", -7, func(t *benchTest) string { return t.cpuTier }})
	}
	p.cols = append(p.cols,
		mdCol{"test", 15, func(t *benchTest) string { return t.name() }},
		mdCol{"t/s", 20, func(t *benchTest) string {
			m, s := meanStd(t.samplesTS())
			return fmt.Sprintf("%.2f ± %.2f", m, s)
		}})
	fmt.Fprint(p.w, "|")
	for _, col := range p.cols {
		fmt.Fprintf(p.w, " %*s |", col.width, col.title)
	}
	fmt.Fprint(p.w, "\n|")
	for _, col := range p.cols {
		w := col.width
		end := "-"
		if w > 0 {
			end = ":"
		} else {
			w = -w
		}
		fmt.Fprintf(p.w, " %s%s |", strings.Repeat("-", w-1), end)
	}
	fmt.Fprintln(p.w)
	p.flush()
}

func (p *mdPrinter) test(t *benchTest) {
	fmt.Fprint(p.w, "|")
	for _, col := range p.cols {
		fmt.Fprintf(p.w, " %*s |", col.width, col.val(t))
	}
	fmt.Fprintln(p.w)
	p.flush()
}

func (p *mdPrinter) footer() {
	commit, _ := buildInfo()
	fmt.Fprintf(p.w, "\nbuild: %s (%s)\n", commit, runtime.Version())
	p.flush()
}

// A field is one named value of a test record, in llama-bench's order.
type field struct {
	name string
	val  any
}

// fields returns t's record with llama-bench's field names, leaving out the
// fields about GPUs, NUMA and tensor overrides that have no meaning here,
// and adding cpu_tier (the backend's variant: the CPU kernel tier) after
// backends.
func (p *basePrinter) fields(t *benchTest) []field {
	commit, _ := buildInfo()
	ts := t.samplesTS()
	avgTS, stdTS := meanStd(ts)
	ns := make([]float64, len(t.samplesNs))
	for i, v := range t.samplesNs {
		ns[i] = float64(v)
	}
	avgNS, stdNS := meanStd(ns)
	fa := 0
	if t.flash {
		fa = 1
	}
	return []field{
		{"build_commit", commit},
		{"build_number", 0},
		{"cpu_info", cpuInfo()},
		{"gpu_info", ""},
		{"backends", t.backend},
		{"cpu_tier", t.cpuTier},
		{"model_filename", p.info.Filename},
		{"model_type", p.info.Desc},
		{"model_size", p.info.Size},
		{"model_n_params", p.info.Params},
		{"n_batch", t.nBatch},
		{"n_ubatch", t.nUBatch},
		{"n_threads", t.threads},
		{"type_k", t.kvType.String()},
		{"type_v", t.kvType.String()},
		{"flash_attn", fa},
		{"n_prompt", t.nPrompt},
		{"n_gen", t.nGen},
		{"n_depth", 0},
		{"test_time", t.testTime.Format("2006-01-02T15:04:05Z")},
		{"avg_ns", int64(math.Round(avgNS))},
		{"stddev_ns", int64(math.Round(stdNS))},
		{"avg_ts", avgTS},
		{"stddev_ts", stdTS},
	}
}

// jsonPrinter writes a JSON array of records, with samples_ns and
// samples_ts after the fields, as llama-bench -o json.
type jsonPrinter struct {
	basePrinter
	n int
}

func (p *jsonPrinter) header() { fmt.Fprint(p.w, "[\n"); p.flush() }

func (p *jsonPrinter) test(t *benchTest) {
	if p.n > 0 {
		fmt.Fprint(p.w, ",\n")
	}
	p.n++
	fmt.Fprint(p.w, "  {\n")
	for _, f := range p.fields(t) {
		fmt.Fprintf(p.w, "    %q: %s,\n", f.name, jsonValue(f.val))
	}
	fmt.Fprintf(p.w, "    \"samples_ns\": %s,\n", jsonValue(t.samplesNs))
	fmt.Fprintf(p.w, "    \"samples_ts\": %s\n", jsonValue(t.samplesTS()))
	fmt.Fprint(p.w, "  }")
	p.flush()
}

func (p *jsonPrinter) footer() { fmt.Fprint(p.w, "\n]\n"); p.flush() }

// jsonValue encodes v (values of our own making, which always encode).
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// csvPrinter writes a header line and one line per test with every value
// quoted, as llama-bench -o csv (without the samples).
type csvPrinter struct {
	basePrinter
	wroteHeader bool
}

func (p *csvPrinter) header() {}

func (p *csvPrinter) test(t *benchTest) {
	fs := p.fields(t)
	names := make([]string, len(fs))
	vals := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
		s := fmt.Sprint(f.val)
		if x, ok := f.val.(float64); ok {
			s = strconv.FormatFloat(x, 'f', 6, 64)
		}
		vals[i] = `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	if !p.wroteHeader {
		fmt.Fprintln(p.w, strings.Join(names, ","))
		p.wroteHeader = true
	}
	fmt.Fprintln(p.w, strings.Join(vals, ","))
	p.flush()
}

func (p *csvPrinter) footer() {}

// buildInfo returns the VCS revision the binary was built from ("unknown"
// when not recorded) and whether the tree was modified.
func buildInfo() (commit string, dirty bool) {
	commit = "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return commit, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
			if len(commit) > 7 {
				commit = commit[:7]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		commit += "+dirty"
	}
	return commit, dirty
}

// cpuInfo returns the CPU's model name from /proc/cpuinfo, or the
// architecture where that is not available.
func cpuInfo() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
