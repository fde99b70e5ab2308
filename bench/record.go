package bench

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/harness"
)

// Schema names the record set format; ReadJSON refuses other schemas.
const Schema = "kernbench-bench/v1"

// Validation outcomes of a record.
const (
	// ValidOK: the point's output matched the float64 reference.
	ValidOK = "ok"
	// ValidSampled: the whole reference was too costly for the point;
	// a sample of its outputs matched the float64 reference
	// (harness.Sampled).
	ValidSampled = "sampled"
	// ValidSkipped: the reference was too costly for the point; it was
	// computed once and checked for memory safety only.
	ValidSkipped = "unvalidated"
	// ValidFail: the output did not match; the point was not timed.
	ValidFail = "fail"
	// ValidUnsupported: the backend does not compute the point.
	ValidUnsupported = "unsupported"
	// ValidError: the point could not be built or timed (see Error).
	ValidError = "error"
	// ValidExternal: the point was timed by another program (ggml's
	// test-backend-ops, in opbench ggml), whose output kernbench does
	// not see.
	ValidExternal = "external"
)

// A Record is one measured point: an op, type and shape on one backend
// and thread count, with its samples and what they mean.
type Record struct {
	Op    string `json:"op"`
	Type  string `json:"type"`
	Shape string `json:"shape"`
	// Label says where the point comes from (a preset's layer), if set.
	Label string `json:"label,omitempty"`
	// Dims are the sizes in Shape, by name (m, n, k, kv, ...).
	Dims    map[string]int64 `json:"dims"`
	Backend string           `json:"backend"`
	Threads int              `json:"threads"`
	// Flops and Bytes are the op's cost model per run.
	Flops int64 `json:"flops"`
	Bytes int64 `json:"bytes"`

	Timing

	// GFLOPS and GBPS are from the median time.
	GFLOPS float64 `json:"gflops"`
	GBPS   float64 `json:"gbps"`
	// Intensity is Flops/Bytes (FLOP per byte).
	Intensity float64 `json:"flop_per_byte"`
	// RoofGFLOPS is the roofline's bound for the point (see
	// Roofline.Attainable), Roof the ceiling that sets it, and
	// RooflinePct GFLOPS as a percentage of it; zero without a roofline.
	// A record of bytes alone (a decode's tg test in opbench llama) has
	// Roof "dram" and RooflinePct its GBPS as a percentage of the DRAM
	// read bandwidth measured beside it, with RoofGFLOPS zero.
	RoofGFLOPS  float64 `json:"roof_gflops,omitempty"`
	Roof        string  `json:"roof,omitempty"`
	RooflinePct float64 `json:"roofline_pct,omitempty"`

	// Validation is one of the Valid* outcomes; NMSE and MaxErr are the
	// errors against the reference when validated.
	Validation string `json:"validation"`
	// Emulated marks a record of an emulated backend (ops.IsEmulated):
	// validated, never timed, since an emulator's times are not the
	// device's performance.
	Emulated bool `json:"emulated,omitempty"`
	// Weights marks a record measured with the weight operand's buffer
	// marked as holding weights (Runner.Weights), as a model's are.
	Weights bool           `json:"weights,omitempty"`
	NMSE    harness.Metric `json:"nmse"`
	MaxErr  harness.Metric `json:"max_err"`
	Error   string         `json:"error,omitempty"`
}

// Timed reports whether the record has samples.
func (r Record) Timed() bool { return len(r.Samples) > 0 && r.Median > 0 }

// EmulatedBackend reports whether a backend's name is an emulator's
// (cuda-emu, metal-emu: any name ending in "-emu"). Records read from a
// file are marked Emulated by their backend's name as well as by their
// mark, so that an emulator's times never pass for a device's.
func EmulatedBackend(name string) bool { return strings.HasSuffix(name, "-emu") }

// Name names the record in messages: its key, and its label if any.
func (r Record) Name() string {
	if r.Label != "" {
		return r.Key() + " (" + r.Label + ")"
	}
	return r.Key()
}

// Key identifies the point within a set: op, type, shape, backend,
// threads.
func (r Record) Key() string { return r.KeyWithout() }

// KeyWithout is Key with the named fields ("op", "type", "shape",
// "backend", "threads") left out, for joining sets that differ in them.
func (r Record) KeyWithout(fields ...string) string {
	var parts []string
	for _, f := range KeyFields {
		if slices.Contains(fields, f) {
			continue
		}
		parts = append(parts, f+"="+r.Field(f))
	}
	return strings.Join(parts, " ")
}

// KeyFields are the fields that identify a record.
var KeyFields = []string{"op", "type", "shape", "backend", "threads"}

