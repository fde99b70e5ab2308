package quantize

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kernbench/kernbench/quant"
)

// FileType is the value of general.file_type: llama.cpp's enum llama_ftype,
// which names the type most of a file's weights have.
type FileType uint32

// File types, numbered as llama.cpp numbers them. The gap 4-6 is types
// llama.cpp has removed.
const (
	FileTypeAllF32       FileType = 0
	FileTypeMostlyF16    FileType = 1
	FileTypeMostlyQ4_0   FileType = 2
	FileTypeMostlyQ4_1   FileType = 3
	FileTypeMostlyQ8_0   FileType = 7
	FileTypeMostlyQ5_0   FileType = 8
	FileTypeMostlyQ5_1   FileType = 9
	FileTypeMostlyQ2_K   FileType = 10
	FileTypeQ3_K_S       FileType = 11
	FileTypeQ3_K_M       FileType = 12
	FileTypeQ3_K_L       FileType = 13
	FileTypeQ4_K_S       FileType = 14
	FileTypeQ4_K_M       FileType = 15
	FileTypeQ5_K_S       FileType = 16
	FileTypeQ5_K_M       FileType = 17
	FileTypeMostlyQ6_K   FileType = 18
	FileTypeIQ2_XXS      FileType = 19
	FileTypeIQ2_XS       FileType = 20
	FileTypeQ2_K_S       FileType = 21
	FileTypeIQ3_XS       FileType = 22
	FileTypeIQ3_XXS      FileType = 23
	FileTypeIQ1_S        FileType = 24
	FileTypeMostlyIQ4_NL FileType = 25
	FileTypeIQ3_S        FileType = 26
	FileTypeIQ3_M        FileType = 27
	FileTypeIQ2_S        FileType = 28
	FileTypeIQ2_M        FileType = 29
	FileTypeMostlyIQ4_XS FileType = 30
	FileTypeIQ1_M        FileType = 31
	FileTypeMostlyBF16   FileType = 32
	FileTypeMostlyTQ1_0  FileType = 36
	FileTypeMostlyTQ2_0  FileType = 37
	FileTypeMXFP4_MOE    FileType = 38
)

// QuantizationVersion is the value of general.quantization_version that
// files with quantized tensors carry: ggml's GGML_QNT_VERSION, the version
// of the legacy block layouts (2 since the Q4_0/Q4_1/Q8_0 layout change of
// May 2023).
const QuantizationVersion = 2

// Metadata keys written by Quantize and by synthetic-model writers.
const (
	KeyFileType            = "general.file_type"
	KeyQuantizationVersion = "general.quantization_version"
)

// cond selects the layers a rule applies to.
type cond int

const (
	always             cond = iota
	moreBits                // useMoreBits(layer, nLayer)
	first2                  // layer < 2
	first4                  // layer < 4
	firstEighth             // layer < nLayer/8
	firstSixteenth          // layer < nLayer/16
	gqa4                    // n_head / n_head_kv >= 4 (any layer)
	firstEighthImat         // layer < nLayer/8, with an importance matrix
	firstEighthNoImat       // layer < nLayer/8, without one
	noImat                  // without an importance matrix (any layer)
	gqaOrExperts4           // n_head / n_head_kv >= 4 or n_expert >= 4 (any layer)
	experts8                // n_expert == 8 (any layer)
	firstEighthOrMore8      // layer < nLayer/8, or useMoreBits with 8 experts
	middleLayers            // nLayer/8 <= layer < 7*nLayer/8
)

// describe says in words which tensors c selects.
func (c cond) describe() string {
	switch c {
	case moreBits:
		return "in the layers use_more_bits picks"
	case first2:
		return "in layers 0 and 1"
	case first4:
		return "in layers 0-3"
	case firstEighth:
		return "in the first n_layer/8 layers"
	case firstSixteenth:
		return "in the first n_layer/16 layers"
	case gqa4:
		return "when n_head/n_head_kv >= 4"
	case firstEighthImat:
		return "in the first n_layer/8 layers, with -imatrix"
	case firstEighthNoImat:
		return "in the first n_layer/8 layers, without -imatrix"
	case noImat:
		return "without -imatrix"
	case gqaOrExperts4:
		return "when n_head/n_head_kv >= 4 or n_expert >= 4"
	case experts8:
		return "in models of 8 experts"
	case firstEighthOrMore8:
		return "in the first n_layer/8 layers (use_more_bits ones with 8 experts)"
	case middleLayers:
		return "in layers n_layer/8 .. 7*n_layer/8-1"
	}
	return "in every layer"
}

