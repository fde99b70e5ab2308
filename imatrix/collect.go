package imatrix

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A Collector accumulates an importance matrix from the matrix products a
// model computes, as llama-imatrix's callback does: for a MUL_MAT node
// whose weights are a layer's ("blk." names; output.weight too with
// Output) and whose activations are f32 with at least MinRows rows, each
// activation row's squares go into the weight's column sums (one set per
// matrix of a 3-D or 4-D weight) and the count grows by the rows per
// matrix; for a MUL_MAT_ID node (any weights, any rows) each token's row
// goes to the expert its ids chose, whose count grows by one. Sums are
// float32, added row by row in token order, as llama-imatrix adds them.
//
// Observe must see each node right after it is computed, while its
// sources still hold their values (a graph run stepwise, with a node
// hook). It is safe for concurrent use.
type Collector struct {
	// ChunkSize is the tokens per chunk, recorded in the matrix and used
	// for its chunk count.
	ChunkSize int
	// Output includes output.weight (llama-imatrix's --process-output).
	Output bool
	// MinRows is the fewest activation rows a MUL_MAT node needs to be
	// counted (llama-imatrix's 16; 0 counts every node).
	MinRows int64
	// Datasets is recorded in the matrix.
	Datasets []string

	mu      sync.Mutex
	entries map[string]*Entry
	buf     []byte
}

// NewCollector returns a collector for chunks of chunkSize tokens with
// llama-imatrix's defaults.
func NewCollector(chunkSize int) *Collector {
	return &Collector{ChunkSize: chunkSize, MinRows: 16, entries: map[string]*Entry{}}
}

// weightName returns the name llama-imatrix files a weight under: the
// part between the first two '#' when there is one, else the name.
func weightName(n string) string {
	if _, rest, ok := strings.Cut(n, "#"); ok {
		w, _, _ := strings.Cut(rest, "#")
		return w
	}
	return n
}

