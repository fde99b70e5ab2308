// Package backends imports every backend, so that their init functions
// register them in ops/registry: a command or a test that imports it for
// its side effects,
//
//	import _ "github.com/kernbench/kernbench/ops/backends"
//
// reaches every backend by name through registry.Open, and lists them
// with registry.Targets. A new backend is added here, and nowhere else.
package backends

import (
	_ "github.com/kernbench/kernbench/ops/cpu"   // "cpu", a variant per tier
	_ "github.com/kernbench/kernbench/ops/cuda"  // "cuda"
	_ "github.com/kernbench/kernbench/ops/metal" // "metal"
)
