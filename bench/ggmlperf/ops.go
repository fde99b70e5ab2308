package ggmlperf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A mapping says how ggml expresses one of kernbench's ops.
type mapping struct {
	// op is the member of enum ggml_op (without GGML_OP_).
	op string
	// unary and glu name the member of enum ggml_unary_op or ggml_glu_op
	// for ops that ggml folds into GGML_OP_UNARY or GGML_OP_GLU; the
	// subop's number is then the first op parameter.
	unary, glu string
	// params packs the node's parameters as ggml's op_params (int32
	// words; floats by their bits), after any subop number.
	params func(p any) ([]int32, error)
}

// ggml's flash attention precision GGML_PREC_F32 (enum ggml_prec, whose
// values are fixed: DEFAULT = 0, F32 = 10). test-backend-ops' own perf
// cases ask for it; ggml's CPU kernel does not read it.
const precF32 = 10

// mappings is the one table from kernbench's ops to ggml's. Ops missing
// here (views, which compute nothing) have no ggml counterpart to time.
var mappings = map[ops.Op]mapping{
	ops.OpMulMat:   {op: "MUL_MAT"},
	ops.OpMulMatID: {op: "MUL_MAT_ID"},
	ops.OpSoftMax: {op: "SOFT_MAX", params: func(p any) ([]int32, error) {
		sp, ok := p.(ops.SoftMaxParams)
		if !ok {
			return nil, paramsErr(p)
		}
		return floats(sp.Scale, sp.MaxBias), nil
	}},
	ops.OpFlashAttnExt: {op: "FLASH_ATTN_EXT", params: func(p any) ([]int32, error) {
		fp, ok := p.(ops.FlashAttnParams)
		if !ok {
			return nil, paramsErr(p)
		}
		return append(floats(fp.Scale, fp.MaxBias, fp.Softcap), precF32), nil
	}},
	ops.OpSSMConv: {op: "SSM_CONV"},
	ops.OpSSMScan: {op: "SSM_SCAN", params: func(any) ([]int32, error) {
		// K, the number of states kept per sequence (newer ggml; older
		// ones read no parameter): 1, the final state, as kernbench's.
		return []int32{1}, nil
	}},
	ops.OpRope: {op: "ROPE", params: func(p any) ([]int32, error) {
		rp, ok := p.(ops.RopeParams)
		if !ok {
			return nil, paramsErr(p)
		}
		// ggml_rope_impl: n_past (unused), n_dims, mode, n_ctx (unused),
		// n_ctx_orig, then freq_base, freq_scale, ext_factor,
		// attn_factor, beta_fast, beta_slow as floats (and M-RoPE
		// sections, zero here).
		w := []int32{0, int32(rp.NDims), int32(rp.Mode), 0, int32(rp.NCtxOrig)}
		return append(w, floats(rp.FreqBase, rp.FreqScale, rp.ExtFactor, rp.AttnFactor, rp.BetaFast, rp.BetaSlow)...), nil
	}},
	ops.OpRMSNorm: {op: "RMS_NORM", params: func(p any) ([]int32, error) {
		np, ok := p.(ops.NormParams)
		if !ok {
			return nil, paramsErr(p)
		}
		return floats(np.Eps), nil
	}},
	ops.OpGetRows: {op: "GET_ROWS"},
	ops.OpAdd:     {op: "ADD"},
	ops.OpMul:     {op: "MUL"},
	ops.OpScale: {op: "SCALE", params: func(p any) ([]int32, error) {
		sp, ok := p.(ops.ScaleParams)
		if !ok {
			return nil, paramsErr(p)
		}
		return floats(sp.Scale, sp.Bias), nil
	}},
	ops.OpCpy:  {op: "CPY"},
	ops.OpCont: {op: "CONT"},
	ops.OpSilu: {op: "UNARY", unary: "SILU"},
	ops.OpGelu: {op: "UNARY", unary: "GELU"},
	ops.OpSwiGLU: {op: "GLU", glu: "SWIGLU", params: func(p any) ([]int32, error) {
		gp, ok := p.(ops.GLUParams)
		if !ok {
			return nil, paramsErr(p)
		}
		if gp.Swapped {
			return []int32{1}, nil
		}
		return []int32{0}, nil
	}},
	ops.OpSwiGLUOAI: {op: "GLU", glu: "SWIGLU_OAI", params: func(p any) ([]int32, error) {
		gp, ok := p.(ops.GLUOAIParams)
		if !ok {
			return nil, paramsErr(p)
		}
		// ggml_swiglu_oai: swapped (never, with two sources), then
		// alpha and limit as floats.
		return append([]int32{0}, floats(gp.Alpha, gp.Limit)...), nil
	}},
	ops.OpArgsort: {op: "ARGSORT", params: func(p any) ([]int32, error) {
		ap, ok := p.(ops.ArgsortParams)
		if !ok {
			return nil, paramsErr(p)
		}
		return []int32{int32(ap.Order)}, nil // ggml: ASC = 0, DESC = 1, as ours
	}},
	ops.OpSumRows: {op: "SUM_ROWS"},
}

