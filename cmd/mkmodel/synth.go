package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/quantize"
	"github.com/kernbench/kernbench/tokenizer"
)

// shape is a model's architecture.
type shape struct {
	Layers, Embd, Heads, KVHeads, FF, Vocab, Ctx int
}

// A preset is a named shape.
type preset struct {
	name, about string
	shape
	// tied leaves out output.weight, as the model the preset copies.
	tied bool
	// arch is the architecture and its sizes; zero is llama, and zero
	// sizes take the architecture's defaults.
	arch archShape
}

// presets are the shapes -preset names.
var presets = []preset{
	{"tiny", "for tests", shape{2, 64, 4, 2, 128, 512, 256}, false, archShape{}},
	{"stories15m", "llama2.c's stories15M, output tied to the embeddings", shape{6, 288, 6, 6, 768, 32000, 256}, true, archShape{}},
	{"100m", "a ~100M-parameter model with GQA", shape{8, 768, 12, 4, 2048, 32000, 2048}, false, archShape{}},
	{"llama-7b-1layer", "one layer of LLaMA-7B with its full embeddings", shape{1, 4096, 32, 32, 11008, 32000, 4096}, false, archShape{}},
	{"llama-7b", "LLaMA-7B (use a 4-bit -type)", shape{32, 4096, 32, 32, 11008, 32000, 4096}, false, archShape{}},
	// The side-by-side models of issue 25 (make llama-side).
	{"moe-100m", "Mixtral-style MoE on 100m's shape: 8 experts of ff 320, 2 used", shape{8, 768, 12, 4, 320, 32000, 2048}, false,
		archShape{Arch: "mixtral", Experts: 8, ExpertsUsed: 2}},
	{"gpt-oss-100m", "gpt-oss-style on 100m's shape: 8 experts of ff 320, 4 used, sinks, window 128", shape{8, 768, 12, 4, 320, 32000, 2048}, false,
		archShape{Arch: "gpt-oss", Experts: 8, ExpertsUsed: 4}},
	{"mamba-24x768", "Mamba-1 at mamba-130m's depth and width (d_inner 1536, d_state 16)", shape{24, 768, 12, 4, 2048, 32000, 2048}, false,
		archShape{Arch: "mamba"}},
	// Beyond the six (make llama-side-more): Mamba-2's SSM_SCAN path.
	{"mamba2-24x768", "Mamba-2 at the same depth and width (d_inner 1536 in 24 heads of 64, d_state 128, one group)", shape{24, 768, 12, 4, 2048, 32000, 2048}, false,
		archShape{Arch: "mamba2", DState: 128}},
}

// synth returns the model the preset describes, with its architecture's
// defaults filled in.
func (p preset) synth() synth {
	m := synth{shape: p.shape, archShape: p.arch, Tied: p.tied}
	if m.Arch == "" {
		m.Arch = "llama"
	}
	m.archShape.defaults(m.shape)
	return m
}

// findPreset returns the preset called name.
func findPreset(name string) (preset, bool) {
	for _, p := range presets {
		if strings.EqualFold(p.name, name) {
			return p, true
		}
	}
	return preset{}, false
}

// maxDim bounds every size (model.Load's limit), and maxLayers the layer
// count (so that the list of tensors stays small).
const (
	maxDim    = 1 << 24
	maxLayers = 1 << 16
)

// validate checks that s is a llama model model.Load can run.
func (s shape) validate() error {
	if err := s.validateRanges(); err != nil {
		return err
	}
	if s.Embd%s.Heads != 0 {
		return fmt.Errorf("-embd: %d is not a multiple of -heads %d", s.Embd, s.Heads)
	}
	if hd := s.Embd / s.Heads; hd%2 != 0 {
		return fmt.Errorf("-heads: head size %d (embd/heads) must be even for RoPE", hd)
	}
	if n, ok := s.params(true); !ok || n > 1<<40 {
		return fmt.Errorf("the model has too many parameters (more than 2^40)")
	}
	return nil
}

// validateRanges checks every size of s against its range, the grouped
// heads and the vocabulary's least size.
func (s shape) validateRanges() error {
	for _, f := range []struct {
		flag string
		v    int
	}{
		{"layers", s.Layers}, {"embd", s.Embd}, {"heads", s.Heads}, {"kv-heads", s.KVHeads},
		{"ff", s.FF}, {"vocab", s.Vocab}, {"ctx", s.Ctx},
	} {
		limit := maxDim
		if f.flag == "layers" {
			limit = maxLayers
		}
		if f.v < 1 || f.v > limit {
			return fmt.Errorf("-%s: %d is outside [1, %d]", f.flag, f.v, limit)
		}
	}
	if s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("-kv-heads: %d does not divide -heads %d", s.KVHeads, s.Heads)
	}
	if s.Vocab < minVocab {
		return fmt.Errorf("-vocab: %d is less than the %d special and byte tokens", s.Vocab, minVocab)
	}
	return nil
}

