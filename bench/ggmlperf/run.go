package ggmlperf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernbench/kernbench/internal/procgroup"
)

// A Binary is a test-backend-ops program and the enums of the ggml it
// was built from.
type Binary struct {
	Path  string
	Enums Enums
	// Timeout is how long one run of the program may take (0: no limit).
	// The program runs in a process group of its own, killed whole when
	// the time is up or the context of Perf ends: a test-backend-ops that
	// hangs, or whose children hold its output open, does not hang the
	// caller.
	Timeout time.Duration
}

// Open checks that path is an executable file and reads the enums from
// header (FindHeader's choice when header is "").
func Open(path, header string) (*Binary, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ggmlperf: test-backend-ops: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("ggmlperf: %s is not an executable file", path)
	}
	if header == "" {
		if header, err = FindHeader(path); err != nil {
			return nil, err
		}
	}
	e, err := ReadEnumsFile(header)
	if err != nil {
		return nil, err
	}
	return &Binary{Path: path, Enums: e}, nil
}

// Perf times cases with test-backend-ops' perf mode on its CPU backend,
// in one run of the program, and returns one result per case, in the
// order of cases. A case the CPU backend does not run has a result with
// Supported false. dir holds the test file while the program runs ("" is
// the system's temporary folder).
//
// Every result is matched to its case by name and checked to be of the
// case's op: a result of another op means the ggml.h the enums came
// from is not the binary's, and is an error.
func (b *Binary) Perf(ctx context.Context, cases []Case, dir string) ([]Result, error) {
	if len(cases) == 0 {
		return nil, nil
	}
	f, err := os.CreateTemp(dir, "ggml-cases-*.txt")
	if err != nil {
		return nil, fmt.Errorf("ggmlperf: test file: %w", err)
	}
	defer os.Remove(f.Name())
	index := map[string]int{}
	var text strings.Builder
	for i, c := range cases {
		if _, dup := index[c.Name]; dup {
			f.Close()
			return nil, fmt.Errorf("ggmlperf: two cases named %q", c.Name)
		}
		index[c.Name] = i
		text.WriteString(c.Line())
		text.WriteByte('\n')
	}
	if _, err := f.WriteString(text.String()); err != nil {
		f.Close()
		return nil, fmt.Errorf("ggmlperf: test file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("ggmlperf: test file: %w", err)
	}
	path, err := filepath.Abs(f.Name())
	if err != nil {
		return nil, fmt.Errorf("ggmlperf: %w", err)
	}

	runCtx := ctx
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, b.Path, "perf", "-b", "CPU", "--output", "sql", "--test-file", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	procgroup.Own(cmd)
	runErr := cmd.Run()
	results, perr := ParseSQL(&stdout)
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ggmlperf: %s: %w", b.Path, ctx.Err())
		}
		if runCtx.Err() != nil {
			return nil, fmt.Errorf("ggmlperf: %s ran past the time limit of %v for a point and was killed with its children", b.Path, b.Timeout)
		}
		return nil, fmt.Errorf("ggmlperf: %s: %v%s", b.Path, runErr, tail(stderr.String()))
	}
	if perr != nil {
		return nil, perr
	}
	out := make([]Result, len(cases))
	seen := make([]bool, len(cases))
	for _, r := range results {
		name := r.Name()
		i, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("ggmlperf: %s reported a case it was not given: %s(%s)", b.Path, r.Op, r.Params)
		}
		if r.Op != cases[i].Op {
			return nil, fmt.Errorf("ggmlperf: case %s was asked as %s (op number %d) and %s ran it as %s: the ggml.h read does not match the binary", name, cases[i].Op, cases[i].OpNum, b.Path, r.Op)
		}
		out[i], seen[i] = r, true
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("ggmlperf: %s reported nothing for case %s (%s)%s", b.Path, cases[i].Name, cases[i].Op, tail(stderr.String()))
		}
	}
	return out, nil
}

// tail returns the last lines of a program's error output, for messages.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ": " + strings.Join(lines, " | ")
}
