package ggmlperf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// A Result is one case as test-backend-ops reports it in perf mode.
type Result struct {
	// Backend is ggml's backend name, such as "CPU".
	Backend string
	// Op is the op's name ("MUL_MAT", "SILU"); Params its case string,
	// such as "type_a=q4_0,type_b=f32,m=4096,n=1,k=14336,..." or, for a
	// case from a test file, "name=kb0,type=f32,ne=[...],...".
	Op     string
	Params string
	// Supported is false when the backend does not run the case (then
	// Error may say why and the times are zero).
	Supported bool
	Error     string
	// TimeUS is the time of one run in microseconds; Runs how many runs
	// it is the mean of.
	TimeUS float64
	Runs   int
	// Flops is ggml's FLOP count per run (0 for ops it counts bytes
	// for), GBPS its bandwidth figure and MemoryKB the bytes it counts
	// per run, in KiB.
	Flops    float64
	GBPS     float64
	MemoryKB int64
	// Commit is ggml's build commit and Device the device description,
	// when the output carries them (SQL does).
	Commit string
	Device string
}

// Name returns the case's "name" parameter (the name a test file line
// gave it), or "".
func (r Result) Name() string {
	ps, err := ParseParams(r.Params)
	if err != nil {
		return ""
	}
	for _, p := range ps {
		if p.Key == "name" {
			return p.Value
		}
	}
	return ""
}

// A Param is one key=value of a case string.
type Param struct {
	Key, Value string
}

// ParseParams splits a case string such as
// "type=f32,ne=[64,64,20,1],mask=0" at the commas that are not inside
// brackets. An item without "=" continues the value before it, as in
// "sources=f32[4096,1,1,1],q4_0[4096,4096,1,1]".
func ParseParams(s string) ([]Param, error) {
	var out []Param
	depth, start := 0, 0
	flush := func(end int) error {
		item := s[start:end]
		k, v, ok := strings.Cut(item, "=")
		if !ok && len(out) > 0 {
			// A list value: test_generic_op prints its sources as
			// "sources=f32[...],q4_0[...]".
			out[len(out)-1].Value += "," + item
			return nil
		}
		if !ok || k == "" || strings.ContainsAny(k, "[({") {
			return fmt.Errorf("ggmlperf: case parameter %q is not key=value", item)
		}
		out = append(out, Param{Key: k, Value: v})
		return nil
	}
	if s == "" {
		return nil, nil
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("ggmlperf: unbalanced %q in case string %q", s[i], s)
			}
		case ',':
			if depth == 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("ggmlperf: unclosed bracket in case string %q", s)
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return out, nil
}

// maxLine bounds one line of test-backend-ops output.
const maxLine = 1 << 20

// ParseSQL reads test-backend-ops' "-output sql" form: a CREATE TABLE
// statement and one INSERT per result. Other lines are ignored; an INSERT
// that cannot be read is an error naming its line.
func ParseSQL(r io.Reader) ([]Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []Result
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "INSERT INTO ") {
			continue
		}
		res, err := parseInsert(text)
		if err != nil {
			return nil, fmt.Errorf("ggmlperf: sql line %d: %w", line, err)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ggmlperf: read sql output: %w", err)
	}
	return out, nil
}

