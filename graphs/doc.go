// Package graphs orders and runs compute graphs of ops.Tensor nodes.
//
// A Graph is built lazily from the tensors the caller wants computed: Expand
// adds a tensor and every node it depends on (through Src and ViewOf) that
// is not in the graph yet, sources first, in the deterministic order of a
// depth-first walk (sources in Src order, then ViewOf). This is
// ggml_build_forward_expand's rule, so a caller that expands a side effect
// (a CPY into a KV cache) before the nodes that read its destination gets
// the order it means. After makes such an ordering explicit: a node runs
// after the nodes it is declared to follow even when no Src edge says so,
// which is the information a future scheduler that reorders nodes needs.
//
// Compute gives storage to every computed node that has none and asks a
// backend to compute each node that is not a view, in order. Storage comes
// from an Arena: one backend buffer holding every node at its own 64-byte
// aligned offset (no two nodes share bytes; liveness-based reuse is a later
// step). An Arena is reused by every run of the graph and may be shared by
// successive graphs on the same backend, such as the per-micro-batch graphs
// of a model; it grows when a graph needs more.
package graphs
