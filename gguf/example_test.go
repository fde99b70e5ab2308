package gguf_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/quant"
)

// A model file written with a Writer, read back with Parse, and printed
// with Dump.
func Example() {
	w := gguf.NewWriter()
	for _, kv := range []struct {
		key string
		v   any
	}{
		{"general.architecture", "llama"},
		{"llama.block_count", uint32(1)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"}},
	} {
		if err := w.Add(kv.key, kv.v); err != nil {
			log.Fatal(err)
		}
	}
	row := make([]byte, 4*8) // eight f32 zeros
	if err := w.AddTensor("output_norm.weight", quant.F32, []int64{8}, row); err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	layers, err := f.Uint("llama.block_count")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Arch(), layers, "layer")
	if err := gguf.Dump(os.Stdout, f); err != nil {
		log.Fatal(err)
	}
	// Output:
	// llama 1 layer
	// GGUF v3: 4 KV, 1 tensors, alignment 32, data at offset 288
	//
	// key                                     type      value
	// general.architecture                    string    "llama"
	// llama.block_count                       uint32    1
	// llama.attention.layer_norm_rms_epsilon  float32   1e-05
	// tokenizer.ggml.tokens                   []string  ["<unk>" "<s>" "</s>"]
	//
	// #  name                type  shape  offset  bytes
	// 0  output_norm.weight  f32   [8]    0       32
}