func paramsErr(p any) error { return fmt.Errorf("unexpected parameters %T", p) }

// floats returns the bits of fs as int32 words, as ggml stores floats in
// op_params.
func floats(fs ...float32) []int32 {
	out := make([]int32, len(fs))
	for i, f := range fs {
		out[i] = int32(math.Float32bits(f))
	}
	return out
}

// Limits of test-backend-ops' test file (GGML_MAX_OP_PARAMS bytes of
// op_params, GGML_MAX_SRC sources).
const (
	maxParams  = 64 / 4
	maxSources = 10
)

// A Source is one operand of a Case.
type Source struct {
	Type quant.Type
	Ne   [4]int64
	Nb   [4]int64
}

// A Case is one node as test-backend-ops builds it from a test file line.
type Case struct {
	// Name is what test-backend-ops reports the case under ("name=" in
	// its parameters): a token without spaces.
	Name string
	// Op is the name test-backend-ops prints for the node, which is
	// kernbench's op name ("MUL_MAT", "SILU").
	Op string
	// OpNum is the node's enum ggml_op number in the binary's ggml.
	OpNum   int
	Type    quant.Type
	Ne      [4]int64
	Params  []int32
	Sources []Source
}

// NewCase describes node, a node as harness.Point.Node builds it, as the
// test-backend-ops case named name. e are the enums of the ggml the
// binary was built from.
func NewCase(node *ops.Tensor, name string, e Enums) (Case, error) {
	if name == "" || name == "-" || strings.ContainsAny(name, " \t\r\n") {
		return Case{}, fmt.Errorf("ggmlperf: case name %q must be one token, not \"-\"", name)
	}
	m, ok := mappings[node.Op]
	if !ok {
		return Case{}, fmt.Errorf("ggmlperf: %v has no ggml counterpart to time", node.Op)
	}
	c := Case{Name: name, Op: node.Op.String(), Type: node.Type, Ne: node.Ne}
	num, ok := e.Ops[m.op]
	if !ok {
		return Case{}, fmt.Errorf("ggmlperf: %v: this ggml.h has no GGML_OP_%s", node.Op, m.op)
	}
	c.OpNum = num
	switch {
	case m.unary != "":
		n, ok := e.Unary[m.unary]
		if !ok {
			return Case{}, fmt.Errorf("ggmlperf: %v: this ggml.h has no GGML_UNARY_OP_%s", node.Op, m.unary)
		}
		c.Params = append(c.Params, int32(n))
	case m.glu != "":
		n, ok := e.GLU[m.glu]
		if !ok {
			return Case{}, fmt.Errorf("ggmlperf: %v: this ggml.h has no GGML_GLU_OP_%s", node.Op, m.glu)
		}
		c.Params = append(c.Params, int32(n))
	}
	if m.params != nil {
		w, err := m.params(node.Params)
		if err != nil {
			return Case{}, fmt.Errorf("ggmlperf: %v: %w", node.Op, err)
		}
		c.Params = append(c.Params, w...)
	}
	if len(c.Params) > maxParams {
		return Case{}, fmt.Errorf("ggmlperf: %v: %d parameter words, ggml holds %d", node.Op, len(c.Params), maxParams)
	}
	src := node.Src
	for len(src) > 0 && src[len(src)-1] == nil {
		src = src[:len(src)-1]
	}
	if len(src) > maxSources {
		return Case{}, fmt.Errorf("ggmlperf: %v: %d sources, ggml holds %d", node.Op, len(src), maxSources)
	}
	for i, s := range src {
		if s == nil {
			return Case{}, fmt.Errorf("ggmlperf: %v: source %d is absent but a later one is present, which a test file cannot say", node.Op, i)
		}
		c.Sources = append(c.Sources, Source{Type: s.Type, Ne: s.Ne, Nb: s.Nb})
	}
	return c, nil
}

// Line returns the case as a line of test-backend-ops' test file (without
// the newline): op, type, the output's four sizes, the count and words of
// the op parameters, the count of sources and each one's type, four sizes
// and four byte strides, and the name.
func (c Case) Line() string {
	var b strings.Builder
	num := func(v int64) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	num(int64(c.OpNum))
	num(int64(c.Type))
	for _, v := range c.Ne {
		num(v)
	}
	num(int64(len(c.Params)))
	for _, w := range c.Params {
		num(int64(w))
	}
	num(int64(len(c.Sources)))
	for _, s := range c.Sources {
		num(int64(s.Type))
		for _, v := range s.Ne {
			num(v)
		}
		for _, v := range s.Nb {
			num(v)
		}
	}
	b.WriteByte(' ')
	b.WriteString(c.Name)
	return b.String()
}
