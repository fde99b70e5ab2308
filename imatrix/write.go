package imatrix

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// WriteGGUF writes m in the GGUF format as llama-imatrix does: general.type,
// the datasets, chunk count and chunk size, then per entry in name order
// NAME.in_sum2 ([columns, matrices]) and NAME.counts ([1, matrices]). A
// legacy matrix cannot be written this way (its raw sums are lost).
func (m *Matrix) WriteGGUF(out io.Writer) error {
	if m.Legacy {
		return errors.New("imatrix: a legacy matrix has no raw sums to write in the GGUF format")
	}
	w := gguf.NewWriter()
	ds := m.Datasets
	if ds == nil {
		ds = []string{}
	}
	for _, kv := range []struct {
		k string
		v any
	}{{KeyType, TypeName}, {KeyDatasets, ds}, {KeyChunkCount, uint32(m.ChunkCount)}, {KeyChunkSize, uint32(m.ChunkSize)}} {
		if err := w.Add(kv.k, kv.v); err != nil {
			return fmt.Errorf("imatrix: %w", err)
		}
	}
	for _, name := range m.Names() {
		e := m.Entries[name]
		nmat := int64(len(e.Counts))
		if nmat == 0 || len(e.Sums) == 0 || int64(len(e.Sums))%nmat != 0 {
			return fmt.Errorf("imatrix: entry %q: %d sums for %d matrices", name, len(e.Sums), nmat)
		}
		counts := make([]float32, nmat)
		for i, c := range e.Counts {
			counts[i] = float32(c)
		}
		if err := w.AddTensor(name+SuffixSums, quant.F32, []int64{int64(len(e.Sums)) / nmat, nmat}, f32bytes(e.Sums)); err != nil {
			return fmt.Errorf("imatrix: %w", err)
		}
		if err := w.AddTensor(name+SuffixCounts, quant.F32, []int64{1, nmat}, f32bytes(counts)); err != nil {
			return fmt.Errorf("imatrix: %w", err)
		}
	}
	if _, err := w.WriteTo(out); err != nil {
		return fmt.Errorf("imatrix: %w", err)
	}
	return nil
}

// WriteLegacy writes m in the legacy .dat format as llama-imatrix does:
// entries whose every count is zero are left out; each entry's ncall is
// its largest count over the chunk size, rounded up, and its values the
// sums divided by their matrix's count, times ncall (1 times ncall for a
// matrix with no rows); then the chunk count and the last dataset's name.
// m.ChunkSize must be positive.
func (m *Matrix) WriteLegacy(out io.Writer) error {
	if m.Legacy {
		return errors.New("imatrix: a legacy matrix is written as read; convert only matrices with raw sums")
	}
	if m.ChunkSize <= 0 {
		return fmt.Errorf("imatrix: chunk size %d: the legacy format needs a positive one", m.ChunkSize)
	}
	var names []string
	for _, name := range m.Names() {
		for _, c := range m.Entries[name].Counts {
			if c != 0 {
				names = append(names, name)
				break
			}
		}
	}
	bw := bufio.NewWriter(out)
	put := func(v int32) { binary.Write(bw, binary.LittleEndian, v) }
	put(int32(len(names)))
	cs := int64(m.ChunkSize)
	for _, name := range names {
		e := m.Entries[name]
		put(int32(len(name)))
		bw.WriteString(name)
		var maxc int64
		for _, c := range e.Counts {
			maxc = max(maxc, c)
		}
		ncall := (maxc + cs - 1) / cs
		put(int32(ncall))
		put(int32(len(e.Sums)))
		nc := e.Columns()
		vals := make([]float32, len(e.Sums))
		for i, s := range e.Sums {
			c := float32(e.Counts[i/nc])
			if c == 0 {
				s, c = 1, 1
			}
			vals[i] = s / c * float32(ncall)
		}
		bw.Write(f32bytes(vals))
	}
	put(int32(m.ChunkCount))
	var ds string
	if len(m.Datasets) > 0 {
		ds = m.Datasets[len(m.Datasets)-1]
	}
	put(int32(len(ds)))
	bw.WriteString(ds)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("imatrix: %w", err)
	}
	return nil
}

// f32bytes returns v's little-endian bytes.
func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
