package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// parseArgs parses flags and positional arguments in any order (flag
// stops at the first argument that is not a flag; "opbench compare A B
// -fail-on-regression" should work too). It returns the positional
// arguments; help reports -h.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, help bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, true, nil
			}
			return nil, false, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, false, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), false, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a FlagSet that reports nothing itself: callers print
// one line per error and the usage on -h.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInts parses a comma-separated list of positive integers, such as
// "1,8,32,512"; an item may be a doubling range "1..512" (1,2,4,...,512).
func parseInts(s string) ([]int64, error) {
	var out []int64
	for _, item := range splitList(s) {
		if lo, hi, ok := strings.Cut(item, ".."); ok {
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 != nil || err2 != nil || a < 1 || b < a {
				return nil, fmt.Errorf("bad range %q (want lo..hi, 1 <= lo <= hi, doubling from lo)", item)
			}
			for v := a; v <= b; v *= 2 {
				out = append(out, v)
				if len(out) > 10000 {
					return nil, fmt.Errorf("%q has too many values", s)
				}
			}
			continue
		}
		v, err := strconv.ParseInt(item, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", item)
		}
		if v < 1 {
			return nil, fmt.Errorf("%d is not positive", v)
		}
		out = append(out, v)
	}
	if len(out) == 0 && strings.TrimSpace(s) != "" {
		return nil, fmt.Errorf("no values in %q", s)
	}
	return out, nil
}

// parseBytes parses a byte count such as "512M", "8G", "1.5GiB" or
// "1e9" (K, M, G, T are powers of 1024).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a byte count (such as 512M or 8G)", s)
	}
	return int64(v * mult), nil
}

// parseCount parses a non-negative count that may be written as 1e10.
func parseCount(s string) (int64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 || v > math.MaxInt64/2 || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	return int64(v), nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// usageError prints a one-line error for a command and the hint to -h,
// and returns exitUsage.
func usageError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "opbench %s: %v\n", cmd, err)
	fmt.Fprintf(stderr, "run \"opbench %s -h\" for usage\n", cmd)
	return exitUsage
}

// flagError turns a flag package error into a one-line message naming
// the flag.
func flagError(err error) error {
	msg := err.Error()
	// "invalid value "x" for flag -threads: parse error" is long but
	// names the flag; keep the first line.
	msg, _, _ = strings.Cut(msg, "\n")
	return errors.New(msg)
}

// warn writes a line for each deprecated spelling a command line used.
func warn(stderr io.Writer, cmd string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "opbench %s: %s\n", cmd, w)
	}
}
