package ggmlperf

import (
	"os"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The testdata files are test-backend-ops' own output (ggml d99724f2, CPU
// backend, perf mode; times from a busy machine, so only their form
// matters).
func TestParseRecordedOutput(t *testing.T) {
	tests := []struct {
		file    string
		parse   func(string) ([]Result, error)
		want    []Result // Op, Params prefix in Params, Supported, TimeUS, Runs, MemoryKB
		commit  string
		backend string
	}{
		{
			file: "perf-sql.txt", parse: parseSQLString, commit: "d99724f2", backend: "CPU",
			want: []Result{
				{Op: "SOFT_MAX", Params: "type=f32,ne=[64,64,20,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0", Supported: true, Runs: 8191, MemoryKB: 640},
				{Op: "SOFT_MAX", Params: "type=f32,ne=[77,64,20,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0", Supported: true, Runs: 8191, MemoryKB: 770},
			},
		},
		{
			file: "perf-console.txt", parse: parseConsoleString, backend: "CPU",
			want: []Result{
				{Op: "SOFT_MAX", Params: "type=f32,ne=[64,64,20,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0", Supported: true, Runs: 8191, TimeUS: 2627.89, MemoryKB: 640, GBPS: 0.23},
				{Op: "SOFT_MAX", Params: "type=f32,ne=[77,64,20,1],mask=0,sinks=0,m_prec=f32,nr23=[1,1],scale=1.000000,max_bias=0.000000,inplace=0", Supported: true, Runs: 8191, TimeUS: 2219.22, MemoryKB: 770, GBPS: 0.33},
			},
		},
		{
			file: "mulmat-console.txt", parse: parseConsoleString, backend: "CPU",
			want: []Result{
				{Op: "MUL_MAT", Params: "type_a=q4_0,type_b=f32,m=4096,n=1,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1,src_overlap=0", Supported: true, Runs: 138, TimeUS: 11074.14, Flops: 117.44e6},
			},
		},
		{
			file: "testfile-sql.txt", parse: parseSQLString, commit: "d99724f2", backend: "CPU",
			want: []Result{
				{Op: "RMS_NORM", Params: "name=kb0,type=f32,ne=[4096,8,1,1],op_params=[0:925353388],sources=f32[4096,8,1,1]", Supported: true, MemoryKB: 256},
				{Op: "SSM_SCAN", Params: "name=kb1,type=f32,ne=[26112,1,1,1],op_params=[],sources=f32[16,1,1536,1],f32[1,1536,1,1],f32[1536,1,1,1],f32[16,1536,1,1],f32[16,1,1,1],f32[16,1,1,1],i32[1,1,1,1]"},
			},
		},
		{
			file: "testfile-console.txt", parse: parseConsoleString, backend: "CPU",
			want: []Result{
				{Op: "RMS_NORM", Params: "name=kb0,type=f32,ne=[4096,8,1,1],op_params=[0:925353388],sources=f32[4096,8,1,1]", Supported: true, Runs: 8192, TimeUS: 3890.11, MemoryKB: 256, GBPS: 0.06},
				{Op: "SSM_SCAN", Params: "name=kb1,type=f32,ne=[26112,1,1,1],op_params=[],sources=f32[16,1,1536,1],f32[1,1536,1,1],f32[1536,1,1,1],f32[16,1536,1,1],f32[16,1,1,1],f32[16,1,1,1],i32[1,1,1,1]"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := tt.parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d results, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Op != w.Op || g.Params != w.Params || g.Supported != w.Supported || g.Backend != tt.backend || g.Commit != tt.commit {
					t.Errorf("result %d = %s(%s) supported=%v backend=%q commit=%q, want %s(%s) supported=%v backend=%q commit=%q",
						i, g.Op, g.Params, g.Supported, g.Backend, g.Commit, w.Op, w.Params, w.Supported, tt.backend, tt.commit)
				}
				if w.Runs != 0 && g.Runs != w.Runs {
					t.Errorf("result %d: %d runs, want %d", i, g.Runs, w.Runs)
				}
				if w.TimeUS != 0 && g.TimeUS != w.TimeUS {
					t.Errorf("result %d: %g us, want %g", i, g.TimeUS, w.TimeUS)
				}
				if w.Supported && g.TimeUS <= 0 {
					t.Errorf("result %d: no time", i)
				}
				if !w.Supported && (g.TimeUS != 0 || g.Runs != 0) {
					t.Errorf("result %d: unsupported but timed: %g us over %d runs", i, g.TimeUS, g.Runs)
				}
				if w.MemoryKB != 0 && g.MemoryKB != w.MemoryKB {
					t.Errorf("result %d: %d kB, want %d", i, g.MemoryKB, w.MemoryKB)
				}
				if w.GBPS != 0 && g.GBPS != w.GBPS {
					t.Errorf("result %d: %g GB/s, want %g", i, g.GBPS, w.GBPS)
				}
				if w.Flops != 0 && g.Flops != w.Flops {
					t.Errorf("result %d: %g FLOP, want %g", i, g.Flops, w.Flops)
				}
			}
		})
	}
}

// The SQL and console forms of one run agree on everything both carry.
func TestSQLAndConsoleAgreeOnNames(t *testing.T) {
	sql, err := parseSQLString(readTestdata(t, "testfile-sql.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"kb0", "kb1"} {
		if got := sql[i].Name(); got != want {
			t.Errorf("result %d: name %q, want %q", i, got, want)
		}
	}
}

func parseSQLString(s string) ([]Result, error)     { return ParseSQL(strings.NewReader(s)) }
func parseConsoleString(s string) ([]Result, error) { return ParseConsole(strings.NewReader(s)) }

func TestParseSQLRejectsDamage(t *testing.T) {
	good := strings.TrimSpace(strings.Split(readTestdata(t, "perf-sql.txt"), "\n")[len(strings.Split(readTestdata(t, "perf-sql.txt"), "\n"))-2])
	if !strings.HasPrefix(good, "INSERT") {
		t.Fatalf("testdata's last line is not an INSERT: %q", good)
	}
	tests := []struct {
		name, line, want string
	}{
		{"value missing", strings.Replace(good, "'perf', ", "", 1), "columns but"},
		{"time not a number", strings.Replace(good, "'8191'", "'many'", 1), "n_runs"},
		{"unclosed", strings.TrimSuffix(good, ");"), "not closed"},
		{"no values", "INSERT INTO test_backend_ops (a, b)", "VALUES"},
		{"supported but untimed", strings.Replace(good, "'"+sqlField(t, good, 9)+"'", "'0'", 1), "supported but"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSQL(strings.NewReader("CREATE TABLE x;\n" + tt.line + "\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("error %v, want one naming line 2 and %q", err, tt.want)
			}
		})
	}
}

// sqlField returns the i-th quoted value of an INSERT line.
func sqlField(t *testing.T, line string, i int) string {
	_, vals, _ := strings.Cut(line, "VALUES ('")
	parts := strings.Split(strings.TrimSuffix(vals, "');"), "', '")
	if i >= len(parts) {
		t.Fatalf("no value %d in %q", i, line)
	}
	return parts[i]
}

func TestParseParams(t *testing.T) {
	tests := []struct {
		in   string
		want []Param
		err  bool
	}{
		{"", nil, false},
		{"type=f32,ne=[64,64,20,1],mask=0", []Param{{"type", "f32"}, {"ne", "[64,64,20,1]"}, {"mask", "0"}}, false},
		{"name=kb0,sources=f32[4,1,1,1],q4_0[32,2,1,1]nb[18,36,72,72]", []Param{{"name", "kb0"}, {"sources", "f32[4,1,1,1],q4_0[32,2,1,1]nb[18,36,72,72]"}}, false},
		{"ne=[1,2", nil, true},
		{"ne=1]", nil, true},
		{"novalue", nil, true},
		{"=x", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseParams(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseParams(%q) error %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("ParseParams(%q) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParseParams(%q)[%d] = %v, want %v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func FuzzParseSQL(f *testing.F) {
	for _, name := range []string{"perf-sql.txt", "testfile-sql.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := ParseSQL(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range res {
			if r.Supported && (r.TimeUS <= 0 || r.Runs <= 0) {
				t.Fatalf("supported result without a time: %+v", r)
			}
		}
	})
}

func FuzzParseConsole(f *testing.F) {
	for _, name := range []string{"perf-console.txt", "testfile-console.txt", "mulmat-console.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := ParseConsole(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range res {
			if r.Supported && (r.TimeUS <= 0 || r.Runs <= 0) {
				t.Fatalf("supported result without a time: %+v", r)
			}
		}
	})
}

func FuzzParseParams(f *testing.F) {
	f.Add("name=kb0,type=f32,ne=[4096,8,1,1],op_params=[0:925353388],sources=f32[4096,8,1,1]")
	f.Add("type_a=q4_0,bs=[1,1],per=[0,1,2,3]")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseParams(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.Key == "" {
				t.Fatalf("empty key in %q", s)
			}
		}
	})
}
