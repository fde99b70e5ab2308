// Package bench records, compares and bounds kernbench's measurements.
//
// A benchmark point is an ordinary harness case, the op's definition at
// the point's sizes (harness.OpDef, harness.Point), prepared and validated
// against the float64 reference by harness.Prepare before it is timed.
// This package times it and builds on the timings:
//
//   - timing: Measure times a prepared node under a Protocol: warm-up,
//     batches of runs sized so that about Samples samples fill the time
//     (or cost) target, at least MinSamples; the Timing holds every
//     sample with its median, min, max, mean and standard deviation. The
//     clock is the backend's Timer (TimerFor: its own for a TimerSource,
//     such as a GPU timing device events, else the wall clock). Inputs are
//     the same tensors in every repetition (InputReuse), as in ggml's perf
//     mode;
//   - sweeps: a Spec (flags or a JSON sweep file) expands to points, ops x
//     types x sizes, or a model Preset's layer shapes; a Runner measures
//     each point on each backend and thread count into Records;
//   - records: a Set carries the records with the machine (cpuid), the Go
//     version, commit, date and protocol, written as JSON and CSV and read
//     back (ReadFile);
//   - comparison: Compare joins two sets on their parameters and calls each
//     point faster, slower or within noise by a Mann-Whitney U test of the
//     samples, with a geometric-mean summary;
//   - roofline: MeasureRoofline measures the machine's f32 FMA and int8
//     dot-product peaks and its read bandwidth in cache and from DRAM, per
//     thread count, so that every point can say what share of the
//     attainable throughput it reaches.
//
// Plots of record sets are in the subpackage chart.
package bench
