// Package cuda is the CUDA backend's place: for now only its registration,
// as "cuda", with an honest availability check.
//
// What is here: the registry entry, and a check at run time, through
// purego (no cgo), for the NVIDIA driver library libcuda.so.1. Where it is
// missing the backend says so ("no libcuda.so.1 found (...)"); off linux it
// says the backend needs linux. Where the driver is present the backend
// still cannot open: it says that it has no kernels yet.
//
// What is not here yet (issue 12): the driver API bindings, device
// buffers, NVRTC compilation of embedded kernel sources, launches, CUDA
// events for per-launch timing, and the optional interfaces of package ops
// that a GPU backend implements (ops.GraphComputer, ops.Synchronizer,
// ops.DeviceTimer).
package cuda