// parseInsert reads
// "INSERT INTO t (c1, c2, ...) VALUES ('v1', 'v2', ...);".
// test-backend-ops does not escape quotes inside values; none of the
// fields read here holds one.
func parseInsert(s string) (Result, error) {
	open := strings.IndexByte(s, '(')
	mid := strings.Index(s, ") VALUES (")
	if open < 0 || mid < open {
		return Result{}, errors.New("not INSERT INTO table (columns) VALUES (values)")
	}
	cols := strings.Split(s[open+1:mid], ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	rest := strings.TrimSuffix(strings.TrimSpace(s[mid+len(") VALUES ("):]), ";")
	rest, ok := strings.CutSuffix(rest, ")")
	if !ok {
		return Result{}, errors.New("values not closed by )")
	}
	var vals []string
	for len(rest) > 0 {
		if rest[0] != '\'' {
			return Result{}, fmt.Errorf("value %d does not start with a quote", len(vals)+1)
		}
		end := strings.Index(rest[1:], "', '")
		if end < 0 {
			if !strings.HasSuffix(rest, "'") || len(rest) < 2 {
				return Result{}, fmt.Errorf("value %d is not closed by a quote", len(vals)+1)
			}
			vals = append(vals, rest[1:len(rest)-1])
			break
		}
		vals = append(vals, rest[1:1+end])
		rest = rest[1+end+len("', "):]
	}
	if len(vals) != len(cols) {
		return Result{}, fmt.Errorf("%d columns but %d values", len(cols), len(vals))
	}
	var res Result
	var err error
	field := func(name string) string {
		for i, c := range cols {
			if c == name {
				return vals[i]
			}
		}
		return ""
	}
	num := func(name string) float64 {
		if err != nil {
			return 0
		}
		v := field(name)
		if v == "" {
			return 0
		}
		f, e := strconv.ParseFloat(v, 64)
		if e != nil {
			err = fmt.Errorf("%s %q is not a number", name, v)
		}
		return f
	}
	for _, c := range []string{"op_name", "op_params", "time_us", "supported"} {
		found := false
		for _, have := range cols {
			found = found || have == c
		}
		if !found {
			return Result{}, fmt.Errorf("no %s column", c)
		}
	}
	res.Backend, res.Op, res.Params = field("backend_name"), field("op_name"), field("op_params")
	res.Supported = field("supported") == "1"
	res.Error = field("error_message")
	res.Commit, res.Device = field("build_commit"), field("device_description")
	res.TimeUS = num("time_us")
	res.Flops = num("flops")
	res.GBPS = num("bandwidth_gb_s")
	res.MemoryKB = int64(num("memory_kb"))
	res.Runs = int(num("n_runs"))
	if err != nil {
		return Result{}, err
	}
	if res.Supported && (res.TimeUS <= 0 || res.Runs <= 0) {
		return Result{}, fmt.Errorf("%s(%s): supported but time_us %g over %d runs", res.Op, res.Params, res.TimeUS, res.Runs)
	}
	return res, nil
}

var (
	ansiEscape   = regexp.MustCompile("\x1b\\[[0-9;]*m")
	consoleTimed = regexp.MustCompile(`^\s+([A-Z0-9_]+)\((.*)\):\s+(\d+) runs -\s+([0-9.eE+-]+) us/run - (.*)$`)
	consoleNot   = regexp.MustCompile(`^\s+([A-Z0-9_]+)\((.*)\): not supported(.*)$`)
	consoleFlops = regexp.MustCompile(`([0-9.]+) (k|M|G|T)?FLOP/run`)
	consoleBytes = regexp.MustCompile(`(\d+) kB/run -\s+([0-9.]+) GB/s`)
	consoleBack  = regexp.MustCompile(`^Backend \d+/\d+: (\S+)`)
	consoleDesc  = regexp.MustCompile(`^\s+Device description: (.*)$`)
)

// ParseConsole reads test-backend-ops' default (console) output of perf
// mode, colours and all, for logs a user saved: one result per timed or
// unsupported case. Other lines are ignored.
func ParseConsole(r io.Reader) ([]Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []Result
	backend, device := "", ""
	for line := 1; sc.Scan(); line++ {
		text := ansiEscape.ReplaceAllString(sc.Text(), "")
		if m := consoleBack.FindStringSubmatch(text); m != nil {
			backend, device = m[1], ""
			continue
		}
		if m := consoleDesc.FindStringSubmatch(text); m != nil {
			device = m[1]
			continue
		}
		if m := consoleNot.FindStringSubmatch(text); m != nil {
			out = append(out, Result{Backend: backend, Device: device, Op: m[1], Params: m[2], Error: strings.Trim(strings.TrimSpace(m[3]), "[]")})
			continue
		}
		m := consoleTimed.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		res := Result{Backend: backend, Device: device, Op: m[1], Params: m[2], Supported: true}
		runs, err1 := strconv.Atoi(m[3])
		t, err2 := strconv.ParseFloat(m[4], 64)
		if err1 != nil || err2 != nil || runs <= 0 || t <= 0 {
			return nil, fmt.Errorf("ggmlperf: console line %d: runs %q, time %q", line, m[3], m[4])
		}
		res.Runs, res.TimeUS = runs, t
		if f := consoleFlops.FindStringSubmatch(m[5]); f != nil {
			v, _ := strconv.ParseFloat(f[1], 64)
			res.Flops = v * map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[f[2]]
		}
		if b := consoleBytes.FindStringSubmatch(m[5]); b != nil {
			res.MemoryKB, _ = strconv.ParseInt(b[1], 10, 64)
			res.GBPS, _ = strconv.ParseFloat(b[2], 64)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ggmlperf: read console output: %w", err)
	}
	return out, nil
}
