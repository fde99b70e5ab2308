package quantize

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

func mustScheme(t testing.TB, name string) Scheme {
	t.Helper()
	s, err := ParseScheme(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func shape(ne ...int64) ([ops.MaxDims]int64, int) {
	out := [ops.MaxDims]int64{1, 1, 1, 1}
	copy(out[:], ne)
	return out, len(ne)
}

func typePtr(t quant.Type) *quant.Type { return &t }

// withImatrix gives a Params an (empty) importance matrix.
func withImatrix(p *Params) { p.Imatrix = &imatrix.Matrix{Entries: map[string]*imatrix.Entry{}} }

// TestChoose pins the rule decisions: tensor name, shape and scheme to the
// type chosen by the rules and the type written after any fallback.
func TestChoose(t *testing.T) {
	llama7B := Model{NLayer: 32, GQA: 1, HasOutput: true}
	stories := Model{NLayer: 5, GQA: 2, HasOutput: true}
	gqa8 := Model{NLayer: 32, GQA: 8, HasOutput: true}
	tied := Model{NLayer: 32, GQA: 1, HasOutput: false}
	mixtral := Model{NLayer: 32, GQA: 4, HasOutput: true, NExpert: 8}
	tests := []struct {
		scheme   string
		name     string
		ne       []int64
		src      quant.Type
		model    Model
		mod      func(*Params)
		chosen   quant.Type
		to       quant.Type
		fallback bool
	}{
		// Copied tensors.
		{"q4_K_M", "output_norm.weight", []int64{4096}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_0", "blk.3.attn_norm.weight", []int64{4096}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_0", "blk.3.ffn_norm.weight", []int64{64, 64}, quant.F16, llama7B, nil, quant.F16, quant.F16, false},
		{"q4_0", "rope_freqs.weight", []int64{64}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_0", "blk.0.attn_q.bias", []int64{64, 64}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_0", "blk.0.ffn_gate_inp.weight", []int64{4096, 8}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_0", "blk.0.table.weight", []int64{64, 64}, quant.I32, llama7B, nil, quant.I32, quant.I32, false},
		{"q4_K_M", "blk.0.ssm_conv1d.weight", []int64{4, 1536}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_K_M", "blk.0.ssm_a", []int64{16, 1536}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},
		{"q4_K_M", "blk.0.attn_sinks.weight", []int64{64}, quant.F32, llama7B, nil, quant.F32, quant.F32, false},

		// Experts: 3-D tensors follow their 2-D counterparts' rules; an
		// 8-expert model's attention gets more bits.
		{"q4_K_M", "blk.0.ffn_down_exps.weight", []int64{14336, 4096, 8}, quant.F16, mixtral, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "blk.5.ffn_down_exps.weight", []int64{14336, 4096, 8}, quant.F16, mixtral, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.1.ffn_up_exps.weight", []int64{4096, 14336, 8}, quant.F16, mixtral, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.1.attn_v.weight", []int64{4096, 1024}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},
		{"q4_0", "blk.1.attn_k.weight", []int64{4096, 1024}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},
		{"q4_K_M", "blk.1.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q5_K, quant.Q5_K, false},
		{"q3_K_L", "blk.1.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q3_K, quant.Q3_K, false},
		{"q5_K_M", "blk.1.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q5_K, quant.Q5_K, false},
		{"f16", "blk.1.attn_v.weight", []int64{4096, 1024}, quant.F32, mixtral, nil, quant.F16, quant.F16, false},
		{"q4_K_M", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, func(p *Params) { p.LeaveOutput = true }, quant.F16, quant.F16, false},

		// Legacy schemes: the default everywhere, output.weight to q6_K
		// except in q8_0.
		{"q4_0", "blk.0.attn_q.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_0, quant.Q4_0, false},
		{"q4_0", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q4_0, quant.Q4_0, false},
		{"q4_0", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q5_1", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q8_0", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q8_0, quant.Q8_0, false},
		{"q4_0", "output.weight", []int64{64, 512}, quant.F32, stories, nil, quant.Q6_K, quant.Q8_0, true},
		{"q4_0", "blk.0.ffn_down.weight", []int64{172, 64}, quant.F32, stories, nil, quant.Q4_0, quant.F16, true},
		{"q8_0", "blk.0.ffn_down.weight", []int64{172, 64}, quant.F32, stories, nil, quant.Q8_0, quant.F16, true},
		{"q8_0", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.Q8_0, llama7B, nil, quant.Q8_0, quant.Q8_0, false},

		// Float schemes: no rules, no fallbacks.
		{"f16", "output.weight", []int64{4096, 32000}, quant.F32, llama7B, nil, quant.F16, quant.F16, false},
		{"f16", "blk.0.ffn_down.weight", []int64{172, 64}, quant.F32, stories, nil, quant.F16, quant.F16, false},
		{"bf16", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.F32, llama7B, nil, quant.BF16, quant.BF16, false},
		{"f32", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.F32, quant.F32, false},

		// q4_K_M: attn_v and ffn_down to q6_K where use_more_bits holds.
		{"q4_K_M", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "blk.3.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "blk.4.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.6.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "blk.7.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.28.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "blk.5.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.6.ffn_gate.weight", []int64{4096, 11008}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.0.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K_M", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "token_embd.weight", []int64{4096, 32000}, quant.F16, tied, nil, quant.Q6_K, quant.Q6_K, false},
		{"q4_K", "blk.6.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q5_K_M", "blk.31.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"q5_K_M", "blk.5.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		// stories260K shapes: nothing fits a K type.
		{"q4_K_M", "output.weight", []int64{64, 512}, quant.F32, stories, nil, quant.Q8_0, quant.Q8_0, false},
		{"q4_K_M", "blk.1.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.Q4_K, quant.Q5_0, true},
		{"q4_K_M", "blk.2.attn_v.weight", []int64{64, 32}, quant.F32, stories, nil, quant.Q6_K, quant.Q8_0, true},
		{"q4_K_M", "blk.2.ffn_down.weight", []int64{172, 64}, quant.F32, stories, nil, quant.Q6_K, quant.F16, true},
		{"q5_K_S", "blk.1.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.Q5_K, quant.Q5_1, true},
		{"q3_K_S", "blk.1.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.Q3_K, quant.Q4_0, true},
		{"q2_K", "blk.1.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.Q2_K, quant.Q4_0, true},
		{"q6_K", "blk.1.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.Q6_K, quant.Q8_0, true},

		// q2_K: attn_v by the GQA factor, ffn_down and attn_output q3_K.
		{"q2_K", "blk.9.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},
		{"q2_K", "blk.9.attn_v.weight", []int64{8192, 1024}, quant.F16, gqa8, nil, quant.Q4_K, quant.Q4_K, false},
		{"q2_K", "blk.9.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},
		{"q2_K", "blk.9.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},
		{"q2_K", "blk.9.attn_q.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q2_K, quant.Q2_K, false},

		// q3_K mixes.
		{"q3_K_M", "blk.1.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q3_K_M", "blk.2.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q3_K_M", "blk.1.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q3_K_M", "blk.2.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q3_K_M", "blk.2.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q3_K_M", "blk.2.ffn_up.weight", []int64{4096, 11008}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},
		{"q3_K_L", "blk.20.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q3_K_L", "blk.20.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q3_K_S", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},

		// q4_K_S: q5_K in the first layers.
		{"q4_K_S", "blk.3.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q4_K_S", "blk.4.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_S", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"q4_K_S", "blk.4.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},

		// With an importance matrix: q4_0/q5_0 ffn_down to q4_1/q5_1 in
		// the first eighth; without one, iq4_nl/iq4_xs ffn_down to q5_K
		// there.
		{"q4_0", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q4_1, quant.Q4_1, false},
		{"q4_0", "blk.4.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q4_0, quant.Q4_0, false},
		{"q4_0", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_0, quant.Q4_0, false},
		{"q5_0", "blk.0.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q5_1, quant.Q5_1, false},
		{"q4_1", "blk.0.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q4_1, quant.Q4_1, false},
		{"iq4_nl", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q5_K, quant.Q5_K, false},
		{"iq4_xs", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.IQ4_XS, quant.IQ4_XS, false},
		{"iq4_xs", "blk.4.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.IQ4_XS, quant.IQ4_XS, false},
		// iq4: attn_v q5_K at GQA >= 4; 8 experts: attn_output q5_K.
		{"iq4_xs", "blk.9.attn_v.weight", []int64{8192, 1024}, quant.F16, gqa8, nil, quant.Q5_K, quant.Q5_K, false},
		{"iq4_nl", "blk.9.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.IQ4_NL, quant.IQ4_NL, false},
		{"iq4_nl", "blk.1.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q5_K, quant.Q5_K, false},
		{"iq4_xs", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"iq4_xs", "blk.0.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.IQ4_XS, quant.IQ4_NL, true},
		// Ternary: token_embd q4_K; rows of 64 fall back to q4_0.
		{"tq1_0", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"tq2_0", "blk.0.attn_q.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.TQ2_0, quant.TQ2_0, false},
		{"tq1_0", "blk.0.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.TQ1_0, quant.Q4_0, true},
		// mxfp4_moe: experts mxfp4, every other matrix q8_0.
		{"mxfp4_moe", "blk.1.ffn_up_exps.weight", []int64{4096, 14336, 8}, quant.F16, mixtral, nil, quant.MXFP4, quant.MXFP4, false},
		{"mxfp4_moe", "blk.1.attn_q.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},
		{"mxfp4_moe", "token_embd.weight", []int64{4096, 32000}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},
		{"mxfp4_moe", "output.weight", []int64{4096, 32000}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},

		// The IQ3 mixes. iq3_m: attn_v, attn_output q4_K, ffn_down q4_K
		// in the first eighth (and use_more_bits layers with 8 experts).
		{"iq3_m", "blk.9.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_m", "blk.9.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_m", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_m", "blk.6.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_m", "blk.6.ffn_down_exps.weight", []int64{14336, 4096, 8}, quant.F16, mixtral, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_m", "blk.7.ffn_down_exps.weight", []int64{14336, 4096, 8}, quant.F16, mixtral, nil, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_m", "blk.1.attn_v.weight", []int64{4096, 1024}, quant.F16, mixtral, nil, quant.Q8_0, quant.Q8_0, false},
		{"iq3_m", "blk.1.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, nil, quant.Q5_K, quant.Q5_K, false},
		{"iq3_m", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, nil, quant.Q6_K, quant.Q6_K, false},
		{"iq3_s", "blk.9.attn_v.weight", []int64{8192, 1024}, quant.F16, gqa8, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_s", "blk.9.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_s", "blk.0.attn_q.weight", []int64{64, 64}, quant.F32, stories, nil, quant.IQ3_S, quant.IQ4_NL, true},
		// iq3_xxs: attn_q/attn_k iq2_s, attn_output and token_embd iq3_s,
		// output q5_K; without a matrix attn_v iq3_s, ffn_down q4_K/q3_K.
		{"iq3_xxs", "blk.2.attn_k.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_S, quant.IQ2_S, false},
		{"iq3_xxs", "blk.2.attn_q.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_S, quant.IQ2_S, false},
		{"iq3_xxs", "blk.2.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_xxs", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_xxs", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.Q5_K, quant.Q5_K, false},
		{"iq3_xxs", "blk.2.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_XXS, quant.IQ3_XXS, false},
		{"iq3_xxs", "blk.2.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, nil, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_xxs", "blk.2.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_XXS, quant.IQ3_XXS, false},
		{"iq3_xxs", "blk.2.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q4_K, quant.Q4_K, false},
		{"iq3_xxs", "blk.9.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, nil, quant.Q3_K, quant.Q3_K, false},
		// iq3_xs: attn_q/attn_k and the middle layers' ffn_up/ffn_gate iq3_xxs.
		{"iq3_xs", "blk.3.attn_k.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_XXS, quant.IQ3_XXS, false},
		{"iq3_xs", "blk.3.ffn_up.weight", []int64{4096, 11008}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq3_xs", "blk.4.ffn_up.weight", []int64{4096, 11008}, quant.F16, llama7B, withImatrix, quant.IQ3_XXS, quant.IQ3_XXS, false},
		{"iq3_xs", "blk.27.ffn_gate.weight", []int64{4096, 11008}, quant.F16, llama7B, withImatrix, quant.IQ3_XXS, quant.IQ3_XXS, false},
		{"iq3_xs", "blk.28.ffn_gate.weight", []int64{4096, 11008}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		// The IQ1/IQ2 mixes: attn_v and the first eighth of ffn_down q2_K
		// (iq3_s in iq2_s, iq2_m), attn_v q4_K with GQA >= 4 or experts,
		// output q5_K, token_embd q2_K (iq3_s); 8 experts: attn_k q4_K,
		// attn_output q5_K, not the common q8_0.
		{"iq2_xxs", "blk.2.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},
		{"iq2_xxs", "blk.2.attn_v.weight", []int64{8192, 1024}, quant.F16, gqa8, withImatrix, quant.Q4_K, quant.Q4_K, false},
		{"iq2_xxs", "blk.2.attn_v.weight", []int64{4096, 1024}, quant.F16, mixtral, withImatrix, quant.Q4_K, quant.Q4_K, false},
		{"iq2_xxs", "blk.2.attn_k.weight", []int64{4096, 1024}, quant.F16, mixtral, withImatrix, quant.Q4_K, quant.Q4_K, false},
		{"iq2_xxs", "blk.2.attn_k.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_XXS, quant.IQ2_XXS, false},
		{"iq2_xxs", "blk.2.attn_output.weight", []int64{4096, 4096}, quant.F16, mixtral, withImatrix, quant.Q5_K, quant.Q5_K, false},
		{"iq2_xxs", "blk.2.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_XXS, quant.IQ2_XXS, false},
		{"iq2_xxs", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},
		{"iq2_xxs", "blk.4.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_XXS, quant.IQ2_XXS, false},
		{"iq2_xxs", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},
		{"iq2_xxs", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.Q5_K, quant.Q5_K, false},
		{"iq2_xxs", "token_embd.weight", []int64{4096, 32000}, quant.F16, tied, withImatrix, quant.Q5_K, quant.Q5_K, false},
		{"iq2_xs", "blk.0.attn_q.weight", []int64{4096 + 32, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_XS, quant.IQ4_NL, true},
		{"iq2_s", "blk.9.ffn_up.weight", []int64{4096, 11008}, quant.F16, llama7B, withImatrix, quant.IQ2_XS, quant.IQ2_XS, false},
		{"iq2_s", "blk.2.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq2_m", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq2_m", "blk.9.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_S, quant.IQ2_S, false},
		{"iq2_m", "blk.9.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq2_m", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.IQ3_S, quant.IQ3_S, false},
		{"iq1_s", "blk.9.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ2_XXS, quant.IQ2_XXS, false},
		{"iq1_m", "blk.9.attn_q.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.IQ1_M, quant.IQ1_M, false},
		{"iq1_m", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},
		// q2_K_S: ffn_down q4_K in the first eighth, attn_v q4_K at GQA >= 4.
		{"q2_K_S", "blk.3.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q4_K, quant.Q4_K, false},
		{"q2_K_S", "blk.4.ffn_down.weight", []int64{11008, 4096}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},
		{"q2_K_S", "blk.4.attn_v.weight", []int64{8192, 1024}, quant.F16, gqa8, withImatrix, quant.Q4_K, quant.Q4_K, false},
		{"q2_K_S", "blk.4.attn_output.weight", []int64{4096, 4096}, quant.F16, llama7B, withImatrix, quant.Q2_K, quant.Q2_K, false},

		// -pure and the overrides.
		{"q4_K_M", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, func(p *Params) { p.Pure = true }, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "blk.0.attn_v.weight", []int64{4096, 4096}, quant.F16, llama7B, func(p *Params) { p.Pure = true }, quant.Q4_K, quant.Q4_K, false},
		{"q4_K_M", "output.weight", []int64{4096, 32000}, quant.F16, llama7B, func(p *Params) { p.OutputType = typePtr(quant.Q8_0) }, quant.Q8_0, quant.Q8_0, false},
		{"q4_K_M", "token_embd.weight", []int64{4096, 32000}, quant.F16, llama7B, func(p *Params) { p.TokenEmbdType = typePtr(quant.F16) }, quant.F16, quant.F16, false},
		{"q4_K_M", "output.weight", []int64{64, 512}, quant.F32, stories, func(p *Params) { p.OutputType = typePtr(quant.Q6_K) }, quant.Q6_K, quant.Q8_0, true},
	}
	for _, tt := range tests {
		ne, nd := shape(tt.ne...)
		p := Params{Scheme: mustScheme(t, tt.scheme)}
		if tt.mod != nil {
			tt.mod(&p)
		}
		d := Choose(Tensor{Name: tt.name, Type: tt.src, Ne: ne, NDims: nd}, tt.model, p)
		if d.Chosen != tt.chosen || d.To != tt.to || (d.Fallback != "") != tt.fallback {
			t.Errorf("%s %s %v (%v): chosen %v, to %v, fallback %q (rule %q); want chosen %v, to %v, fallback %v",
				tt.scheme, tt.name, tt.ne, tt.src, d.Chosen, d.To, d.Fallback, d.Rule, tt.chosen, tt.to, tt.fallback)
		}
		if d.To.BlockSize() == 0 || tt.ne[0]%d.To.BlockSize() != 0 {
			t.Errorf("%s %s: type %v does not fit rows of %d", tt.scheme, tt.name, d.To, tt.ne[0])
		}
		if d.Rule == "" {
			t.Errorf("%s %s: no rule recorded", tt.scheme, tt.name)
		}
	}
}

// TestFallback pins the fallback table for rows that fit no K type.
func TestFallback(t *testing.T) {
	tests := []struct {
		t    quant.Type
		n    int64
		want quant.Type
	}{
		{quant.Q2_K, 64, quant.Q4_0},
		{quant.Q3_K, 64, quant.Q4_0},
		{quant.Q4_K, 64, quant.Q5_0},
		{quant.Q5_K, 64, quant.Q5_1},
		{quant.Q6_K, 64, quant.Q8_0},
		{quant.IQ4_XS, 64, quant.IQ4_NL},
		{quant.TQ1_0, 64, quant.Q4_0},
		{quant.TQ2_0, 96, quant.Q4_0},
		{quant.IQ4_NL, 48, quant.F16},
		{quant.Q4_K, 172, quant.F16},
		{quant.Q6_K, 172, quant.F16},
		{quant.Q4_0, 172, quant.F16},
		{quant.Q8_0, 48, quant.F16},
		{quant.Q4_K, 512, quant.Q4_K},
		{quant.Q4_0, 96, quant.Q4_0},
		{quant.F16, 7, quant.F16},
		{quant.BF16, 7, quant.BF16},
	}
	for _, tt := range tests {
		got, why := fallback(tt.t, tt.n)
		if got != tt.want {
			t.Errorf("fallback(%v, %d) = %v (%s), want %v", tt.t, tt.n, got, why, tt.want)
		}
		if (why != "") != (got != tt.t) {
			t.Errorf("fallback(%v, %d): reason %q for type %v", tt.t, tt.n, why, got)
		}
		if why != "" && (!strings.Contains(why, fmt.Sprint(tt.n)) || !strings.Contains(why, tt.t.String())) {
			t.Errorf("fallback(%v, %d): reason %q does not name the row length and type", tt.t, tt.n, why)
		}
	}
}

// TestUseMoreBits: the layers of a 32-layer model that get more bits in
// the _M mixes, by llama.cpp's formula: 0-3, 28-31, and every third from 6.
func TestUseMoreBits(t *testing.T) {
	want := map[int]bool{0: true, 1: true, 2: true, 3: true, 28: true, 29: true, 30: true, 31: true}
	for i := 6; i < 28; i += 3 {
		want[i] = true
	}
	for i := range 32 {
		if got := useMoreBits(i, 32); got != want[i] {
			t.Errorf("useMoreBits(%d, 32) = %v, want %v", i, got, want[i])
		}
	}
	// Few layers: n/8 = 0, so layers 2 and the last are picked.
	for i, want := range []bool{false, false, true, false, true} {
		if got := useMoreBits(i, 5); got != want {
			t.Errorf("useMoreBits(%d, 5) = %v, want %v", i, got, want)
		}
	}
}

// TestParseScheme pins names, aliases and llama.cpp's file_type numbers.
func TestParseScheme(t *testing.T) {
	tests := []struct {
		name string
		want string
		ft   FileType
		def  quant.Type
	}{
		{"f32", "f32", 0, quant.F32},
		{"F16", "f16", 1, quant.F16},
		{"q4_0", "q4_0", 2, quant.Q4_0},
		{"Q4_1", "q4_1", 3, quant.Q4_1},
		{"q8_0", "q8_0", 7, quant.Q8_0},
		{"q5_0", "q5_0", 8, quant.Q5_0},
		{"q5_1", "q5_1", 9, quant.Q5_1},
		{"q2_K", "q2_K", 10, quant.Q2_K},
		{"q3_K_S", "q3_K_S", 11, quant.Q3_K},
		{"q3_k_m", "q3_K_M", 12, quant.Q3_K},
		{"q3_K", "q3_K_M", 12, quant.Q3_K},
		{"Q3_K_L", "q3_K_L", 13, quant.Q3_K},
		{"q4_K_S", "q4_K_S", 14, quant.Q4_K},
		{"Q4_K_M", "q4_K_M", 15, quant.Q4_K},
		{"q4_K", "q4_K_M", 15, quant.Q4_K},
		{"q5_K_S", "q5_K_S", 16, quant.Q5_K},
		{"q5_K_M", "q5_K_M", 17, quant.Q5_K},
		{"q5_k", "q5_K_M", 17, quant.Q5_K},
		{"q6_K", "q6_K", 18, quant.Q6_K},
		{"bf16", "bf16", 32, quant.BF16},
		{"IQ4_NL", "iq4_nl", 25, quant.IQ4_NL},
		{"iq4_xs", "iq4_xs", 30, quant.IQ4_XS},
		{"TQ1_0", "tq1_0", 36, quant.TQ1_0},
		{"tq2_0", "tq2_0", 37, quant.TQ2_0},
		{"MXFP4_MOE", "mxfp4_moe", 38, quant.MXFP4},
		{"IQ2_XXS", "iq2_xxs", 19, quant.IQ2_XXS},
		{"iq2_xs", "iq2_xs", 20, quant.IQ2_XS},
		{"Q2_K_S", "q2_K_S", 21, quant.Q2_K},
		{"IQ3_XS", "iq3_xs", 22, quant.IQ3_S},
		{"iq3_xxs", "iq3_xxs", 23, quant.IQ3_XXS},
		{"IQ1_S", "iq1_s", 24, quant.IQ1_S},
		{"iq3_s", "iq3_s", 26, quant.IQ3_S},
		{"IQ3_M", "iq3_m", 27, quant.IQ3_S},
		{"iq2_s", "iq2_s", 28, quant.IQ2_XS},
		{"IQ2_M", "iq2_m", 29, quant.IQ2_S},
		{"iq1_m", "iq1_m", 31, quant.IQ1_M},
	}
	for _, tt := range tests {
		s, err := ParseScheme(tt.name)
		if err != nil {
			t.Errorf("ParseScheme(%q): %v", tt.name, err)
			continue
		}
		if s.Name != tt.want || s.FileType != tt.ft || s.Default != tt.def {
			t.Errorf("ParseScheme(%q) = %s ft %d default %v, want %s ft %d default %v", tt.name, s.Name, s.FileType, s.Default, tt.want, tt.ft, tt.def)
		}
	}
	for _, bad := range []string{"", "q4", "q8_K", "q8_1", "i32", "mxfp4", "q4_K_X"} {
		if _, err := ParseScheme(bad); err == nil {
			t.Errorf("ParseScheme(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseScheme(%q): error %q does not name it", bad, err)
		}
	}
	for _, bad := range []string{"q8_K", "q8_1", "i8", "nope"} {
		if _, err := ParseWeightType(bad); err == nil {
			t.Errorf("ParseWeightType(%q) succeeded", bad)
		}
	}
}

// TestRulesTable: the printed table lists every scheme with its file type
// and every rule's target type.
func TestRulesTable(t *testing.T) {
	var b strings.Builder
	if err := WriteRules(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range Schemes() {
		line := fmt.Sprintf("  %-7s %-9d %-7v", s.Name, s.FileType, s.Default)
		if !strings.Contains(out, line) {
			t.Errorf("rule table lacks the line for %s:\n%s", s.Name, out)
		}
		for i, r := range s.rules {
			when := r.when.describe()
			if r.when == always && i > 0 && s.rules[i-1].match == r.match {
				when = "otherwise"
			}
			if !strings.Contains(out, fmt.Sprintf("%-20s -> %-5v %s", tensorClass(r.match), r.t, when)) {
				t.Errorf("rule table lacks %s's rule %+v", s.Name, r)
			}
		}
	}
}

func TestLayer(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{
		{"blk.0.attn_q.weight", 0},
		{"blk.31.ffn_down.weight", 31},
		{"token_embd.weight", -1},
		{"blk..attn_q.weight", -1},
		{"blk.-1.attn_q.weight", -1},
		{"blk.x.attn_q.weight", -1},
		{"blk.7", -1},
	}
	for _, tt := range tests {
		if got := Layer(tt.name); got != tt.want {
			t.Errorf("Layer(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// FuzzLayer: Layer never panics, and finds the number it is given back.
func FuzzLayer(f *testing.F) {
	f.Add("blk.12.attn_v.weight", 3)
	f.Add("blk.", 0)
	f.Fuzz(func(t *testing.T, name string, n int) {
		Layer(name)
		if n >= 0 {
			if got := Layer(fmt.Sprintf("blk.%d.%s", n, name)); got != n {
				t.Fatalf("Layer(blk.%d.%s) = %d", n, name, got)
			}
		}
	})
}

// TestRequiresImatrix pins llama-quantize's rule: the lowest-bit IQ types
// and q2_K in a Q2_K_S file need importance weights, except for the
// embeddings and the output.
func TestRequiresImatrix(t *testing.T) {
	if !RequiresImatrix("blk.0.ffn_up.weight", quant.Q2_K, 21) || RequiresImatrix("blk.0.ffn_up.weight", quant.Q2_K, FileTypeMostlyQ2_K) {
		t.Error("q2_K needs an imatrix in Q2_K_S files only")
	}
	if RequiresImatrix("output.weight", quant.Q2_K, 21) || RequiresImatrix("token_embd.weight", quant.Q2_K, 21) {
		t.Error("the embeddings and output never need one")
	}
	for _, typ := range []quant.Type{quant.Q4_K, quant.IQ4_XS, quant.IQ4_NL, quant.TQ1_0, quant.MXFP4} {
		if RequiresImatrix("blk.0.ffn_up.weight", typ, 0) {
			t.Errorf("%v needs no imatrix", typ)
		}
	}
	for _, c := range []struct {
		name string
		have bool
		want bool
	}{
		{"iq2_xxs", false, true}, {"IQ1_S", false, true}, {"iq1_m", false, true}, {"iq2_xs", false, true}, {"iq2_s", false, true},
		{"iq2_m", false, true}, {"q2_K_S", false, true}, {"iq3_xxs", false, true}, {"iq3_xs", false, true},
		{"iq2_xxs", true, false}, {"iq3_s", false, false}, {"iq3_m", false, false}, {"q4_0", false, false}, {"q2_K", false, false},
	} {
		err := CheckImatrix(c.name, c.have)
		if (err != nil) != c.want || (err != nil && !errors.Is(err, ErrNeedsImatrix)) {
			t.Errorf("CheckImatrix(%q, %v) = %v", c.name, c.have, err)
		}
		if err != nil && !strings.Contains(err.Error(), strings.ToUpper(c.name)) {
			t.Errorf("CheckImatrix(%q): %v does not name it", c.name, err)
		}
	}
}

// TestNeedsImatrixAgrees: a scheme is marked NeedsImatrix exactly when
// Plan, without a matrix, gives some tensor of a llama model with rows of
// 256 a type RequiresImatrix names (so CheckImatrix's refusal by name and
// Plan's refusal by tensor agree), and with one, Plan succeeds.
func TestNeedsImatrixAgrees(t *testing.T) {
	m := Model{NLayer: 8, GQA: 1, HasOutput: true}
	names := []string{"token_embd.weight", "output.weight"}
	for il := 0; il < m.NLayer; il++ {
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
			names = append(names, fmt.Sprintf("blk.%d.%s.weight", il, n))
		}
	}
	for _, s := range Schemes() {
		for _, imat := range []bool{false, true} {
			p := Params{Scheme: s}
			if imat {
				withImatrix(&p)
			}
			need := false
			for _, n := range names {
				ne, nd := shape(256, 256)
				d := Choose(Tensor{Name: n, Type: quant.F32, Ne: ne, NDims: nd}, m, p)
				need = need || d.NeedsImatrix
			}
			if !imat && need != s.NeedsImatrix {
				t.Errorf("%s: NeedsImatrix %v, but a tensor needing one is planned: %v", s.Name, s.NeedsImatrix, need)
			}
			if got := CheckImatrix(s.Name, imat) != nil; got != (s.NeedsImatrix && !imat) {
				t.Errorf("CheckImatrix(%s, %v) refused: %v", s.Name, imat, got)
			}
		}
	}
}