// Field returns a key field's value as text.
func (r Record) Field(name string) string {
	switch name {
	case "op":
		return r.Op
	case "type":
		return r.Type
	case "shape":
		return r.Shape
	case "backend":
		return r.Backend
	case "threads":
		return strconv.Itoa(r.Threads)
	}
	return ""
}

// ProtocolInfo records how the points were measured.
type ProtocolInfo struct {
	TimeTargetS float64 `json:"time_target_s"`
	CostFlops   int64   `json:"cost_flops,omitempty"`
	CostBytes   int64   `json:"cost_bytes,omitempty"`
	WarmupS     float64 `json:"warmup_s"`
	Samples     int     `json:"target_samples"`
	MinSamples  int     `json:"min_samples"`
	MaxSamples  int     `json:"max_samples"`
	// Inputs says how inputs are reused across repetitions.
	Inputs string `json:"inputs"`
	// RefBudget is the reference work above which points go unvalidated.
	RefBudget int64 `json:"reference_budget"`
}

// NewProtocolInfo describes p (with its defaults filled in).
func NewProtocolInfo(p Protocol, refBudget int64) ProtocolInfo {
	p = p.WithDefaults()
	return ProtocolInfo{
		TimeTargetS: p.Time.Seconds(), CostFlops: p.CostFlops, CostBytes: p.CostBytes,
		WarmupS: p.Warmup.Seconds(), Samples: p.Samples, MinSamples: p.MinSamples, MaxSamples: p.MaxSamples,
		Inputs: InputReuse, RefBudget: refBudget,
	}
}

// A Set is the records of one sweep with what they were measured on.
type Set struct {
	Schema  string  `json:"schema"`
	Machine Machine `json:"machine"`
	Provenance
	Protocol ProtocolInfo `json:"protocol"`
	// Roofline, when present, is the machine's measured ceilings.
	Roofline *Roofline `json:"roofline,omitempty"`
	// Baseline, when present, is the other program the points were
	// timed against in alternation (opbench ggml).
	Baseline *Baseline `json:"baseline,omitempty"`
	// Sweep, when present, says which shard of which sweep the set is
	// (opbench sweep -shard), or that it is a merge of all of them.
	Sweep   *SweepShard `json:"sweep,omitempty"`
	Records []Record    `json:"records"`
}

// A Baseline is another program whose times a set holds beside
// kernbench's, as records of backend Backend.
type Baseline struct {
	Backend string `json:"backend"`
	// Program is the path of the program run, Version what it reports
	// of its build (ggml's build commit), Notes how it was driven.
	Program string `json:"program"`
	Version string `json:"version,omitempty"`
	Notes   string `json:"notes,omitempty"`
}

// WriteJSON writes the set as indented JSON.
func (s *Set) WriteJSON(w io.Writer) error {
	if s.Schema == "" {
		s.Schema = Schema
	}
	if s.Records == nil {
		s.Records = []Record{}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode records: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("bench: write records: %w", err)
	}
	return nil
}

// maxFileBytes bounds the record files ReadJSON and ReadCSV accept.
const maxFileBytes = 1 << 30

// ReadJSON reads a set written by WriteJSON.
func ReadJSON(r io.Reader) (*Set, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("bench: read records: %w", err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("bench: record file larger than %d bytes", maxFileBytes)
	}
	var s Set
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("bench: not a record set: %w", err)
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("bench: record set schema %q, want %q", s.Schema, Schema)
	}
	for i := range s.Records {
		if err := s.Records[i].check(); err != nil {
			return nil, fmt.Errorf("bench: record %d: %w", i+1, err)
		}
	}
	return &s, nil
}

