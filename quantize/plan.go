package quantize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Params configure a quantization.
type Params struct {
	// Scheme is the target: a type or a mix.
	Scheme Scheme
	// OutputType, when not nil, is the type of output.weight (and of
	// token_embd.weight in a model without output.weight), in place of
	// the output rule.
	OutputType *quant.Type
	// TokenEmbdType, when not nil, is the type of token_embd.weight.
	TokenEmbdType *quant.Type
	// Pure gives every quantizable tensor the default type: no output
	// rule, no layer rules (overrides and fallbacks still apply).
	Pure bool
	// LeaveOutput copies output.weight as it is.
	LeaveOutput bool
	// Threads is the number of goroutines that convert rows (<= 0: one
	// per CPU).
	Threads int
	// Imatrix, when not nil, is the importance matrix: its weights go to
	// the quantizers that take them (quant.QuantizeRowWeighted), and the
	// rules that depend on having one apply, as in llama-quantize.
	Imatrix *imatrix.Matrix
	// ImatrixFile is the importance matrix's path, recorded in the
	// output's quantize.imatrix.file as llama-quantize records it.
	ImatrixFile string
}

// Tensor describes a source tensor for the rules.
type Tensor struct {
	Name  string
	Type  quant.Type
	Ne    [ops.MaxDims]int64
	NDims int
}

// Model holds the facts about a model the rules depend on.
type Model struct {
	// NLayer is the number of layers ({arch}.block_count).
	NLayer int
	// GQA is n_head / n_head_kv (1 without grouped-query attention).
	GQA int
	// HasOutput reports whether the model has an output.weight; without
	// one, token_embd.weight is also the output and gets its rule.
	HasOutput bool
	// NExpert is {arch}.expert_count (0 without experts): llama.cpp's
	// rules give the attention of 8-expert models more bits.
	NExpert int
}

// A Decision is what happens to one tensor.
type Decision struct {
	Tensor
	// Chosen is the type the rules picked (equal to Type for a tensor
	// left as it is).
	Chosen quant.Type
	// To is the type written: Chosen, or its fallback.
	To quant.Type
	// Rule says why Chosen: "default", "output rule", "copied: 1-D", ...
	Rule string
	// Fallback says why To differs from Chosen; "" when it does not.
	Fallback string
	// NeedsImatrix reports that llama-quantize quantizes this tensor to
	// To only with an importance matrix (see RequiresImatrix).
	NeedsImatrix bool
}

// imatrixTypes are the types llama-quantize refuses to quantize a tensor
// to without importance weights (by ggml's names, so the check holds for
// types quant adds later).
var imatrixTypes = map[string]bool{"iq1_s": true, "iq1_m": true, "iq2_xxs": true, "iq2_xs": true, "iq2_s": true, "iq3_xxs": true}

// RequiresImatrix reports whether llama-quantize needs importance weights
// to quantize the tensor called name to type t in a file of type ft: the
// lowest-bit IQ types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS), and
// q2_K in a Q2_K_S file, except for token_embd.weight and output.weight.
func RequiresImatrix(name string, t quant.Type, ft FileType) bool {
	if name == "token_embd.weight" || name == "output.weight" {
		return false
	}
	return imatrixTypes[t.String()] || (t == quant.Q2_K && ft == FileTypeQ2_K_S)
}

// Convert reports whether the tensor's data is converted (false: copied).
func (d Decision) Convert() bool { return d.To != d.Type }

// Requantized reports whether an already quantized tensor is converted to
// another type, which adds a second rounding to the first.
func (d Decision) Requantized() bool { return d.Convert() && d.Type.IsQuantized() }

// Elements returns the tensor's number of elements.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, x := range t.Ne {
		n *= x
	}
	return n
}

// Bytes returns the size of the tensor's data in type t.
func (t Tensor) Bytes(typ quant.Type) int64 {
	rs, err := typ.RowSize(t.Ne[0])
	if err != nil || t.Ne[0] <= 0 {
		return 0
	}
	return rs * (t.Elements() / t.Ne[0])
}

