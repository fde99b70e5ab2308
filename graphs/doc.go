// Package graphs orders, schedules and runs compute graphs of ops.Tensor
// nodes.
//
// # Building and order
//
// A Graph is built lazily from the tensors the caller wants computed:
// Expand adds a tensor and every node it depends on (through Src and
// ViewOf) that is not in the graph yet, sources first, in the
// deterministic order of a depth-first walk (sources in Src order, then
// ViewOf). This is ggml_build_forward_expand's rule, so a caller that
// expands a side effect (a CPY into a KV cache) before the nodes that read
// its destination gets the order it means. After makes such an ordering
// explicit. SetScope places nodes in a model (layer and block) for dumps,
// traces and profiles.
//
// # Scheduling
//
// A Scheduler runs graphs on backends listed in order of preference: each
// computed node goes to the first backend whose Supports accepts it, and
// where a node reads (or writes) a tensor that lives in another backend's
// memory the plan inserts a copy at the boundary, counted in the plan
// (Plan.Copies) and timed in the run's records. Leaves live in the first
// backend's memory.
//
// # Memory plan
//
// Intermediates (computed nodes that own their bytes, and copies between
// backends) get storage from one Arena per backend at offsets a liveness
// plan chooses: walking the steps in order, a tensor is placed (best fit
// in the free ranges, else past the end) at the step that writes it, and
// its bytes are freed after the last step that reads it, directly or
// through a view, so that views keep their base alive. Leaves and the
// graph's outputs (the tensors given to Expand) are never overwritten.
// Elementwise nodes (ADD, MUL, SCALE, SILU, GELU, two-source SWIGLU)
// whose first source dies at that node and has the same type, shape and
// packed layout are computed in place, in that source's bytes; a backend
// must compute those ops correctly when the result aliases Src[0] exactly.
// MemoryStats report the arena bytes the plan needs against the sum of
// all intermediates. Options.NoReuse turns reuse off, as a baseline.
//
// # Running
//
// Plan.Run computes the steps in order and keeps an execution record of
// each (Record: backend, start and end, FLOPs and bytes by ops.CostOf,
// layer and block), passed to the graph's Recorder as it goes. Compute
// and ComputeIn are the one-backend shorthand.
//
// Consecutive nodes on one backend form a split. Where the backend has
// the optional interfaces of a GPU backend (package ops), the run uses
// them: a split on an ops.GraphComputer is one ComputeGraph call (one
// submission), a split on an ops.Synchronizer ends with Synchronize
// before any bytes cross to another backend, per-node device times of an
// ops.DeviceTimer go into the records (an ops.NodeTimingSwitch times
// nodes only for a graph with a Hook or Recorder), and a copy into an
// ops.BufferCopier moves device to device. A Stepwise graph gives that
// up for inspection: each node is computed alone and waited for before
// its record, so a Recorder reads each node's output before the memory
// plan reuses its bytes.
//
// Subpackages write what a run looked like: dot (Graphviz dumps) and
// timing (Chrome traces, pprof profiles, summary tables).
package graphs
