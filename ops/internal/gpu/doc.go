// Package gpu is the host code the GPU backends (ops/cuda, ops/metal)
// share: the table of each op's kernels with the Supports checks around
// it, the element-wise ops' supports checks, the kernel-source bundle
// (each backend's kernels folder plus the headers every dialect includes,
// blocks.h), the C-struct packing of kernel arguments, the bookkeeping of
// host memory a backend keeps on its device, and the status words kernels
// that check their input data write. Each backend keeps only what is its
// own: CUDA its driver, stream and events, Metal its device, command
// buffers and encoders.
package gpu