// Shape formats the tensor's shape as llama.cpp prints it: "[256, 512]".
func (t Tensor) Shape() string {
	parts := make([]string, t.NDims)
	for i := range parts {
		parts[i] = strconv.FormatInt(t.Ne[i], 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Layer returns the layer index in a name "blk.N....", or -1.
func Layer(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	num, _, ok := strings.Cut(rest, ".")
	if !ok || num == "" {
		return -1
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// keep says why a tensor is left as it is, or "" when it is quantized.
// These are llama.cpp's rules for the tensors a llama model has.
func keep(t Tensor, p Params) string {
	switch {
	case t.NDims < 2:
		return "copied: 1-D"
	case !strings.HasSuffix(t.Name, "weight"):
		return "copied: not a weight"
	case strings.Contains(t.Name, "_norm.weight"):
		return "copied: norm"
	case strings.Contains(t.Name, "ffn_gate_inp.weight"):
		return "copied: expert router"
	case strings.Contains(t.Name, "ssm_conv1d.weight"):
		return "copied: Mamba conv kernel"
	case !t.Type.IsFloat() && !t.Type.IsQuantized():
		return "copied: integer tensor"
	case p.LeaveOutput && t.Name == "output.weight":
		return "copied: -leave-output"
	}
	return ""
}

// Choose decides the type of tensor t of model m under p: the rules, the
// overrides, then a fallback where the type's block does not divide the
// rows.
func Choose(t Tensor, m Model, p Params) Decision {
	d := Decision{Tensor: t, Chosen: t.Type, To: t.Type}
	if why := keep(t, p); why != "" {
		d.Rule = why
		return d
	}
	s := p.Scheme
	d.Chosen, d.Rule = s.Default, "default"
	isOutput := t.Name == "output.weight" || (!m.HasOutput && t.Name == "token_embd.weight")
	switch {
	case isOutput && p.OutputType != nil:
		d.Chosen, d.Rule = *p.OutputType, "-output-type"
	case p.Pure || !s.Quantized():
	case isOutput:
		switch {
		case s.FileType == FileTypeMXFP4_MOE:
			d.Chosen, d.Rule = quant.Q8_0, "output rule (mxfp4_moe)"
		case t.Ne[0]%s.Default.BlockSize() != 0:
			d.Chosen, d.Rule = quant.Q8_0, "output rule (rows do not fit "+s.Default.String()+")"
		case s.output != 0:
			d.Chosen, d.Rule = s.output, "output rule"
		case s.Default != quant.Q8_0:
			d.Chosen, d.Rule = quant.Q6_K, "output rule"
		}
	case s.FileType == FileTypeMXFP4_MOE:
		if t.Ne[2] > 1 {
			d.Chosen, d.Rule = quant.MXFP4, "mxfp4_moe: experts"
		} else {
			d.Chosen, d.Rule = quant.Q8_0, "mxfp4_moe: not experts"
		}
	case t.Name == "token_embd.weight":
		if s.embd != 0 {
			d.Chosen, d.Rule = s.embd, "token_embd rule"
		}
	case s.ownMoE:
		d.Chosen, d.Rule = s.choose(t.Name, m, p)
	case m.NExpert == 8 && (strings.Contains(t.Name, "attn_v.weight") || strings.Contains(t.Name, "attn_k.weight")):
		d.Chosen, d.Rule = quant.Q8_0, "8-expert rule: attn_v and attn_k to q8_0"
	case m.NExpert == 8 && strings.Contains(t.Name, "attn_output.weight"):
		if moeOutputBump[s.Name] {
			d.Chosen, d.Rule = quant.Q5_K, "8-expert rule: attn_output to q5_K"
		}
	default:
		d.Chosen, d.Rule = s.choose(t.Name, m, p)
	}
	if t.Name == "token_embd.weight" && p.TokenEmbdType != nil {
		d.Chosen, d.Rule = *p.TokenEmbdType, "-token-embd-type"
	}
	d.To, d.Fallback = fallback(d.Chosen, t.Ne[0])
	d.NeedsImatrix = d.Convert() && RequiresImatrix(t.Name, d.To, s.FileType)
	return d
}

// choose applies s's rules to the tensor called name: the first rule that
// holds gives its type, else the default.
func (s Scheme) choose(name string, m Model, p Params) (quant.Type, string) {
	il := Layer(name)
	for _, r := range s.rules {
		if strings.Contains(name, r.match) && r.when.holds(il, m, p.Imatrix != nil) {
			return r.t, fmt.Sprintf("%s %s", tensorClass(r.match), r.when.describe())
		}
	}
	return s.Default, "default"
}

// moeOutputBump lists the schemes whose attn_output.weight llama.cpp
// raises to q5_K in 8-expert models (in place of their own attn_output
// rule).
var moeOutputBump = map[string]bool{"q2_K": true, "q3_K_S": true, "q3_K_M": true, "q4_K_S": true, "q4_K_M": true, "iq4_nl": true, "iq4_xs": true,
	"iq3_xxs": true, "iq3_xs": true, "iq3_s": true, "iq3_m": true}

// fallback returns the type a tensor whose rows have n elements gets
// instead of t, with the reason, or t and "" when t fits.
func fallback(t quant.Type, n int64) (quant.Type, string) {
	if n%t.BlockSize() == 0 {
		return t, ""
	}
	why := fmt.Sprintf("rows of %d are not a multiple of %v's block of %d", n, t, t.BlockSize())
	next, ok := fallbacks[t]
	if !ok {
		return quant.F16, why + ": using f16"
	}
	if n%next.BlockSize() != 0 {
		return quant.F16, fmt.Sprintf("%s nor of %v's %d: using f16", why, next, next.BlockSize())
	}
	return next, fmt.Sprintf("%s: using %v", why, next)
}

// ModelOf reads the facts the rules need from f: the layer count from
// {arch}.block_count (else the highest blk.N in the tensor names, plus
// one), the grouped-query factor from the head counts (1 when absent),
// the expert count, and whether output.weight exists. A block_count
// below the layers the tensor names show (0 in a file with blk.0.*) is an
// error: the rules that depend on a layer's place would silently go
// wrong.
func ModelOf(f *gguf.File) (Model, error) {
	m := Model{GQA: 1}
	arch := f.Arch()
	for _, ti := range f.Tensors {
		if ti.Name == "output.weight" {
			m.HasOutput = true
		}
		if il := Layer(ti.Name); il >= m.NLayer {
			m.NLayer = il + 1
		}
	}
	if arch == "" {
		return m, nil
	}
	if n, err := f.Int(arch + ".block_count"); err == nil {
		if n < 0 || n > 1<<20 {
			return Model{}, fmt.Errorf("quantize: %s.block_count = %d is out of range", arch, n)
		}
		if int(n) < m.NLayer {
			return Model{}, fmt.Errorf("quantize: %s.block_count = %d, but the file has tensors of layer %d (blk.%d.*): the layer rules need the true layer count", arch, n, m.NLayer-1, m.NLayer-1)
		}
		m.NLayer = int(n)
	} else if !errors.Is(err, gguf.ErrKeyNotFound) {
		return Model{}, fmt.Errorf("quantize: %w", err)
	}
	head, errH := f.Int(arch + ".attention.head_count")
	kv, errKV := f.Int(arch + ".attention.head_count_kv")
	if errH == nil && errKV == nil && head > 0 && kv > 0 {
		m.GQA = int(head / kv)
	}
	if n, err := f.Int(arch + ".expert_count"); err == nil && n > 0 && n <= 1<<20 {
		m.NExpert = int(n)
	}
	return m, nil
}

// Plan decides every tensor of f under p, in file order.
func Plan(f *gguf.File, p Params) ([]Decision, error) {
	m, err := ModelOf(f)
	if err != nil {
		return nil, err
	}
	if p.OutputType != nil && !weightType(*p.OutputType) {
		return nil, fmt.Errorf("quantize: output type %v is not a weight type", *p.OutputType)
	}
	if p.TokenEmbdType != nil && !weightType(*p.TokenEmbdType) {
		return nil, fmt.Errorf("quantize: token embedding type %v is not a weight type", *p.TokenEmbdType)
	}
	if p.Scheme.Name == "" || !weightType(p.Scheme.Default) {
		return nil, fmt.Errorf("quantize: scheme %q has no weight type", p.Scheme.Name)
	}
	ds := make([]Decision, len(f.Tensors))
	for i, ti := range f.Tensors {
		ds[i] = Choose(Tensor{Name: ti.Name, Type: ti.Type, Ne: ti.Ne, NDims: ti.NDims}, m, p)
		if ds[i].NeedsImatrix && p.Imatrix == nil {
			return nil, fmt.Errorf("quantize: %s to %v %w (tensor %s)", p.Scheme.Name, ds[i].To, ErrNeedsImatrix, ti.Name)
		}
	}
	return ds, nil
}
