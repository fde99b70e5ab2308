package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/quant"
)

func newFS() (*flag.FlagSet, *int, *OnOff) {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	n := fs.Int("n", 1, "count")
	fa := NewOnOff(true)
	fs.Var(fa, "fa", "switch")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage of cmd") }
	return fs, n, fa
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		ok       bool
		code     int
		stdout   string // substring expected on stdout
		stderrRe string // substring expected on the one stderr line
	}{
		{args: []string{"-n", "3"}, ok: true},
		{args: []string{"--n", "3"}, ok: true},
		{args: []string{"-h"}, code: ExitOK, stdout: "usage of cmd"},
		{args: []string{"-zz"}, code: ExitUsage, stderrRe: "-zz"},
		{args: []string{"-n", "x"}, code: ExitUsage, stderrRe: "-n"},
		{args: []string{"-fa", "maybe"}, code: ExitUsage, stderrRe: "-fa"},
		{args: []string{"-n", "2", "stray"}, code: ExitUsage, stderrRe: `"stray"`},
	} {
		fs, _, _ := newFS()
		var out, errb bytes.Buffer
		ok, code := Parse(fs, tc.args, &out, &errb)
		if ok != tc.ok || (!ok && code != tc.code) {
			t.Errorf("%v: got ok=%v code=%d, want ok=%v code=%d", tc.args, ok, code, tc.ok, tc.code)
		}
		if !strings.Contains(out.String(), tc.stdout) {
			t.Errorf("%v: stdout %q lacks %q", tc.args, out.String(), tc.stdout)
		}
		if tc.stderrRe != "" {
			s := errb.String()
			if strings.Count(s, "\n") != 1 || !strings.Contains(s, tc.stderrRe) || !strings.HasPrefix(s, "cmd: ") {
				t.Errorf("%v: stderr %q: want one line starting with \"cmd: \" naming %s", tc.args, s, tc.stderrRe)
			}
		} else if errb.Len() != 0 {
			t.Errorf("%v: unexpected stderr %q", tc.args, errb.String())
		}
	}
}