// holds reports whether c selects layer il of model m, quantized with an
// importance matrix when imat. A tensor outside any layer (il < 0) is
// selected only by the layer-independent conditions.
func (c cond) holds(il int, m Model, imat bool) bool {
	nLayer := m.NLayer
	switch c {
	case always:
		return true
	case gqa4:
		return m.GQA >= 4
	case noImat:
		return !imat
	case gqaOrExperts4:
		return m.GQA >= 4 || m.NExpert >= 4
	case experts8:
		return m.NExpert == 8
	}
	if il < 0 {
		return false
	}
	switch c {
	case firstEighthOrMore8:
		return il < nLayer/8 || (m.NExpert == 8 && useMoreBits(il, nLayer))
	case middleLayers:
		return il >= nLayer/8 && il < 7*nLayer/8
	case moreBits:
		return useMoreBits(il, nLayer)
	case first2:
		return il < 2
	case first4:
		return il < 4
	case firstEighth:
		return il < nLayer/8
	case firstSixteenth:
		return il < nLayer/16
	case firstEighthImat:
		return imat && il < nLayer/8
	case firstEighthNoImat:
		return !imat && il < nLayer/8
	}
	return false
}

// useMoreBits is llama.cpp's choice of the layers that get more bits in
// the _M mixes: the first and last eighth of the layers, and every third
// layer in between.
func useMoreBits(il, nLayer int) bool {
	return il < nLayer/8 || il >= 7*nLayer/8 || (il-nLayer/8)%3 == 2
}

// A rule gives tensors whose name contains match the type t in the layers
// when selects. Rules of a scheme are tried in order; the first that holds
// wins.
type rule struct {
	match string
	when  cond
	t     quant.Type
}

// A Scheme is a target of quantization: a default type for the weights,
// the general.file_type it records, and (for the K mixes) rules that give
// some tensors more bits.
type Scheme struct {
	// Name is the scheme's name as the command line takes it ("q4_K_M").
	Name string
	// FileType is written as general.file_type.
	FileType FileType
	// Default is the type of the weights no rule picks.
	Default quant.Type
	// Summary describes the scheme in a few words.
	Summary string
	// NeedsImatrix reports that llama-quantize makes this file type only
	// with an importance matrix (some of its tensors get a type that
	// RequiresImatrix names).
	NeedsImatrix bool
	rules        []rule
	// output is the output rule's type (zero: q6_K).
	output quant.Type
	// embd, when not zero, is token_embd.weight's type (in a model with
	// an output.weight).
	embd quant.Type
	// ownMoE marks the schemes whose rules give 8-expert models'
	// attention its types (llama.cpp's IQ1/IQ2 branch) in place of the
	// common 8-expert rule.
	ownMoE bool
}

// Quantized reports whether s's default type is a block-quantized type.
// Only those schemes apply the output rule and the layer rules, as in
// llama.cpp.
func (s Scheme) Quantized() bool { return s.Default.IsQuantized() }

// Rules that several schemes share.
var (
	rulesQ4KM = []rule{
		{"attn_v.weight", moreBits, quant.Q6_K},
		{"ffn_down", moreBits, quant.Q6_K},
	}
	rulesIQ4 = []rule{
		{"attn_v.weight", gqa4, quant.Q5_K},
		{"ffn_down", firstEighthNoImat, quant.Q5_K},
	}
)

