package llamabench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kernbench/kernbench/internal/procgroup"
)

// Params are the settings both programs run a model with.
type Params struct {
	// Prompt and Gen are the prompt lengths (ppN tests) and generation
	// lengths (tgN tests); a zero length is no test.
	Prompt, Gen []int
	// Reps is the timed repetitions of each test per run.
	Reps int
	// Threads is the thread count.
	Threads int
	// FlashAttn turns flash attention on in both programs (llama-bench's
	// default, "auto", would leave the choice to it).
	FlashAttn bool
}

// args returns the command-line arguments both programs take for p on
// model: -m, -p, -n, -r, -t, -fa and -o json.
func (p Params) args(model string) []string {
	fa := "off"
	if p.FlashAttn {
		fa = "on"
	}
	return []string{"-m", model, "-p", joinInts(p.Prompt), "-n", joinInts(p.Gen),
		"-r", strconv.Itoa(p.Reps), "-t", strconv.Itoa(p.Threads), "-fa", fa, "-o", "json"}
}

// Check reports settings no program can run.
func (p Params) Check() error {
	tests := 0
	for _, n := range append(append([]int(nil), p.Prompt...), p.Gen...) {
		if n < 0 {
			return fmt.Errorf("llamabench: token count %d is negative", n)
		}
		if n > 0 {
			tests++
		}
	}
	switch {
	case tests == 0:
		return errors.New("llamabench: no test: every prompt and generation length is 0")
	case p.Reps < 1:
		return fmt.Errorf("llamabench: %d repetitions; want 1 or more", p.Reps)
	case p.Threads < 1:
		return fmt.Errorf("llamabench: %d threads; want 1 or more", p.Threads)
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 0 {
		return "0"
	}
	return strings.Join(s, ",")
}

// A Side is one of the two programs compared.
type Side interface {
	// Name is the records' backend name for the side.
	Name() string
	// Bench runs the program once on model with p and returns its
	// results, one per test.
	Bench(ctx context.Context, model string, p Params) ([]Result, error)
}

// A Program is a benchmark program that takes llama-bench's flags
// (llama-bench itself, or kernbench's run with -bench first in Args).
type Program struct {
	// Backend is the records' backend name ("llama.cpp", "kernbench").
	Backend string
	// Path is the executable, Args what goes before the common flags.
	Path string
	Args []string
	// Limit is the time one run may take (0: no limit); at the limit its
	// process group is killed and the run is an error.
	Limit time.Duration
}

// Name returns p.Backend.
func (p *Program) Name() string { return p.Backend }

// Bench runs the program on model, in its own process group and within
// p.Limit, and parses its JSON output.
func (p *Program) Bench(ctx context.Context, model string, params Params) ([]Result, error) {
	if p.Limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Limit)
		defer cancel()
	}
	args := append(append([]string(nil), p.Args...), params.args(model)...)
	cmd := exec.CommandContext(ctx, p.Path, args...)
	procgroup.Own(cmd)
	// Once killed, do not wait for a grandchild that kept the pipes.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: over its time limit of %v (killed with its process group)", p.Path, p.Limit)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", p.Path, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("%s: %v%s", p.Path, err, tail(stderr.String()))
	}
	res, err := Parse(&stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", p.Path, err, tail(stderr.String()))
	}
	return res, nil
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
