package quantize

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// An Entry is one metadata key and its value: any value gguf.Writer.Add
// takes, a gguf.Value from another file included.
type Entry struct {
	Key   string
	Value any
}

// A TensorSpec describes a tensor of a file to write.
type TensorSpec struct {
	Name string
	Type quant.Type
	// Ne is the shape, innermost first (1 to 4 sizes).
	Ne []int64
}

// size returns the tensor's data size in bytes.
func (s TensorSpec) size() (int64, error) {
	if len(s.Ne) == 0 || len(s.Ne) > 4 {
		return 0, fmt.Errorf("tensor %s: %d dimensions (want 1 to 4)", s.Name, len(s.Ne))
	}
	rows := int64(1)
	for _, n := range s.Ne[1:] {
		if n <= 0 || rows > (1<<62)/n {
			return 0, fmt.Errorf("tensor %s: bad shape %v", s.Name, s.Ne)
		}
		rows *= n
	}
	rs, err := s.Type.RowSize(s.Ne[0])
	if err != nil || s.Ne[0] <= 0 {
		return 0, fmt.Errorf("tensor %s: type %v, shape %v: %w", s.Name, s.Type, s.Ne, err)
	}
	if rs > (1<<62)/rows {
		return 0, fmt.Errorf("tensor %s: shape %v is too large", s.Name, s.Ne)
	}
	return rs * rows, nil
}

// WriteFile writes a GGUF file to path with metadata md and the tensors
// specs, streaming: fill is called once per tensor, in order, to put its
// data into buf (exactly the tensor's size; its contents on entry are
// unspecified, and the slice is reused for the next tensor), so only one
// tensor's data is in memory at a time.
//
// It works in a temporary file beside path (see Write) that replaces
// path only when everything has succeeded. It returns the file's size.
func WriteFile(path string, md []Entry, specs []TensorSpec, fill func(i int, buf []byte) error) (size int64, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("quantize: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if size, err = Write(tmp, md, specs, fill); err != nil {
		return 0, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return 0, fmt.Errorf("quantize: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("quantize: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, fmt.Errorf("quantize: %w", err)
	}
	return size, nil
}

// Write is WriteFile into f, an empty file open for reading and writing
// whose f.Name() is its path, such as a temporary file that the caller
// renames into place once Write succeeds; f is left open. The file is
// laid out by gguf.Writer: Write first writes it with zeros for the data,
// reads the tensor offsets back with gguf.Open (which checks the layout),
// then writes each tensor's data in place.
func Write(f *os.File, md []Entry, specs []TensorSpec, fill func(i int, buf []byte) error) (size int64, err error) {
	w := gguf.NewWriter()
	for _, e := range md {
		if err := w.Add(e.Key, e.Value); err != nil {
			return 0, fmt.Errorf("quantize: %w", err)
		}
	}
	sizes := make([]int64, len(specs))
	var largest int64
	for i, s := range specs {
		n, err := s.size()
		if err != nil {
			return 0, fmt.Errorf("quantize: %w", err)
		}
		sizes[i] = n
		largest = max(largest, n)
	}
	// One buffer of zeros stands for every tensor's data in the skeleton,
	// then holds each tensor's real data in turn.
	buf := make([]byte, largest)
	for i, s := range specs {
		if err := w.AddTensor(s.Name, s.Type, s.Ne, buf[:sizes[i]]); err != nil {
			return 0, fmt.Errorf("quantize: %w", err)
		}
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	size, err = w.WriteTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, fmt.Errorf("quantize: writing %s: %w", f.Name(), err)
	}
	offsets, err := tensorOffsets(f.Name(), specs, sizes)
	if err != nil {
		return 0, err
	}
	for i := range specs {
		b := buf[:sizes[i]]
		if err := fill(i, b); err != nil {
			return 0, err
		}
		if _, err := f.WriteAt(b, offsets[i]); err != nil {
			return 0, fmt.Errorf("quantize: writing %s: %w", f.Name(), err)
		}
	}
	return size, nil
}

// tensorOffsets reads the skeleton file back and returns the file offset
// of each tensor's data, checking that the file describes specs.
func tensorOffsets(path string, specs []TensorSpec, sizes []int64) ([]int64, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("quantize: reading back the file just written: %w", err)
	}
	defer f.Close()
	if len(f.Tensors) != len(specs) {
		return nil, fmt.Errorf("quantize: the file just written has %d tensors, want %d", len(f.Tensors), len(specs))
	}
	offs := make([]int64, len(specs))
	for i, ti := range f.Tensors {
		if ti.Name != specs[i].Name || ti.Type != specs[i].Type || ti.Size != sizes[i] {
			return nil, errors.New("quantize: the file just written does not list the tensors in the order given")
		}
		offs[i] = f.DataOffset + ti.Offset
	}
	return offs, nil
}