func TestOnOff(t *testing.T) {
	for _, tc := range []struct {
		in   string
		def  bool
		want bool
		err  bool
	}{
		{"on", false, true, false}, {"OFF", true, false, false}, {"1", false, true, false},
		{"false", true, false, false}, {"auto", false, false, false}, {"auto", true, true, false},
		{"maybe", true, false, true},
	} {
		o := NewOnOff(tc.def)
		err := o.Set(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("Set(%q): error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && o.Value != tc.want {
			t.Errorf("Set(%q) with default %v: %v, want %v", tc.in, tc.def, o.Value, tc.want)
		}
	}
}

func TestParseIntList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"512", []int{512}, ""},
		{"128, 512,0", []int{128, 512, 0}, ""},
		{"", nil, "empty"},
		{"1,,2", nil, "not an integer"},
		{"1,x", nil, `"x"`},
		{"-5", nil, "outside"},
	} {
		got, err := ParseIntList(tc.in, 0, 1000)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseIntList(%q): error %v, want one with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ParseIntList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestKVFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want quant.Type
		flag string // the flag a usage error names
	}{
		{nil, quant.F16, ""},
		{[]string{"-kv-type", "f32"}, quant.F32, ""},
		{[]string{"-kv-type", "Q8_0"}, quant.Q8_0, ""},
		{[]string{"-ctk", "f32", "-ctv", "f32"}, quant.F32, ""},
		{[]string{"-ctk", "q8_0"}, quant.Q8_0, ""},
		{[]string{"-cache-type-v", "f32"}, quant.F32, ""},
		{[]string{"-kv-type", "q4_0"}, 0, "kv-type"},
		{[]string{"-ctk", "bogus"}, 0, "ctk"},
		{[]string{"-ctk", "f16", "-ctv", "f32"}, 0, "ctv"},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		var k KVFlags
		k.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := k.Type()
		if tc.flag != "" {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Flag != tc.flag {
				t.Errorf("%v: error %v, want a usage error for -%s", tc.args, err, tc.flag)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	if code := Report(&b, "run", Usagef("n", "bad")); code != ExitUsage || !strings.Contains(b.String(), "flag -n: bad") {
		t.Errorf("usage error: code %d, %q", code, b.String())
	}
	b.Reset()
	if code := Report(&b, "run", errors.New("boom")); code != ExitFailure || b.String() != "run: boom\n" {
		t.Errorf("failure: code %d, %q", code, b.String())
	}
}

func TestOpenBackend(t *testing.T) {
	b, err := OpenBackend(BackendOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "cpu" || Threads(b) != 1 || !strings.Contains(BackendDesc(b), "1 threads") {
		t.Errorf("backend %s, %d threads, desc %q", b.Name(), Threads(b), BackendDesc(b))
	}
	b.Close()
	for _, o := range []BackendOptions{{Name: "cpu-generic"}, {Name: "CPU", Tier: "generic"}} {
		b, err := OpenBackend(o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if d := BackendDesc(b); !strings.Contains(d, "tier generic") {
			t.Errorf("%+v: %s", o, d)
		}
		b.Close()
	}
	for _, tc := range []struct {
		o    BackendOptions
		want string
	}{
		{BackendOptions{Name: "tpu"}, `unknown backend "tpu" (known: cpu, cuda, metal)`},
		{BackendOptions{Name: "cuda"}, "backend cuda is unavailable: "},
		{BackendOptions{Name: "metal"}, "backend metal is unavailable: "},
		{BackendOptions{Name: "metal", Tier: "avx2"}, `backend metal has no variant "avx2"`},
		{BackendOptions{Name: "cuda", Tier: "avx2"}, `backend cuda has no variant "avx2"`},
		{BackendOptions{Tier: "no-such-tier"}, `backend cpu has no variant "no-such-tier"`},
		{BackendOptions{Name: "cpu-generic", Tier: "avx2"}, "names variant generic, and variant avx2 was asked for too"},
	} {
		b, err := OpenBackend(tc.o)
		if err == nil {
			b.Close()
			t.Errorf("%+v: no error", tc.o)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	if u := BackendUsage(); !strings.Contains(u, "cpu, cuda, metal") || !strings.Contains(u, "cpu-generic") {
		t.Errorf("usage %q", u)
	}

	// A bad $KERNBENCH_CPU is an error naming it when the default tier is
	// wanted, and no obstacle when a tier is named.
	t.Setenv("KERNBENCH_CPU", "avx9")
	if b, err := OpenBackend(BackendOptions{}); err == nil {
		b.Close()
		t.Error("$KERNBENCH_CPU=avx9: no error")
	} else if !strings.Contains(err.Error(), `$KERNBENCH_CPU: unknown tier "avx9"`) {
		t.Errorf("$KERNBENCH_CPU=avx9: %v", err)
	}
	b, err = OpenBackend(BackendOptions{Tier: "generic"})
	if err != nil {
		t.Fatalf("-tier generic with a bad $KERNBENCH_CPU: %v", err)
	}
	b.Close()
}

// fakeClock returns a clock that advances by step on every call after the
// first.
func fakeClock(step time.Duration) func() time.Time {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	n := -1
	return func() time.Time {
		n++
		return t0.Add(time.Duration(n) * step)
	}
}

func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "job", "chunks", 10, false)
	p.now = fakeClock(time.Second) // each call one second later
	p.start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now() // consume t0
	p.Interval = 3 * time.Second
	for i := 1; i <= 10; i++ {
		p.Update(i, fmt.Sprintf("v=%d", i))
	}
	p.Finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// The first step at t=1s, then t=4s, 7s, 10s (the last, also complete),
	// then the closing line.
	want := []string{
		"job: 1/10 chunks ( 10%), 1.0s per chunk, ETA 9.0s, v=1",
		"job: 4/10 chunks ( 40%), 1.0s per chunk, ETA 6.0s, v=4",
		"job: 7/10 chunks ( 70%), 1.0s per chunk, ETA 3.0s, v=7",
		"job: 10/10 chunks (100%), 10.0s, v=10",
		"job: 10/10 chunks in 11.0s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(b.String(), "\r") {
		t.Error("line mode wrote a carriage return")
	}
}

func TestProgressLive(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "job", "chunks", 4, true)
	p.Update(2, "")
	s := b.String()
	if !strings.HasPrefix(s, "\rjob [") || !strings.Contains(s, "] 2/4  50% ETA ") || !strings.HasSuffix(s, "\x1b[K") {
		t.Errorf("live bar %q", s)
	}
	if bar := s[strings.Index(s, "[")+1 : strings.Index(s, "]")]; len(bar) != 20 || strings.Count(bar, "=") != 10 {
		t.Errorf("bar %q: want 20 wide, half full", bar)
	}
	b.Reset()
	p.Finish()
	if !strings.HasPrefix(b.String(), "\r\x1b[K") || !strings.Contains(b.String(), "job: 2/4 chunks in ") {
		t.Errorf("finish %q: want the bar erased and a closing line", b.String())
	}
	var nilP *Progress
	nilP.Update(1, "") // a nil Progress does nothing
	nilP.Clear()
	nilP.Finish()
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {850 * time.Millisecond, "850ms"}, {12300 * time.Millisecond, "12.3s"},
		{245 * time.Second, "4m05s"}, {3720 * time.Second, "1h02m"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestTerminal(t *testing.T) {
	var b bytes.Buffer
	if IsTerminal(&b) || SameFile(&b, &b) {
		t.Error("a buffer is not a terminal or a file")
	}
}

// FuzzParseIntList checks that the list parser never panics and that what
// it accepts is in range and reads back the same.
func FuzzParseIntList(f *testing.F) {
	for _, s := range []string{"512", "128,512", " 1 , 2 ", "", ",", "-1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseIntList(s, -1, 1<<20)
		if err != nil {
			return
		}
		if len(l) == 0 {
			t.Fatalf("%q: no error and no values", s)
		}
		strs := make([]string, len(l))
		for i, v := range l {
			if v < -1 || v > 1<<20 {
				t.Fatalf("%q: %d out of range", s, v)
			}
			strs[i] = fmt.Sprint(v)
		}
		back, err := ParseIntList(strings.Join(strs, ","), -1, 1<<20)
		if err != nil || fmt.Sprint(back) != fmt.Sprint(l) {
			t.Fatalf("%q: %v does not read back: %v, %v", s, l, back, err)
		}
	})
}
