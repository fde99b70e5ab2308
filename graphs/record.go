package graphs

import (
	"time"

	"github.com/kernbench/kernbench/ops"
)

// A StepKind says what a step of a plan does.
type StepKind uint8

const (
	// KindCompute is a backend computing a node.
	KindCompute StepKind = iota
	// KindCopy is a copy of a tensor's bytes from the memory of one
	// backend into the memory of another, at a boundary between nodes
	// the two compute.
	KindCopy
)

// String returns "compute" or "copy".
func (k StepKind) String() string {
	if k == KindCopy {
		return "copy"
	}
	return "compute"
}

// A Step is one step of a plan, in run order.
type Step struct {
	Kind StepKind
	// Node is the graph node computed, or for a copy the tensor whose
	// bytes move.
	Node *ops.Tensor
	// Backend computes the node, or receives the copy.
	Backend ops.Backend
	// From is the backend a copy reads from (nil for a compute step).
	From ops.Backend
	// For is the node a copy serves: the one that reads the copy, or for
	// a copy back into a node's own storage, that node.
	For *ops.Tensor
	// Bytes is the number of bytes a copy moves.
	Bytes int64
}

// A Record is what one step of a run did: the execution record of a node,
// or of a copy between backends.
type Record struct {
	Step
	// Start and End bracket the step. For a node computed with others
	// in one submission (ops.GraphComputer) they bracket the submission,
	// or with Device times the node's share of it (see Plan.Run).
	Start, End time.Time
	// Device is the node's own time on the device, where its backend
	// measures it (ops.DeviceTimer); zero otherwise.
	Device time.Duration
	// Cost is the node's FLOPs and bytes (ops.CostOf); for a copy, no
	// FLOPs and twice the bytes copied (each is read and written).
	Cost ops.Cost
	// Layer and Block place the node in its model (Graph.Scope); a copy
	// takes the place of the node it serves.
	Layer int
	Block string
}

// Duration returns the step's time: Device when the backend measured it,
// else End - Start.
func (r Record) Duration() time.Duration {
	if r.Device > 0 {
		return r.Device
	}
	return r.End.Sub(r.Start)
}

// Label returns the op label of a compute step (OpLabel) or
// "COPY(from->to)" for a copy, naming the two backends.
func (r Record) Label() string {
	if r.Kind == KindCopy {
		from, to := "?", "?"
		if r.From != nil {
			from = r.From.Name()
		}
		if r.Backend != nil {
			to = r.Backend.Name()
		}
		return "COPY(" + from + "->" + to + ")"
	}
	return OpLabel(r.Node)
}

// BackendName returns the name of the record's backend, or "" when it has
// none.
func (r Record) BackendName() string {
	if r.Backend == nil {
		return ""
	}
	return r.Backend.Name()
}