// headDim returns the size of one attention head.
func (s shape) headDim() int { return s.Embd / s.Heads }

// params returns the number of weights, and false when it is too large
// to count in an int64.
func (s shape) params(tied bool) (int64, bool) {
	e, v, f := float64(s.Embd), float64(s.Vocab), float64(s.FF)
	kv := float64(s.headDim() * s.KVHeads)
	perLayer := 2*e + 2*e*e + 2*e*kv + 3*e*f
	outputs := 2.0
	if tied {
		outputs = 1
	}
	if float64(s.Layers)*perLayer+outputs*e*v+e > 1<<62 {
		return 0, false
	}
	ei, vi, fi := int64(s.Embd), int64(s.Vocab), int64(s.FF)
	kvi := int64(s.headDim() * s.KVHeads)
	n := int64(s.Layers)*(2*ei+2*ei*ei+2*ei*kvi+3*ei*fi) + int64(outputs)*ei*vi + ei
	return n, true
}

// tensorDef is one tensor of the model, before its type is chosen.
type tensorDef struct {
	name string
	ne   []int64
}

// tensors lists the model's tensors in the order convert_hf_to_gguf
// writes them: embeddings, the layers, the output norm and output.
func (s shape) tensors(tied bool) []tensorDef {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FF)
	kv := int64(s.headDim() * s.KVHeads)
	ts := []tensorDef{{"token_embd.weight", []int64{e, v}}}
	for il := range s.Layers {
		p := fmt.Sprintf("blk.%d.", il)
		ts = append(ts,
			tensorDef{p + "attn_norm.weight", []int64{e}},
			tensorDef{p + "attn_q.weight", []int64{e, e}},
			tensorDef{p + "attn_k.weight", []int64{e, kv}},
			tensorDef{p + "attn_v.weight", []int64{e, kv}},
			tensorDef{p + "attn_output.weight", []int64{e, e}},
			tensorDef{p + "ffn_norm.weight", []int64{e}},
			tensorDef{p + "ffn_gate.weight", []int64{e, f}},
			tensorDef{p + "ffn_up.weight", []int64{e, f}},
			tensorDef{p + "ffn_down.weight", []int64{f, e}},
		)
	}
	ts = append(ts, tensorDef{"output_norm.weight", []int64{e}})
	if !tied {
		ts = append(ts, tensorDef{"output.weight", []int64{e, v}})
	}
	return ts
}

// synth is everything needed to write a synthetic model.
type synth struct {
	shape
	archShape
	// Tied leaves out output.weight: the output reuses token_embd.
	Tied     bool
	Seed     uint64
	Eps      float32
	RopeBase float32
	Name     string
	Params   quantize.Params
}

// description says how the weights were made, for general.description.
func (m synth) description() string {
	return fmt.Sprintf("synthetic %s written by kernbench mkmodel, seed %d: each matrix W[n_in, n_out] ~ N(0, 1/n_in), norm weights 1, biases and sinks 0", m.Arch, m.Seed)
}

// metadata returns the GGUF metadata: general.*, the {arch}.*
// hyperparameters and the tokenizer.
func (m synth) metadata(v *tokenizer.Vocab) []quantize.Entry {
	types := make([]int32, len(v.Types))
	for i, t := range v.Types {
		types[i] = int32(t)
	}
	name := m.Name
	if name == "" {
		n, _ := m.paramCount()
		name = fmt.Sprintf("kernbench synthetic %s %s %s", m.Arch, paramString(n), m.Params.Scheme.Name)
	}
	es := []quantize.Entry{
		{Key: "general.architecture", Value: m.ggufArch()},
		{Key: "general.name", Value: name},
		{Key: "general.description", Value: m.description()},
		{Key: quantize.KeyFileType, Value: uint32(m.Params.Scheme.FileType)},
		{Key: quantize.KeyQuantizationVersion, Value: uint32(quantize.QuantizationVersion)},
	}
	es = append(es, m.archMetadata()...)
	return append(es,
		quantize.Entry{Key: tokenizer.KeyModel, Value: v.Model},
		quantize.Entry{Key: tokenizer.KeyPre, Value: v.Pre},
		quantize.Entry{Key: tokenizer.KeyTokens, Value: v.Tokens},
		quantize.Entry{Key: tokenizer.KeyScores, Value: v.Scores},
		quantize.Entry{Key: tokenizer.KeyTokenType, Value: types},
		quantize.Entry{Key: tokenizer.KeyBOS, Value: uint32(v.BOS)},
		quantize.Entry{Key: tokenizer.KeyEOS, Value: uint32(v.EOS)},
		quantize.Entry{Key: tokenizer.KeyUNK, Value: uint32(v.UNK)},
		quantize.Entry{Key: tokenizer.KeyAddBOS, Value: v.AddBOS},
		quantize.Entry{Key: tokenizer.KeyAddEOS, Value: v.AddEOS},
		quantize.Entry{Key: tokenizer.KeyAddSpacePrefix, Value: v.AddSpacePrefix},
	)
}

