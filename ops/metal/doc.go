// Package metal is the Metal backend's place: for now only its
// registration, as "metal", with an honest availability check.
//
// What is here: the registry entry. Off darwin the backend says it needs
// macOS; on darwin it says it has no kernels yet.
//
// What is not here yet (issue 13): the Metal bindings through purego/objc,
// buffers, compilation of embedded .metal sources with
// newLibraryWithSource, command buffers, per-command-buffer GPU times, and
// the optional interfaces of package ops that a GPU backend implements
// (ops.GraphComputer, ops.Synchronizer, ops.DeviceTimer).
package metal
