package imatrix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// ErrNoMetadata marks a GGUF imatrix without the datasets, chunk count and
// chunk size keys, which llama-quantize refuses.
var ErrNoMetadata = errors.New("missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)")

// Read reads the importance matrix file at path, in either format: a file
// that starts with GGUF's magic is read as the GGUF format, any other as
// the legacy one.
func Read(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("imatrix: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("imatrix: %s: %w", path, err)
	}
	return m, nil
}

// Parse reads an importance matrix held in b (see Read). Every count,
// length and shape is checked before use; a bad file is an error that
// says what is wrong and where, never a panic.
func Parse(b []byte) (*Matrix, error) {
	if bytes.HasPrefix(b, []byte(gguf.Magic)) {
		return parseGGUF(b)
	}
	return parseLegacy(b)
}

// parseGGUF reads the GGUF format as llama.cpp's loader does: tensors
// NAME.in_sum2 and NAME.counts pair up by NAME, both F32; other tensors
// are ignored.
func parseGGUF(b []byte) (*Matrix, error) {
	f, err := gguf.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("GGUF imatrix: %w", err)
	}
	m := &Matrix{Entries: map[string]*Entry{}}
	if len(f.Tensors) == 0 {
		return nil, errors.New("GGUF imatrix: no tensors")
	}
	if t, err := f.String(KeyType); err == nil && t != TypeName {
		return nil, fmt.Errorf("GGUF imatrix: %s is %q, not %q", KeyType, t, TypeName)
	}
	_, hasDS := f.Get(KeyDatasets)
	_, hasCC := f.Get(KeyChunkCount)
	_, hasCS := f.Get(KeyChunkSize)
	if !hasDS || !hasCC || !hasCS {
		return nil, fmt.Errorf("GGUF imatrix: %w", ErrNoMetadata)
	}
	if m.Datasets, err = f.Strings(KeyDatasets); err != nil {
		return nil, fmt.Errorf("GGUF imatrix: %w", err)
	}
	for _, k := range []struct {
		key string
		dst *int
	}{{KeyChunkCount, &m.ChunkCount}, {KeyChunkSize, &m.ChunkSize}} {
		v, err := f.Uint(k.key)
		if err != nil {
			return nil, fmt.Errorf("GGUF imatrix: %w", err)
		}
		if v > math.MaxInt32 {
			return nil, fmt.Errorf("GGUF imatrix: %s = %d is out of range", k.key, v)
		}
		*k.dst = int(v)
	}
	type pair struct{ sums, counts *gguf.TensorInfo }
	pairs := map[string]*pair{}
	var order []string
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		name, isSums := strings.CutSuffix(ti.Name, SuffixSums)
		isCounts := false
		if !isSums {
			name, isCounts = strings.CutSuffix(ti.Name, SuffixCounts)
		}
		if (!isSums && !isCounts) || name == "" {
			continue
		}
		p := pairs[name]
		if p == nil {
			p = &pair{}
			pairs[name] = p
			order = append(order, name)
		}
		if isSums {
			p.sums = ti
		} else {
			p.counts = ti
		}
	}
	for _, name := range order {
		p := pairs[name]
		if p.sums == nil || p.counts == nil {
			return nil, fmt.Errorf("GGUF imatrix: entry %q has %s but not %s", name, have(p.sums != nil), have(p.sums == nil))
		}
		if p.sums.Type != quant.F32 || p.counts.Type != quant.F32 {
			return nil, fmt.Errorf("GGUF imatrix: entry %q: sums are %v and counts %v, both must be f32", name, p.sums.Type, p.counts.Type)
		}
		sums, err := f32s(f, p.sums.Name)
		if err != nil {
			return nil, err
		}
		cf, err := f32s(f, p.counts.Name)
		if err != nil {
			return nil, err
		}
		e := &Entry{Sums: sums, Counts: make([]int64, len(cf))}
		for i, c := range cf {
			if !(c >= 0 && c < 1<<53) {
				return nil, fmt.Errorf("GGUF imatrix: entry %q: count %d is %v", name, i, c)
			}
			e.Counts[i] = int64(math.Round(float64(c)))
		}
		if err := e.check(name); err != nil {
			return nil, fmt.Errorf("GGUF imatrix: %w", err)
		}
		if rows := p.sums.Ne[1] * p.sums.Ne[2] * p.sums.Ne[3]; rows != int64(len(cf)) {
			return nil, fmt.Errorf("GGUF imatrix: entry %q: %s has %d rows but %s %d counts", name, p.sums.Name, rows, p.counts.Name, len(cf))
		}
		m.Entries[name] = e
	}
	if len(m.Entries) == 0 {
		return nil, errors.New("GGUF imatrix: no NAME.in_sum2/NAME.counts tensor pairs")
	}
	return m, nil
}