// rulesIQ2 are llama.cpp's rules for the IQ1 and IQ2 mixes: attn_v and
// the first eighth of ffn_down get low (q2_K, or iq3_s in IQ2_S and
// IQ2_M), attn_v q4_K with grouped-query attention or experts, and
// attn_output the type out (none: the default).
func rulesIQ2(low, out quant.Type) []rule {
	r := []rule{
		{"attn_v.weight", gqaOrExperts4, quant.Q4_K},
		{"attn_v.weight", always, low},
		{"attn_k.weight", experts8, quant.Q4_K},
		{"ffn_down", firstEighth, low},
		{"attn_output.weight", experts8, quant.Q5_K},
	}
	if out != 0 {
		r = append(r, rule{"attn_output.weight", always, out})
	}
	return r
}

// schemes lists every scheme, in the order -rules prints them. The rules
// are llama.cpp's llama_tensor_get_type (Choose adds its 8-expert rules);
// see the package documentation for what is left out.
var schemes = []Scheme{
	{Name: "f32", FileType: FileTypeAllF32, Default: quant.F32, Summary: "all weights f32"},
	{Name: "f16", FileType: FileTypeMostlyF16, Default: quant.F16, Summary: "weights f16"},
	{Name: "bf16", FileType: FileTypeMostlyBF16, Default: quant.BF16, Summary: "weights bf16"},
	{Name: "q8_0", FileType: FileTypeMostlyQ8_0, Default: quant.Q8_0, Summary: "8.5 bpw"},
	{Name: "q4_0", FileType: FileTypeMostlyQ4_0, Default: quant.Q4_0, Summary: "4.5 bpw", rules: []rule{
		{"ffn_down", firstEighthImat, quant.Q4_1},
	}},
	{Name: "q4_1", FileType: FileTypeMostlyQ4_1, Default: quant.Q4_1, Summary: "5.0 bpw"},
	{Name: "q5_0", FileType: FileTypeMostlyQ5_0, Default: quant.Q5_0, Summary: "5.5 bpw", rules: []rule{
		{"ffn_down", firstEighthImat, quant.Q5_1},
	}},
	{Name: "q5_1", FileType: FileTypeMostlyQ5_1, Default: quant.Q5_1, Summary: "6.0 bpw"},
	{Name: "q2_K", FileType: FileTypeMostlyQ2_K, Default: quant.Q2_K, Summary: "q2_K with q3_K/q4_K where it matters", rules: []rule{
		{"attn_v.weight", gqa4, quant.Q4_K},
		{"attn_v.weight", always, quant.Q3_K},
		{"ffn_down", always, quant.Q3_K},
		{"attn_output.weight", always, quant.Q3_K},
	}},
	{Name: "q3_K_S", FileType: FileTypeQ3_K_S, Default: quant.Q3_K, Summary: "q3_K everywhere but the output"},
	{Name: "q3_K_M", FileType: FileTypeQ3_K_M, Default: quant.Q3_K, Summary: "q3_K with q4_K/q5_K for attn_v, attn_output, ffn_down", rules: []rule{
		{"attn_v.weight", first2, quant.Q5_K},
		{"attn_v.weight", always, quant.Q4_K},
		{"ffn_down", firstSixteenth, quant.Q5_K},
		{"ffn_down", always, quant.Q4_K},
		{"attn_output.weight", always, quant.Q4_K},
	}},
	{Name: "q3_K_L", FileType: FileTypeQ3_K_L, Default: quant.Q3_K, Summary: "q3_K with q5_K for attn_v, attn_output, ffn_down", rules: []rule{
		{"attn_v.weight", always, quant.Q5_K},
		{"ffn_down", always, quant.Q5_K},
		{"attn_output.weight", always, quant.Q5_K},
	}},
	{Name: "q4_K_S", FileType: FileTypeQ4_K_S, Default: quant.Q4_K, Summary: "q4_K with q5_K in the first layers", rules: []rule{
		{"attn_v.weight", first4, quant.Q5_K},
		{"ffn_down", firstEighth, quant.Q5_K},
	}},
	{Name: "q4_K_M", FileType: FileTypeQ4_K_M, Default: quant.Q4_K, Summary: "q4_K with q6_K for half the attn_v and ffn_down", rules: rulesQ4KM},
	{Name: "q5_K_S", FileType: FileTypeQ5_K_S, Default: quant.Q5_K, Summary: "q5_K everywhere but the output"},
	{Name: "q5_K_M", FileType: FileTypeQ5_K_M, Default: quant.Q5_K, Summary: "q5_K with q6_K for half the attn_v and ffn_down", rules: rulesQ4KM},
	{Name: "q6_K", FileType: FileTypeMostlyQ6_K, Default: quant.Q6_K, Summary: "6.56 bpw"},
	{Name: "iq4_nl", FileType: FileTypeMostlyIQ4_NL, Default: quant.IQ4_NL, Summary: "4.50 bpw non-linear", rules: rulesIQ4},
	{Name: "iq4_xs", FileType: FileTypeMostlyIQ4_XS, Default: quant.IQ4_XS, Summary: "4.25 bpw non-linear", rules: rulesIQ4},
	{Name: "iq3_m", FileType: FileTypeIQ3_M, Default: quant.IQ3_S, Summary: "3.66 bpw iq3_s mix", rules: []rule{
		{"attn_v.weight", always, quant.Q4_K},
		{"ffn_down", firstEighthOrMore8, quant.Q4_K},
		{"attn_output.weight", always, quant.Q4_K},
		{"attn_qkv.weight", always, quant.Q4_K},
	}},
	{Name: "iq3_s", FileType: FileTypeIQ3_S, Default: quant.IQ3_S, Summary: "3.44 bpw", rules: []rule{
		{"attn_v.weight", gqa4, quant.Q4_K},
	}},
	{Name: "iq3_xs", FileType: FileTypeIQ3_XS, Default: quant.IQ3_S, Summary: "3.3 bpw iq3_s/iq3_xxs mix", NeedsImatrix: true, rules: []rule{
		{"attn_v.weight", gqa4, quant.Q4_K},
		{"attn_k.weight", always, quant.IQ3_XXS},
		{"attn_q.weight", always, quant.IQ3_XXS},
		{"ffn_up", middleLayers, quant.IQ3_XXS},
		{"ffn_gate", middleLayers, quant.IQ3_XXS},
	}},
	{Name: "iq3_xxs", FileType: FileTypeIQ3_XXS, Default: quant.IQ3_XXS, Summary: "3.06 bpw", NeedsImatrix: true, output: quant.Q5_K, embd: quant.IQ3_S, rules: []rule{
		{"attn_v.weight", gqa4, quant.Q4_K},
		{"attn_v.weight", noImat, quant.IQ3_S},
		{"attn_k.weight", always, quant.IQ2_S},
		{"attn_q.weight", always, quant.IQ2_S},
		{"ffn_down", firstEighthNoImat, quant.Q4_K},
		{"ffn_down", noImat, quant.Q3_K},
		{"attn_output.weight", always, quant.IQ3_S},
	}},
	{Name: "iq2_m", FileType: FileTypeIQ2_M, Default: quant.IQ2_S, Summary: "2.7 bpw iq2_s mix", NeedsImatrix: true, output: quant.Q5_K, embd: quant.IQ3_S, ownMoE: true, rules: rulesIQ2(quant.IQ3_S, quant.IQ3_S)},
	{Name: "iq2_s", FileType: FileTypeIQ2_S, Default: quant.IQ2_XS, Summary: "2.5 bpw iq2_xs mix", NeedsImatrix: true, output: quant.Q5_K, embd: quant.IQ3_S, ownMoE: true, rules: rulesIQ2(quant.IQ3_S, quant.IQ3_S)},
	{Name: "iq2_xs", FileType: FileTypeIQ2_XS, Default: quant.IQ2_XS, Summary: "2.31 bpw", NeedsImatrix: true, output: quant.Q5_K, embd: quant.Q2_K, ownMoE: true, rules: rulesIQ2(quant.Q2_K, 0)},
	{Name: "iq2_xxs", FileType: FileTypeIQ2_XXS, Default: quant.IQ2_XXS, Summary: "2.06 bpw", NeedsImatrix: true, output: quant.Q5_K, embd: quant.Q2_K, ownMoE: true, rules: rulesIQ2(quant.Q2_K, 0)},
	{Name: "iq1_m", FileType: FileTypeIQ1_M, Default: quant.IQ1_M, Summary: "1.75 bpw", NeedsImatrix: true, output: quant.Q5_K, embd: quant.Q2_K, ownMoE: true, rules: rulesIQ2(quant.Q2_K, quant.IQ2_XXS)},
	{Name: "iq1_s", FileType: FileTypeIQ1_S, Default: quant.IQ1_S, Summary: "1.56 bpw", NeedsImatrix: true, output: quant.Q5_K, embd: quant.Q2_K, ownMoE: true, rules: rulesIQ2(quant.Q2_K, quant.IQ2_XXS)},
	{Name: "q2_K_S", FileType: FileTypeQ2_K_S, Default: quant.Q2_K, Summary: "q2_K with q4_K in the first layers' ffn_down", NeedsImatrix: true, rules: []rule{
		{"attn_v.weight", gqa4, quant.Q4_K},
		{"ffn_down", firstEighth, quant.Q4_K},
	}},
	{Name: "tq1_0", FileType: FileTypeMostlyTQ1_0, Default: quant.TQ1_0, Summary: "1.69 bpw ternary; token_embd q4_K", embd: quant.Q4_K},
	{Name: "tq2_0", FileType: FileTypeMostlyTQ2_0, Default: quant.TQ2_0, Summary: "2.06 bpw ternary; token_embd q4_K", embd: quant.Q4_K},
	{Name: "mxfp4_moe", FileType: FileTypeMXFP4_MOE, Default: quant.MXFP4, Summary: "experts (3-D) mxfp4, other matrices q8_0"},
}

