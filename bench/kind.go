package bench

import "github.com/kernbench/kernbench/internal/machineid"

// Kind returns the machine ID that the machine's own fields give now
// (machineid.ID of its brand, microarchitecture and cores). It equals ID for
// a machine described by this version; for one read from an older record,
// whose ID lacked the microarchitecture, it is the ID the record would
// have today. A machine that lacks the cpuid fields (one read from a CSV
// file, which keeps only the ID and brand) is its ID. Code that asks
// whether two records are of the same machine kind compares Kind, not ID.
func (m Machine) Kind() string {
	if m.Vendor == "" && m.Family == 0 && m.Model == 0 && m.ID != "" {
		return m.ID
	}
	return machineid.ID(m.CPU, machineid.Microarch(m.Vendor, m.Family, m.Model, m.Stepping), m.Cores())
}