// Observe adds node n's activations when it is a product the collector
// counts; other nodes are ignored. An error means the node's data could
// not be read or disagrees with what was collected before.
func (c *Collector) Observe(n *ops.Tensor) error {
	if n.Op != ops.OpMulMat && n.Op != ops.OpMulMatID {
		return nil
	}
	w, x := n.Src[0], n.Src[1]
	name := weightName(w.Name)
	if n.Op == ops.OpMulMat {
		if x.Ne[1] < c.MinRows || x.Type != quant.F32 {
			return nil
		}
		if !strings.HasPrefix(name, "blk.") && !(c.Output && name == "output.weight") {
			return nil
		}
	} else if x.Type != quant.F32 {
		return fmt.Errorf("imatrix: %s: MUL_MAT_ID activations are %v, want f32", name, x.Type)
	}
	if x.Nb[0] != 4 {
		return fmt.Errorf("imatrix: %s: activation rows are not packed", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := c.read(x)
	if err != nil {
		return fmt.Errorf("imatrix: %s: %w", name, err)
	}
	row := func(i1, i2, i3 int64) []byte {
		off := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
		return data[off : off+4*x.Ne[0]]
	}
	ne0 := x.Ne[0]
	if c.entries == nil {
		c.entries = map[string]*Entry{}
	}
	e := c.entries[name]
	if n.Op == ops.OpMulMatID {
		ids := n.Src[2]
		nAs := w.Ne[2]
		idb, err := c.readIDs(ids)
		if err != nil {
			return fmt.Errorf("imatrix: %s: ids: %w", name, err)
		}
		if e == nil {
			e = &Entry{Sums: make([]float32, ne0*nAs), Counts: make([]int64, nAs)}
			c.entries[name] = e
		} else if len(e.Counts) == 1 && nAs > 1 {
			e.Counts = append(e.Counts, make([]int64, nAs-1)...)
			for i := range e.Counts {
				e.Counts[i] = e.Counts[0]
			}
		}
		if int64(len(e.Sums)) != ne0*nAs || int64(len(e.Counts)) != nAs {
			return fmt.Errorf("imatrix: %s: %d columns for %d experts, earlier %d sums for %d", name, ne0, nAs, len(e.Sums), len(e.Counts))
		}
		nTok, nUsed := x.Ne[2], ids.Ne[0]
		for idx := range nUsed {
			for t := range nTok {
				ex := int64(int32(binary.LittleEndian.Uint32(idb[t*ids.Nb[1]+idx*ids.Nb[0]:])))
				if ex < 0 || ex >= nAs {
					return fmt.Errorf("imatrix: %s: expert id %d of token %d is outside [0, %d)", name, ex, t, nAs)
				}
				addSquares(e.Sums[ex*ne0:(ex+1)*ne0], row(idx%x.Ne[1], t, 0))
				e.Counts[ex]++
			}
		}
		return checkFinite(name, e.Sums)
	}
	nMat := w.Ne[2] * w.Ne[3]
	if e == nil {
		e = &Entry{Sums: make([]float32, ne0*nMat), Counts: []int64{0}}
		c.entries[name] = e
	}
	if int64(len(e.Sums)) != ne0*nMat {
		return fmt.Errorf("imatrix: %s: %d columns for %d matrices, earlier %d sums", name, ne0, nMat, len(e.Sums))
	}
	for i3 := range x.Ne[3] {
		for i2 := range x.Ne[2] {
			mat := (i3%w.Ne[3])*w.Ne[2] + i2%w.Ne[2]
			acc := e.Sums[mat*ne0 : (mat+1)*ne0]
			for i1 := range x.Ne[1] {
				addSquares(acc, row(i1, i2, i3))
			}
		}
	}
	for i := range e.Counts {
		e.Counts[i] += x.NumRows() / nMat
	}
	return checkFinite(name, e.Sums)
}

// addSquares adds the squares of the little-endian float32s in x to acc.
func addSquares(acc []float32, x []byte) {
	for j := range acc {
		v := math.Float32frombits(binary.LittleEndian.Uint32(x[4*j:]))
		acc[j] += float32(v * v)
	}
}

// checkFinite fails on a sum that is not finite, as llama-imatrix does.
func checkFinite(name string, s []float32) error {
	for _, v := range s {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("imatrix: %s: non-finite sum of squared activations", name)
		}
	}
	return nil
}

// read returns t's bytes from its first to the end of its extent, in the
// collector's buffer.
func (c *Collector) read(t *ops.Tensor) ([]byte, error) {
	buf, off := t.Storage()
	if buf == nil {
		return nil, fmt.Errorf("tensor %s has no storage", t.Label())
	}
	n := t.Extent()
	if int64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	if _, err := buf.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readIDs returns an i32 tensor's bytes in a new slice.
func (c *Collector) readIDs(t *ops.Tensor) ([]byte, error) {
	if t.Type != quant.I32 {
		return nil, fmt.Errorf("type %v, want i32", t.Type)
	}
	buf, off := t.Storage()
	if buf == nil {
		return nil, fmt.Errorf("tensor %s has no storage", t.Label())
	}
	b := make([]byte, t.Extent())
	if _, err := buf.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// Matrix returns a copy of what has been collected, with the chunk count
// llama-imatrix records: the largest count over the chunk size.
func (c *Collector) Matrix() *Matrix {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &Matrix{Entries: map[string]*Entry{}, ChunkSize: c.ChunkSize, Datasets: append([]string(nil), c.Datasets...)}
	var maxc int64
	for name, e := range c.entries {
		m.Entries[name] = &Entry{Sums: append([]float32(nil), e.Sums...), Counts: append([]int64(nil), e.Counts...)}
		for _, n := range e.Counts {
			maxc = max(maxc, n)
		}
	}
	if c.ChunkSize > 0 {
		m.ChunkCount = int(maxc / int64(c.ChunkSize))
	}
	return m
}