// aliases are the short names llama-quantize accepts for the _M mixes.
var aliases = map[string]string{"q3_K": "q3_K_M", "q4_K": "q4_K_M", "q5_K": "q5_K_M"}

// Schemes returns every scheme ParseScheme knows, in a fixed order.
func Schemes() []Scheme { return append([]Scheme(nil), schemes...) }

// Unwritten lists llama.cpp's file types kernbench cannot write yet, by
// llama-quantize's names, each with whether llama-quantize needs an
// importance matrix for it. It is empty now that the IQ1, IQ2 and IQ3
// mixes and Q2_K_S are schemes; ParseScheme refuses any name it holds.
var Unwritten = []struct {
	Name         string
	NeedsImatrix bool
}{}

// ErrNeedsImatrix marks a file type llama-quantize refuses to make without
// an importance matrix.
var ErrNeedsImatrix = errors.New("needs an importance matrix (-imatrix FILE), as llama-quantize does for IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS tensors and Q2_K_S")

// CheckImatrix returns an error wrapping ErrNeedsImatrix when the file
// type called name (ignoring case) is one llama-quantize makes only with
// an importance matrix (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M,
// IQ3_XXS, IQ3_XS, Q2_K_S) and haveImatrix is false, nil otherwise.
func CheckImatrix(name string, haveImatrix bool) error {
	if haveImatrix {
		return nil
	}
	for _, u := range Unwritten {
		if strings.EqualFold(name, u.Name) && u.NeedsImatrix {
			return fmt.Errorf("quantize: %s %w", u.Name, ErrNeedsImatrix)
		}
	}
	for _, s := range schemes {
		if strings.EqualFold(name, s.Name) && s.NeedsImatrix {
			return fmt.Errorf("quantize: %s %w", strings.ToUpper(s.Name), ErrNeedsImatrix)
		}
	}
	return nil
}

