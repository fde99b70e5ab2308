package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kernbench/kernbench/ops"
)

// Status is the outcome of one case on one backend.
type Status int

const (
	// StatusOK: the output matched the reference within tolerance.
	StatusOK Status = iota
	// StatusRefused: a Refuse case whose build failed as it must.
	StatusRefused
	// StatusRejected: a Reject case whose Compute failed as it must.
	StatusRejected
	// StatusSkipped: the backend does not support the node (its Supports
	// returned an error); nothing was computed.
	StatusSkipped
	// StatusFail: anything else; Reason says why.
	StatusFail
)

var statusNames = [...]string{"OK", "REFUSED-OK", "REJECTED-OK", "SKIP", "FAIL"}

// String returns "OK", "REFUSED-OK", "REJECTED-OK", "SKIP" or "FAIL".
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Passed reports whether the status counts as a pass.
func (s Status) Passed() bool { return s == StatusOK || s == StatusRefused || s == StatusRejected }

// MarshalText encodes the status as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a status name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("harness: unknown status %q", b)
}

// Metric is a float64 that encodes in JSON as a number when finite and as
// the strings "NaN", "+Inf" or "-Inf" otherwise (JSON has no such numbers).
type Metric float64

// MarshalJSON encodes m.
func (m Metric) MarshalJSON() ([]byte, error) {
	f := float64(m)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("harness: bad metric %s", b)
		}
		*m = Metric(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("harness: bad metric %s: %w", b, err)
	}
	*m = Metric(f)
	return nil
}

// A Result is the outcome of one case on one backend, also the record
// opbench writes as JSON.
type Result struct {
	Op      ops.Op   `json:"-"`
	OpName  string   `json:"op"`
	Case    string   `json:"case"`
	Types   string   `json:"types"`
	Backend string   `json:"backend"`
	Threads int      `json:"threads,omitempty"`
	Status  Status   `json:"status"`
	Reason  string   `json:"reason,omitempty"`
	Err     string   `json:"error,omitempty"`
	Inputs  []string `json:"inputs,omitempty"`

	// Elements is the number of output elements compared.
	Elements int64 `json:"elements,omitempty"`
	// NMSE is sum((got-want)²) / sum(want²) over the elements where both
	// are finite: 0 when both sums are 0, +Inf when only the first is.
	NMSE Metric `json:"nmse"`
	// MaxErr is the largest |got-want| over those elements, and RefMax the
	// largest |want|.
	MaxErr Metric `json:"max_err"`
	RefMax Metric `json:"ref_max"`
	// NaNMismatch counts elements where got and want disagree on being
	// NaN, +Inf or -Inf.
	NaNMismatch int64 `json:"nan_mismatch"`
	// Tol is the limit the case was held to.
	Tol Tolerance `json:"tolerance,omitzero"`
	// Compute is the time the backend's Compute took (wall clock, one
	// run, cold: not a benchmark).
	Compute time.Duration `json:"compute_ns,omitempty"`
	// ContextLost names the sticky fault that left the backend's device
	// context unusable during the case (its error wraps
	// ops.ErrContextLost): "CUDA_ERROR_MISALIGNED_ADDRESS". The backend
	// can run nothing more; a Session replaces it.
	ContextLost string `json:"context_lost,omitempty"`
}

// noteErr returns err's text, and records in r a lost device context
// that err reports.
func (r *Result) noteErr(err error) string {
	if errors.Is(err, ops.ErrContextLost) && r.ContextLost == "" {
		r.ContextLost = "context lost"
		var named interface{ LostReason() string }
		if errors.As(err, &named) {
			r.ContextLost = named.LostReason()
		}
	}
	return err.Error()
}

// Passed reports whether the case passed.
func (r Result) Passed() bool { return r.Status.Passed() }

// Unsupported reports whether the case was skipped because the backend's
// Supports refused it.
func (r Result) Unsupported() bool {
	return r.Status == StatusSkipped && r.Reason == "unsupported"
}

// Summary returns the result column of opbench's table: "OK",
// "REFUSED-OK", "FAIL: reason", ...
func (r Result) Summary() string {
	if r.Reason == "" {
		return r.Status.String()
	}
	return r.Status.String() + ": " + r.Reason
}

func (r *Result) fail(format string, args ...any) {
	r.Status = StatusFail
	r.Reason = fmt.Sprintf(format, args...)
}