// check reports a record that cannot be right, and marks one of an
// emulated backend (by name) Emulated. A record's summary (median, min,
// max) and throughputs must be those of its samples: a record whose
// stored numbers disagree with its samples was edited or damaged, and
// comparing or plotting it would show numbers no measurement gave.
func (r *Record) check() error {
	if r.Op == "" || r.Backend == "" {
		return errors.New("no op or backend")
	}
	if EmulatedBackend(r.Backend) {
		r.Emulated = true
	}
	if r.Threads < 0 || r.Flops < 0 || r.Bytes < 0 || r.RunsPerSample < 0 {
		return fmt.Errorf("%s: negative count", r.Name())
	}
	for _, x := range r.Samples {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: sample %v is not a positive time", r.Name(), x)
		}
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"median", r.Median}, {"min", r.Min}, {"max", r.Max}, {"mean", r.Mean}, {"stddev", r.Stddev}, {"gflops", r.GFLOPS}, {"gbps", r.GBPS}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s: %s is %v", r.Name(), v.name, v.x)
		}
	}
	if len(r.Samples) == 0 {
		return nil
	}
	st := Summarize(r.Samples)
	for _, v := range []struct {
		name        string
		stored, got float64
	}{{"median", r.Median, st.Median}, {"min", r.Min, st.Min}, {"max", r.Max, st.Max}} {
		if !closeTo(v.stored, v.got, 1e-9) {
			return fmt.Errorf("%s: the stored %s %ss disagrees with its %d samples' %s %ss: the record was edited or damaged",
				r.Name(), v.name, ftoa(v.stored), len(r.Samples), v.name, ftoa(v.got))
		}
	}
	if !r.Emulated {
		for _, v := range []struct {
			name        string
			stored, got float64
		}{{"gflops", r.GFLOPS, Rate(r.Flops, st.Median)}, {"gbps", r.GBPS, Rate(r.Bytes, st.Median)}} {
			if !closeTo(v.stored, v.got, 1e-6) {
				return fmt.Errorf("%s: the stored %s %s disagrees with its cost and samples' median (%s): the record was edited or damaged",
					r.Name(), v.name, ftoa(v.stored), ftoa(v.got))
			}
		}
	}
	return nil
}

// Duplicate returns the positions of the first two timed records of s
// that have the same key, less the ignored fields (see KeyWithout), and
// whether there are any: two timings of one point, which Compare refuses
// and a chart cannot show.
func (s *Set) Duplicate(ignore ...string) (i, j int, ok bool) {
	seen := map[string]int{}
	for k, r := range s.Records {
		if !r.Timed() {
			continue
		}
		key := r.KeyWithout(ignore...)
		if first, dup := seen[key]; dup {
			return first, k, true
		}
		seen[key] = k
	}
	return 0, 0, false
}

