package cli

import (
	"bytes"
	"errors"
	"flag"
	"runtime"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops/cpu/cputest"
)

func TestThreads(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		err  string
	}{
		{nil, 0, ""},
		{[]string{"-t", "3"}, 3, ""},
		{[]string{"-t", "0"}, 0, ""},
		{[]string{"-t", "-1"}, 0, "want 0 (one per CPU) to 4096 threads, not -1"},
		{[]string{"-t", "5000"}, 0, "not 5000"},
		{[]string{"-t", "x"}, 0, `want a thread count, not "x"`},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(&bytes.Buffer{})
		n := 7
		ThreadsVar(fs, &n, "")
		err := fs.Parse(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "-t") {
				t.Errorf("%v: error %v, want one naming -t with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.want {
			t.Errorf("%v: %d, %v; want %d", tc.args, n, err, tc.want)
		}
	}
	if ResolveThreads(0) != runtime.NumCPU() || ResolveThreads(3) != 3 {
		t.Error("ResolveThreads")
	}
	l, err := ParseThreadList("1, 0,1,2")
	if err != nil || len(l) == 0 || l[0] != 1 || !contains(l, runtime.NumCPU()) || !contains(l, 2) {
		t.Errorf("ParseThreadList: %v, %v", l, err)
	}
	if _, err := ParseThreadList("1,-2"); err == nil {
		t.Error("ParseThreadList(1,-2): no error")
	}
}

func TestDeprecated(t *testing.T) {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	var n int
	var b bool
	ThreadsVar(fs, &n, "")
	fs.BoolVar(&b, "v", false, "verbose")
	Deprecated(fs, "threads", "t")
	Deprecated(fs, "verbose", "v")
	var out, errb bytes.Buffer
	if ok, _ := Parse(fs, []string{"-threads", "3", "-verbose"}, &out, &errb); !ok {
		t.Fatalf("parse: %s", errb.String())
	}
	if n != 3 || !b || !Visited(fs, "t") {
		t.Errorf("n=%d b=%v", n, b)
	}
	want := "cmd: -threads is deprecated: use -t\ncmd: -verbose is deprecated: use -v\n"
	if errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	errb.Reset()
	fs2 := flag.NewFlagSet("cmd", flag.ContinueOnError)
	ThreadsVar(fs2, &n, "")
	Deprecated(fs2, "threads", "t")
	if ok, code := Parse(fs2, []string{"-threads", "-4"}, &out, &errb); ok || code != ExitUsage || !strings.Contains(errb.String(), "-threads") {
		t.Errorf("bad value through an alias: ok=%v code=%d %q", ok, code, errb.String())
	}
}

func TestBackendFlagsNameTheFlag(t *testing.T) {
	type flagCase struct {
		b    BackendFlags
		flag string
	}
	cases := []flagCase{
		{BackendFlags{Name: "tpu"}, "backend"},
		{BackendFlags{Name: "cuda"}, "backend"},
		{BackendFlags{Name: "cpu", Tier: "nosuch"}, "tier"},
		{BackendFlags{Name: "tpu", Tier: "avx2"}, "backend"},
	}
	// A tier this build knows and this CPU lacks, where there is one.
	if tier := cputest.UnsupportedTier(); tier != "" {
		cases = append(cases, flagCase{BackendFlags{Name: "cpu", Tier: tier}, "tier"}, flagCase{BackendFlags{Name: "cpu-" + tier}, "backend"})
	}
	for _, tc := range cases {
		_, err := tc.b.Target()
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Flag != tc.flag {
			t.Errorf("%+v: %v, want a usage error for -%s", tc.b, err, tc.flag)
		}
	}
	if tg, err := (&BackendFlags{Name: "cpu", Tier: "generic"}).Target(); err != nil || tg.Name() != "cpu-generic" {
		t.Errorf("cpu/generic: %v, %v", tg.Name(), err)
	}
}

func TestF32(t *testing.T) {
	if v := F32(0.05); v != 0.05 {
		t.Errorf("F32(0.05) = %v", v)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Float64("min-p", F32(0.05), "")
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	if !strings.Contains(b.String(), "(default 0.05)") {
		t.Errorf("%q", b.String())
	}
}