// have names the half of an entry present and missing.
func have(sums bool) string {
	if sums {
		return SuffixSums
	}
	return SuffixCounts
}

// f32s returns a F32 tensor's values.
func f32s(f *gguf.File, name string) ([]float32, error) {
	raw, err := f.TensorData(name)
	if err != nil {
		return nil, fmt.Errorf("GGUF imatrix: %w", err)
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// legacyReader reads the little-endian fields of a legacy file.
type legacyReader struct {
	b   []byte
	off int
}

func (r *legacyReader) i32(what string) (int32, error) {
	if len(r.b)-r.off < 4 {
		return 0, fmt.Errorf("legacy imatrix: truncated at byte %d reading %s (%d bytes left)", r.off, what, len(r.b)-r.off)
	}
	v := int32(binary.LittleEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v, nil
}

// bytes returns the next n bytes.
func (r *legacyReader) bytes(n int, what string) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, fmt.Errorf("legacy imatrix: %s of %d bytes at byte %d, but %d bytes are left", what, n, r.off, len(r.b)-r.off)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

// parseLegacy reads the legacy .dat format (see the package
// documentation). Unlike llama.cpp's loader, which takes the last of two
// entries of one name and ignores bytes after the dataset name, it
// refuses both.
func parseLegacy(b []byte) (*Matrix, error) {
	r := &legacyReader{b: b}
	n, err := r.i32("the entry count")
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("legacy imatrix: entry count %d: no data", n)
	}
	// Every entry takes at least 16 bytes (three int32s and a value).
	if int64(n) > int64(len(b)-4)/16 {
		return nil, fmt.Errorf("legacy imatrix: %d entries cannot fit in %d bytes", n, len(b))
	}
	m := &Matrix{Entries: map[string]*Entry{}, Legacy: true}
	for i := range int(n) {
		l, err := r.i32(fmt.Sprintf("the name length of entry %d", i+1))
		if err != nil {
			return nil, err
		}
		nb, err := r.bytes(int(l), fmt.Sprintf("name of entry %d", i+1))
		if err != nil {
			return nil, err
		}
		name := string(nb)
		if j := strings.IndexByte(name, 0); j >= 0 {
			name = name[:j] // llama.cpp reads the name as a C string
		}
		if name == "" {
			return nil, fmt.Errorf("legacy imatrix: entry %d has an empty name", i+1)
		}
		if _, dup := m.Entries[name]; dup {
			return nil, fmt.Errorf("legacy imatrix: entry %d: a second entry named %q", i+1, name)
		}
		ncall, err := r.i32(fmt.Sprintf("the call count of entry %q", name))
		if err != nil {
			return nil, err
		}
		nval, err := r.i32(fmt.Sprintf("the value count of entry %q", name))
		if err != nil {
			return nil, err
		}
		if nval < 1 {
			return nil, fmt.Errorf("legacy imatrix: entry %q has %d values", name, nval)
		}
		if int64(nval) > int64(len(b)-r.off)/4 {
			return nil, fmt.Errorf("legacy imatrix: entry %q claims %d values at byte %d, but %d bytes are left", name, nval, r.off, len(b)-r.off)
		}
		raw, _ := r.bytes(4*int(nval), "values")
		e := &Entry{Sums: make([]float32, nval), Counts: []int64{int64(ncall)}}
		for j := range e.Sums {
			e.Sums[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		if err := e.check(name); err != nil {
			return nil, fmt.Errorf("legacy imatrix: %w", err)
		}
		m.Entries[name] = e
	}
	if r.off == len(b) {
		return m, nil
	}
	cc, err := r.i32("the chunk count")
	if err != nil {
		return nil, err
	}
	if cc < 0 {
		return nil, fmt.Errorf("legacy imatrix: chunk count %d is negative", cc)
	}
	m.ChunkCount = int(cc)
	if r.off == len(b) {
		return m, nil
	}
	l, err := r.i32("the dataset name length")
	if err != nil {
		return nil, err
	}
	if l > 0 {
		ds, err := r.bytes(int(l), "the dataset name")
		if err != nil {
			return nil, err
		}
		m.Datasets = []string{string(ds)}
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("legacy imatrix: %d unexpected bytes after the dataset name", len(b)-r.off)
	}
	return m, nil
}
