package harness

import (
	"errors"
	"fmt"

	"github.com/kernbench/kernbench/ops"
)

// A Session runs cases one after another on a backend that it opens, and
// replaces the backend when a case loses its device context: a GPU's
// sticky fault (CUDA's illegal or misaligned address) fails every later
// call on the context, so without a new one every later case would fail
// too. The case that lost the context fails, naming the fault
// (Result.ContextLost); the backend is closed and a new one opened, and
// the next case runs on it.
type Session struct {
	name string
	open func() (ops.Backend, error)
	be   ops.Backend
	// Notice, when set, receives one line per replaced backend: "cuda-0:
	// context lost at case MUL_MAT/q4_0/m=16,n=1,k=96
	// (CUDA_ERROR_MISALIGNED_ADDRESS); reopened".
	Notice func(line string)
	// Reopened counts the backends replaced.
	Reopened int
}

// OpenSession opens a backend with open for a session named name (the
// target's name, for the notices).
func OpenSession(name string, open func() (ops.Backend, error)) (*Session, error) {
	be, err := open()
	if err != nil {
		return nil, err
	}
	return &Session{name: name, open: open, be: be}, nil
}

// Backend returns the backend the next case runs on.
func (s *Session) Backend() ops.Backend { return s.be }

// Run runs case c (Run) on the session's backend. When c lost the device
// context, Run closes the backend and opens another for the next case;
// if that fails, it returns c's result with an error saying so, and the
// session can run nothing more (later calls return an error).
func (s *Session) Run(c Case) (Result, error) {
	if s.be == nil {
		return Result{}, fmt.Errorf("%s: no backend (a reopen failed)", s.name)
	}
	r := Run(s.be, c)
	if r.ContextLost == "" {
		return r, nil
	}
	cerr := s.be.Close()
	s.be = nil
	be, err := s.open()
	if err != nil {
		return r, fmt.Errorf("%s: context lost at case %s (%s); reopening failed: %w", s.name, c.ID(), r.ContextLost, errors.Join(err, cerr))
	}
	s.be = be
	s.Reopened++
	if s.Notice != nil {
		s.Notice(fmt.Sprintf("%s: context lost at case %s (%s); reopened", s.name, c.ID(), r.ContextLost))
	}
	return r, nil
}

// Close closes the session's backend.
func (s *Session) Close() error {
	if s.be == nil {
		return nil
	}
	err := s.be.Close()
	s.be = nil
	return err
}