// ParseScheme returns the scheme called name, ignoring case: a weight type
// (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q6_K, iq4_nl,
// iq4_xs, iq3_s, iq3_xxs, iq2_xxs, iq2_xs, iq1_s, iq1_m, tq1_0, tq2_0), a
// K mix (q2_K_S, q3_K_S, q3_K_M, q3_K_L, q4_K_S, q4_K_M, q5_K_S, q5_K_M),
// an IQ mix (iq3_m, iq3_xs, iq2_s, iq2_m), mxfp4_moe, or one of llama-quantize's aliases q3_K,
// q4_K and q5_K for the _M mixes. A file type of Unwritten is an error
// that says kernbench cannot write it yet.
func ParseScheme(name string) (Scheme, error) {
	for _, u := range Unwritten {
		if strings.EqualFold(name, u.Name) {
			return Scheme{}, fmt.Errorf("quantize: %s is a llama.cpp file type kernbench cannot write yet", u.Name)
		}
	}
	for a, target := range aliases {
		if strings.EqualFold(name, a) {
			name = target
		}
	}
	for _, s := range schemes {
		if strings.EqualFold(name, s.Name) {
			return s, nil
		}
	}
	names := make([]string, len(schemes))
	for i, s := range schemes {
		names[i] = s.Name
	}
	return Scheme{}, fmt.Errorf("quantize: unknown type %q (known: %s; aliases q3_K, q4_K, q5_K)", name, strings.Join(names, ", "))
}

