// Package bench records, compares and bounds kernbench's measurements.
//
// The timing itself lives in harness (Protocol, Measure, Prepare): a
// benchmark point is an ordinary harness case, validated against the
// float64 reference before it is timed. This package builds on it:
//
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