// closeTo reports whether a and b agree to within rel of the larger.
func closeTo(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// ReadFile reads a record set from a .json or .csv file.
func ReadFile(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var s *Set
	if strings.HasSuffix(strings.ToLower(path), ".csv") {
		s, err = ReadCSV(f)
	} else {
		s, err = ReadJSON(f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// The CSV columns, before the dimension columns and after them. Every row
// repeats the set's machine, commit and date so that rows of several files
// can be concatenated and still say where they come from.
var (
	csvHead = []string{"machine_id", "cpu", "commit", "dirty", "go_version", "date",
		"op", "type", "shape", "label", "backend", "threads"}
	csvTail = []string{"flops", "bytes", "clock", "warmup_runs", "runs_per_sample", "samples",
		"median_s", "min_s", "max_s", "mean_s", "stddev_s", "gflops", "gbps", "flop_per_byte",
		"roof_gflops", "roof", "roofline_pct", "validation", "nmse", "max_err", "error", "samples_s"}
)

// dimOrder lists dimension names in the order of the benchmark ops.
func dimOrder() []string {
	var out []string
	for _, o := range harness.OpDefs() {
		for _, d := range o.Dims {
			if !slices.Contains(out, d.Name) {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

// dimColumns returns the dimension names the records use, known names in
// benchmark order, then others sorted.
func dimColumns(rs []Record) []string {
	used := map[string]bool{}
	for _, r := range rs {
		for k := range r.Dims {
			used[k] = true
		}
	}
	var out []string
	for _, d := range dimOrder() {
		if used[d] {
			out = append(out, d)
			delete(used, d)
		}
	}
	var rest []string
	for d := range used {
		rest = append(rest, d)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// WriteCSV writes one row per record, with a column per dimension the
// records use (empty where a record's op lacks it) and the samples
// space-separated in the last column.
func (s *Set) WriteCSV(w io.Writer) error {
	dims := dimColumns(s.Records)
	cw := csv.NewWriter(w)
	header := append(append(slices.Clone(csvHead), dims...), csvTail...)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("bench: write csv: %w", err)
	}
	date := ""
	if !s.Date.IsZero() {
		date = s.Date.Format(time.RFC3339)
	}
	for _, r := range s.Records {
		row := []string{s.Machine.ID, s.Machine.CPU, s.Commit, strconv.FormatBool(s.Dirty), s.GoVersion, date,
			r.Op, r.Type, r.Shape, r.Label, r.Backend, strconv.Itoa(r.Threads)}
		for _, d := range dims {
			v, ok := r.Dims[d]
			if ok {
				row = append(row, strconv.FormatInt(v, 10))
			} else {
				row = append(row, "")
			}
		}
		samples := make([]string, len(r.Samples))
		for i, x := range r.Samples {
			samples[i] = ftoa(x)
		}
		row = append(row,
			strconv.FormatInt(r.Flops, 10), strconv.FormatInt(r.Bytes, 10), r.Clock,
			strconv.Itoa(r.WarmupRuns), strconv.Itoa(r.RunsPerSample), strconv.Itoa(len(r.Samples)),
			ftoa(r.Median), ftoa(r.Min), ftoa(r.Max), ftoa(r.Mean), ftoa(r.Stddev),
			ftoa(r.GFLOPS), ftoa(r.GBPS), ftoa(r.Intensity),
			ftoa(r.RoofGFLOPS), r.Roof, ftoa(r.RooflinePct),
			r.Validation, ftoa(float64(r.NMSE)), ftoa(float64(r.MaxErr)), r.Error,
			strings.Join(samples, " "))
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("bench: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("bench: write csv: %w", err)
	}
	return nil
}

// ReadCSV reads rows written by WriteCSV. The set's machine ID and CPU,
// commit, Go version and date come from the first row; every column that
// is not one of WriteCSV's fixed columns is a dimension.
func ReadCSV(r io.Reader) (*Set, error) {
	cr := csv.NewReader(io.LimitReader(r, maxFileBytes))
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("bench: csv header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("bench: csv: column %q appears twice", h)
		}
		col[h] = i
	}
	fixed := append(slices.Clone(csvHead), csvTail...)
	for _, need := range fixed {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("bench: csv: no column %q", need)
		}
	}
	var dims []string
	for _, h := range header {
		if !slices.Contains(fixed, h) {
			dims = append(dims, h)
		}
	}
	s := &Set{Schema: Schema, Records: []Record{}}
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bench: csv: %w", err)
		}
		p := csvRow{row: row, col: col}
		if line == 2 {
			s.Machine.ID, s.Machine.CPU, s.Commit, s.GoVersion = p.str("machine_id"), p.str("cpu"), p.str("commit"), p.str("go_version")
			s.Dirty = p.str("dirty") == "true"
			if d := p.str("date"); d != "" {
				s.Date, p.err = time.Parse(time.RFC3339, d)
			}
		}
		rec := Record{
			Op: p.str("op"), Type: p.str("type"), Shape: p.str("shape"), Label: p.str("label"), Backend: p.str("backend"),
			Threads: int(p.int("threads")), Flops: p.int("flops"), Bytes: p.int("bytes"),
			GFLOPS: p.float("gflops"), GBPS: p.float("gbps"), Intensity: p.float("flop_per_byte"),
			RoofGFLOPS: p.float("roof_gflops"), Roof: p.str("roof"), RooflinePct: p.float("roofline_pct"),
			Validation: p.str("validation"), NMSE: harness.Metric(p.float("nmse")), MaxErr: harness.Metric(p.float("max_err")),
			Error: p.str("error"), Dims: map[string]int64{},
		}
		rec.Clock, rec.WarmupRuns, rec.RunsPerSample = p.str("clock"), int(p.int("warmup_runs")), int(p.int("runs_per_sample"))
		rec.Median, rec.Min, rec.Max, rec.Mean, rec.Stddev = p.float("median_s"), p.float("min_s"), p.float("max_s"), p.float("mean_s"), p.float("stddev_s")
		for _, d := range dims {
			if row[col[d]] != "" {
				rec.Dims[d] = p.int(d)
			}
		}
		for _, f := range strings.Fields(p.str("samples_s")) {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil && p.err == nil {
				p.err = fmt.Errorf("samples_s: %w", err)
			}
			rec.Samples = append(rec.Samples, x)
		}
		if n := p.int("samples"); p.err == nil && n != int64(len(rec.Samples)) {
			p.err = fmt.Errorf("samples says %d, samples_s holds %d", n, len(rec.Samples))
		}
		if p.err == nil {
			p.err = rec.check()
		}
		if p.err != nil {
			return nil, fmt.Errorf("bench: csv line %d: %w", line, p.err)
		}
		s.Records = append(s.Records, rec)
	}
	return s, nil
}

// csvRow parses the fields of one row, keeping the first error.
type csvRow struct {
	row []string
	col map[string]int
	err error
}

func (p *csvRow) str(name string) string {
	i := p.col[name]
	if i >= len(p.row) {
		return ""
	}
	return p.row[i]
}

func (p *csvRow) int(name string) int64 {
	s := p.str(name)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", name, err)
	}
	return v
}

func (p *csvRow) float(name string) float64 {
	s := p.str(name)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", name, err)
	}
	return v
}