// ParseWeightType returns the element type called name, which must be one a
// weight matrix can have: f32, f16, bf16, a legacy type, a K type, an IQ
// type, a ternary type or mxfp4 (not q8_1, q8_K or an integer type, which
// no matrix product takes as weights).
func ParseWeightType(name string) (quant.Type, error) {
	t, err := quant.ParseType(name)
	if err != nil {
		return 0, err
	}
	if !weightType(t) {
		return 0, fmt.Errorf("quantize: %v is not a weight type (want f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K..q6_K, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_nl, iq4_xs, tq1_0, tq2_0 or mxfp4)", t)
	}
	return t, nil
}

// weightType reports whether t can hold a weight matrix.
func weightType(t quant.Type) bool {
	switch t {
	case quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
		quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0, quant.MXFP4,
		quant.IQ1_S, quant.IQ1_M, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S:
		return true
	}
	return false
}

// fallbacks maps each type of 256-element blocks to the type of
// 32-element blocks a tensor gets when its rows are not a multiple of
// 256, as llama.cpp does.
var fallbacks = map[quant.Type]quant.Type{
	quant.Q2_K:   quant.Q4_0,
	quant.Q3_K:   quant.Q4_0,
	quant.TQ1_0:  quant.Q4_0,
	quant.TQ2_0:  quant.Q4_0,
	quant.IQ4_XS: quant.IQ4_NL,
	// The codebook formats too, as llama.cpp.
	quant.IQ1_S:   quant.IQ4_NL,
	quant.IQ1_M:   quant.IQ4_NL,
	quant.IQ2_XXS: quant.IQ4_NL,
	quant.IQ2_XS:  quant.IQ4_NL,
	quant.IQ2_S:   quant.IQ4_NL,
	quant.IQ3_XXS: quant.IQ4_NL,
	quant.IQ3_S:   quant.IQ4_NL,
	quant.Q4_K:    quant.Q5_0,
	quant.Q5_K:    quant.Q5_1,
	quant.Q6_K:    quant.Q8_0,
}