// plan decides each tensor's type with quantize's rules, as if quantizing
// an f32 model.
func (m synth) plan() []quantize.Decision {
	defs := m.tensorDefs()
	mi := quantize.Model{NLayer: m.Layers, GQA: 1, HasOutput: !m.Tied, NExpert: m.Experts}
	if m.Arch != "mamba" {
		mi.GQA = m.Heads / m.KVHeads
	}
	ds := make([]quantize.Decision, len(defs))
	for i, d := range defs {
		var ne [ops.MaxDims]int64
		for j := range ne {
			ne[j] = 1
		}
		copy(ne[:], d.ne)
		ds[i] = quantize.Choose(quantize.Tensor{Name: d.name, Type: quant.F32, Ne: ne, NDims: len(d.ne)}, mi, m.Params)
	}
	return ds
}

// result reports what write did.
type result struct {
	Params   int64
	Bytes    int64 // tensor data
	FileSize int64
	Fallback int
}

// write writes the model into out, an empty file open for reading and
// writing (see quantize.Write): tensor by tensor, each row drawn from its
// own seeded stream (so the file does not depend on the thread count)
// and encoded in its type straight into the output buffer. Lines for
// fallbacks (every tensor with verbose) go to log.
func (m synth) write(out *os.File, log io.Writer, verbose bool) (result, error) {
	v, err := buildVocab(m.Vocab)
	if err != nil {
		return result{}, fmt.Errorf("-vocab: %w", err)
	}
	ds := m.plan()
	specs := make([]quantize.TensorSpec, len(ds))
	var res result
	for i, d := range ds {
		specs[i] = quantize.TensorSpec{Name: d.Name, Type: d.To, Ne: append([]int64(nil), d.Ne[:d.NDims]...)}
		res.Params += d.Elements()
		res.Bytes += d.Bytes(d.To)
		if d.Fallback != "" {
			res.Fallback++
		}
	}
	fill := func(i int, buf []byte) error {
		d := ds[i]
		if err := m.fillTensor(uint64(i), d, buf); err != nil {
			return err
		}
		if verbose || d.Fallback != "" {
			note := d.Rule
			if d.Fallback != "" {
				note += "; FALLBACK from " + d.Chosen.String() + ": " + d.Fallback
			}
			fmt.Fprintf(log, "%-28s %-14s %-5v %s\n", d.Name, d.Shape(), d.To, note)
		}
		return nil
	}
	res.FileSize, err = quantize.Write(out, m.metadata(v), specs, fill)
	return res, err
}

// fillTensor generates tensor number idx of the model into buf, encoded
// as d.To: norm weights (1-D tensors) are 1; the rows of a matrix
// W[n_in, n_out] are drawn from N(0, 1/n_in), so that a matrix keeps the
// RMS of an input of RMS 1 and the logits (from the RMS-normalised final
// state) have a standard deviation of about 1. Biases and attention sinks
// are 0; Mamba's A is -1, -2, ..., -d_state per channel (S4D's init) and
// its dt bias the inverse softplus of a step between 1e-3 and 1e-1.
func (m synth) fillTensor(idx uint64, d quantize.Decision, buf []byte) error {
	n := d.Ne[0]
	rs, err := d.To.RowSize(n)
	if err != nil {
		return fmt.Errorf("tensor %s: %w", d.Name, err)
	}
	rows := d.Elements() / n
	if int64(len(buf)) != rows*rs {
		return fmt.Errorf("tensor %s: buffer of %d bytes, want %d", d.Name, len(buf), rows*rs)
	}
	kind := kindOf(d.Name, d.NDims)
	return quantize.ParallelRows(rows, m.Params.Threads, func(r0, r1 int64) error {
		row := make([]float32, n)
		for r := r0; r < r1; r++ {
			m.fillRow(kind, idx, r, row)
			if err := quant.QuantizeRow(d.To, row, buf[r*rs:(r+1)*rs]); err != nil {
				return fmt.Errorf("tensor %s row %d: %w", d.Name, r, err)
			}
		}
		return nil
	})
}

// paramString formats a parameter count: "99.5M", "6.74B", "295K".
func paramString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
