// Package ops is kernbench's vocabulary: tensors, the operations that
// compute them, each operation's parameters, shape and type rules and cost,
// and the Backend interface every kernel implementation stands behind.
//
// Shapes, strides and semantics follow ggml so that a GGUF model and a ggml
// test case mean the same thing here: Ne[0] is the innermost (fastest
// varying) dimension, Nb holds byte strides, and for block-quantized types
// Nb[0] is the size of one block while Ne[0] counts elements.
//
// Building is lazy. The constructor functions (MulMat, SoftMax, Rope, ...)
// check their operands and return a new node without computing anything; a
// backend's Compute fills a node's storage once its sources hold data. Every
// constructor returns an error for operands it cannot take, never panics on
// user input.
//
// Backends register themselves in package ops/registry. What a GPU backend
// adds to Backend (one submission per split, synchronization, per-node
// device times, device-to-device copies) are optional interfaces here:
// GraphComputer, Synchronizer, DeviceTimer and BufferCopier.
package ops