// WriteRules writes the rule table: what each scheme does, the output
// rule, the fallbacks and which tensors are left alone.
func WriteRules(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Schemes (TYPE):\n\n")
	fmt.Fprintf(&b, "  %-7s %-9s %-7s %s\n", "name", "file_type", "default", "rules (first match wins; everything else gets the default)")
	for _, s := range schemes {
		fmt.Fprintf(&b, "  %-7s %-9d %-7v %s\n", s.Name, s.FileType, s.Default, s.Summary)
		for i, r := range s.rules {
			when := r.when.describe()
			if r.when == always && i > 0 && s.rules[i-1].match == r.match {
				when = "otherwise"
			}
			fmt.Fprintf(&b, "  %-7s %-9s %-7s %-20s -> %-5v %s\n", "", "", "", tensorClass(r.match), r.t, when)
		}
	}
	b.WriteString(`  aliases: q3_K = q3_K_M, q4_K = q4_K_M, q5_K = q5_K_M (as llama-quantize)

Output rule (every quantized scheme, -pure excepted):
  output.weight (token_embd.weight when the model has no output.weight)
  gets q6_K (q5_K in iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq2_m and
  iq3_xxs), or q8_0 when its rows are not a multiple of the default type's
  block, or stays q8_0 in the q8_0 scheme, or q8_0 in mxfp4_moe.
  -output-type overrides it. token_embd.weight otherwise gets the default
  type (q4_K in tq1_0 and tq2_0, q2_K in iq1_s, iq1_m, iq2_xxs and iq2_xs,
  iq3_s in iq2_s, iq2_m and iq3_xxs; -token-embd-type overrides it).

mxfp4_moe: every matrix but the experts' stacks (3-D: ffn_*_exps) gets
  q8_0, token_embd.weight included; the experts get mxfp4.

With an importance matrix (-imatrix), the types that take one (q4_0,
  q4_1, q5_0, q5_1, q2_K..q6_K, the iq types) are quantized with its
  weights by ggml's weighted search, and the rules marked -imatrix apply.

use_more_bits(i, n): i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2,
  for layer i of n (so for n = 32: layers 0-3, 6, 9, ..., 27, 28-31).

Mixtures of experts: the experts (ffn_gate_exps, ffn_up_exps,
  ffn_down_exps, 3-D) follow the rules of ffn_gate, ffn_up and ffn_down.
  In models of 8 experts (Mixtral), attn_v and attn_k get q8_0 in every
  quantized scheme but the iq1/iq2 mixes (whose rules above say it), and
  attn_output q5_K in q2_K, q3_K_S, q3_K_M, q4_K_S, q4_K_M, iq3_xxs,
  iq3_xs, iq3_s, iq3_m, iq4_nl and iq4_xs (in place of the scheme's
  attn_output rule), as llama.cpp.

Tensors left as they are (copied, not converted): tensors of one dimension
(norms, biases, rope_freqs, attention sinks, Mamba's D), names not ending
in "weight" (Mamba's ssm_a and ssm_d), names containing "_norm.weight",
"ffn_gate_inp.weight" (expert routers) or "ssm_conv1d.weight" (Mamba's
conv kernels), integer tensors, and output.weight with -leave-output. A
tensor already of its target type is copied too.

Fallbacks, when a tensor's rows are not a multiple of its type's block
(256 for K, IQ1/IQ2/IQ3, IQ4_XS and TQ types, 32 for the legacy types,
iq4_nl, mxfp4):
  q2_K, q3_K, tq1_0, tq2_0 -> q4_0,  iq1_*, iq2_*, iq3_*, iq4_xs -> iq4_nl
  q4_K -> q5_0,  q5_K -> q5_1,  q6_K -> q8_0
  any type of 32 -> f16 (llama.cpp refuses), and any fallback whose block
  still does not fit -> f16. Every fallback is reported on the tensor's line.

Importance matrix required (as llama-quantize): iq2_xxs, iq2_xs, iq2_s,
iq2_m, iq1_s, iq1_m, iq3_xxs, iq3_xs and q2_K_S are refused without
-imatrix, naming them.

Left out of llama.cpp's rules: the 70B attn_v bump, Falcon's special
cases, the fused attn_qkv rules of the K mixes, and manual per-tensor
overrides.
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// tensorClass names the tensors a rule's match selects.
func tensorClass(match string) string {
	if strings.HasSuffix(match, ".weight") {
		return match
	}
	return match + "*"
}

// TypeFlag is a flag.Value holding an optional weight type (nil until
// set), parsed with ParseWeightType: the -output-type and
// -token-embd-type flags of the commands.
type TypeFlag struct{ T *quant.Type }

// String returns the type's name, or "" when unset.
func (f *TypeFlag) String() string {
	if f == nil || f.T == nil {
		return ""
	}
	return f.T.String()
}

// Set parses s as a weight type.
func (f *TypeFlag) Set(s string) error {
	t, err := ParseWeightType(s)
	if err != nil {
		return err
	}
	f.T = &t
	return nil
}
