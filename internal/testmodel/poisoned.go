package testmodel

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/quant"
)

// Poisoned returns a copy of the shared model name, written into a
// temporary folder of tb, in which the first element of tensor (an f32
// tensor) is value, such as a NaN: a model whose logits come out NaN
// from a known node, for the commands' checks.
func Poisoned(tb testing.TB, name, tensor string, value float32) string {
	tb.Helper()
	return PoisonFile(tb, shareddata.Path(tb, name), tensor, value)
}

// PoisonFile is Poisoned for the model at path, such as one Write made.
func PoisonFile(tb testing.TB, path, tensor string, value float32) string {
	tb.Helper()
	name := path
	f, err := gguf.Open(path)
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
