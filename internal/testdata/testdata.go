// Package testdata finds the project's shared test files: the real GGUF
// models, tokenizer vectors and texts in shared/testdata, which sits beside
// the repository (../shared from its root). Tests use Path, which skips the
// test when the folder is absent, so a checkout without it still passes.
package testdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// ErrNotFound is returned by Find when no shared/testdata folder above the
// working directory holds the file.
var ErrNotFound = errors.New("shared test data not found")

// Find returns the path of name in the first shared/testdata folder found
// walking up from the working directory. An empty name finds the folder.
func Find(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "testdata", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNotFound
		}
		dir = parent
	}
}

// Path returns the path of name in shared/testdata, or skips the test
// when it cannot be found.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if errors.Is(err, ErrNotFound) {
		tb.Skipf("test file %q not found in a shared/testdata above the working directory", name)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Dir returns the shared/testdata folder, or skips the test.
func Dir(tb testing.TB) string {
	tb.Helper()
	return Path(tb, "")
}

// Poisoned returns a copy of the shared model name, written into a
// temporary folder of tb, in which the first element of tensor (an f32
// tensor) is value, such as a NaN: a model whose logits come out NaN
// from a known node, for the commands' checks.
func Poisoned(tb testing.TB, name, tensor string, value float32) string {
	tb.Helper()
	f, err := gguf.Open(Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if err := w.Add(kv.Key, kv.Value); err != nil {
			tb.Fatal(err)
		}
	}
	found := false
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			tb.Fatal(err)
		}
		if ti.Name == tensor {
			if ti.Type != quant.F32 {
				tb.Fatalf("Poisoned: tensor %s is %v, not f32", tensor, ti.Type)
			}
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data, math.Float32bits(value))
			found = true
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], data); err != nil {
			tb.Fatal(err)
		}
	}
	if !found {
		tb.Fatalf("Poisoned: %s has no tensor %s", name, tensor)
	}
	out := filepath.Join(tb.TempDir(), "poisoned-"+filepath.Base(name))
	if err := w.WriteFile(out); err != nil {
		tb.Fatal(err)
	}
	return out
}
