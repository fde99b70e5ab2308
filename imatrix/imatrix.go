package imatrix

import (
	"fmt"
	"math"
	"sort"
)

// Metadata keys of the GGUF format.
const (
	KeyType       = "general.type"
	KeyDatasets   = "imatrix.datasets"
	KeyChunkCount = "imatrix.chunk_count"
	KeyChunkSize  = "imatrix.chunk_size"
	// TypeName is the value of general.type.
	TypeName = "imatrix"
	// SuffixSums and SuffixCounts end the names of an entry's tensors.
	SuffixSums   = ".in_sum2"
	SuffixCounts = ".counts"
)

// An Entry holds one weight matrix's statistics. For a stack of nmat
// matrices (the experts of a 3-D tensor) Sums holds nmat runs of the
// column sums, one per matrix, and Counts one count per matrix.
type Entry struct {
	// Sums are the sums of squared activations per input column: raw
	// sums in a GGUF file, mean squares times the call count in a legacy
	// one.
	Sums []float32
	// Counts are the activation rows summed per matrix (GGUF), or the
	// single call count (legacy).
	Counts []int64
}

// Columns returns the number of input columns per matrix.
func (e *Entry) Columns() int {
	if len(e.Counts) == 0 {
		return 0
	}
	return len(e.Sums) / len(e.Counts)
}

// A Matrix is an importance matrix: an entry per weight tensor name.
type Matrix struct {
	Entries map[string]*Entry
	// Datasets names the texts the sums were taken over.
	Datasets []string
	// ChunkCount is the number of chunks evaluated; ChunkSize the tokens
	// per chunk (0 in a legacy file, which does not record it).
	ChunkCount, ChunkSize int
	// Legacy reports whether the matrix came from a legacy .dat file,
	// whose Sums are already divided by the rows summed.
	Legacy bool
}

// Names returns the entry names in sorted order.
func (m *Matrix) Names() []string {
	names := make([]string, 0, len(m.Entries))
	for n := range m.Entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Weights returns the importance weights of the tensor called name as
// llama-quantize derives them, or nil when the matrix has no entry for
// it: per matrix of a GGUF entry, each column's sum divided by the
// matrix's count (1 for every column of a matrix with no rows); for a
// legacy entry, the values divided by the call count (as they are when
// it is not positive). The result holds Columns() weights per matrix.
func (m *Matrix) Weights(name string) []float32 {
	e, ok := m.Entries[name]
	if !ok {
		return nil
	}
	w := make([]float32, len(e.Sums))
	if m.Legacy {
		ncall := int64(0)
		if len(e.Counts) > 0 {
			ncall = e.Counts[0]
		}
		for i, s := range e.Sums {
			if ncall > 0 {
				w[i] = s / float32(ncall)
			} else {
				w[i] = s
			}
		}
		return w
	}
	nc := e.Columns()
	for j, c := range e.Counts {
		for i := range nc {
			if c > 0 {
				w[j*nc+i] = e.Sums[j*nc+i] / float32(c)
			} else {
				w[j*nc+i] = 1
			}
		}
	}
	return w
}

// check validates an entry read from a file.
func (e *Entry) check(name string) error {
	if len(e.Counts) == 0 || len(e.Sums) == 0 {
		return fmt.Errorf("entry %q has no values", name)
	}
	if len(e.Sums)%len(e.Counts) != 0 {
		return fmt.Errorf("entry %q: %d sums are not a whole number of columns for %d matrices", name, len(e.Sums), len(e.Counts))
	}
	for i, s := range e.Sums {
		if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) {
			return fmt.Errorf("entry %q: value %d is %v", name, i, s)
		}
	}
	return nil
}
