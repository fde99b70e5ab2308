package model

import (
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// archTokens are the test sequences of the synthetic models: a 13-token
// sequence and a 7-token one, any ids below 40.
var (
	archSeqA = []int32{3, 17, 5, 39, 0, 22, 8, 31, 12, 1, 27, 9, 14}
	archSeqB = []int32{11, 2, 36, 7, 19, 25, 4}
)

// twoSeqBatch interleaves a (sequence 0) and b (sequence 1) token by
// token, every token asking for logits, and returns the batch indices of
// each sequence's tokens.
func twoSeqBatch(a, b []int32) (Batch, []int, []int) {
	var batch Batch
	var idxA, idxB []int
	for i := 0; i < len(a) || i < len(b); i++ {
		for s, toks := range [][]int32{a, b} {
			if i >= len(toks) {
				continue
			}
			if s == 0 {
				idxA = append(idxA, len(batch.Tokens))
			} else {
				idxB = append(idxB, len(batch.Tokens))
			}
			batch.Tokens = append(batch.Tokens, toks[i])
			batch.Pos = append(batch.Pos, int32(i))
			batch.SeqIDs = append(batch.SeqIDs, []int32{int32(s)})
			batch.Logits = append(batch.Logits, true)
		}
	}
	return batch, idxA, idxB
}

// checkDecodeModes decodes seqA through m four ways, on both attention
// paths (once for a recurrent model), and compares every token's logits
// with the float64 reference: the whole sequence in one batch, token by
// token, in micro-batches of 5 (5, 5, 3 tokens), and interleaved with
// seqB as two sequences of one batch (in micro-batches of 6). mod adjusts
// every context's parameters.
func checkDecodeModes(t *testing.T, m *Model, tol float64, mod func(*ContextParams)) {
	t.Helper()
	refA, err := ReferenceForward(m, archSeqA)
	if err != nil {
		t.Fatal(err)
	}
	refB, err := ReferenceForward(m, archSeqB)
	if err != nil {
		t.Fatal(err)
	}
	paths := []bool{true, false}
	if m.Hparams.Recurrent() {
		paths = paths[:1]
	}
	with := func(f func(*ContextParams)) func(*ContextParams) {
		return func(p *ContextParams) {
			f(p)
			if mod != nil {
				mod(p)
			}
		}
	}
	for _, flash := range paths {
		worst := map[string]float64{}
		note := func(mode string, got []float32, want []float64) {
			t.Helper()
			if got == nil {
				t.Fatalf("flash=%v %s: no logits", flash, mode)
			}
			worst[mode] = math.Max(worst[mode], maxRelErr(got, want))
		}
		// One batch.
		c := newCtx(t, m, flash, quant.F32, with(func(*ContextParams) {}))
		if err := c.Decode(allLogits(SimpleBatch(archSeqA, 0, 0))); err != nil {
			t.Fatalf("flash=%v one batch: %v", flash, err)
		}
		for i := range archSeqA {
			note("one batch", c.Logits(i), refA[i])
		}
		// Token by token.
		c = newCtx(t, m, flash, quant.F32, with(func(*ContextParams) {}))
		for i, tok := range archSeqA {
			if err := c.Decode(SimpleBatch([]int32{tok}, int32(i), 0)); err != nil {
				t.Fatalf("flash=%v token %d: %v", flash, i, err)
			}
			note("token by token", c.Logits(0), refA[i])
		}
		// Uneven micro-batches.
		c = newCtx(t, m, flash, quant.F32, with(func(p *ContextParams) { p.NUBatch = 5 }))
		if err := c.Decode(allLogits(SimpleBatch(archSeqA, 0, 0))); err != nil {
			t.Fatalf("flash=%v micro-batches: %v", flash, err)
		}
		for i := range archSeqA {
			note("micro-batches of 5", c.Logits(i), refA[i])
		}
		// Two sequences in one batch.
		batch, idxA, idxB := twoSeqBatch(archSeqA, archSeqB)
		c = newCtx(t, m, flash, quant.F32, with(func(p *ContextParams) { p.NSeqMax, p.NUBatch = 2, 6 }))
		if err := c.Decode(batch); err != nil {
			t.Fatalf("flash=%v two sequences: %v", flash, err)
		}
		for i, bi := range idxA {
			note("two sequences", c.Logits(bi), refA[i])
		}
		for i, bi := range idxB {
			note("two sequences", c.Logits(bi), refB[i])
		}
		for mode, e := range worst {
			t.Logf("%s flash=%v %s: max relative logit error %.3g (tolerance %g)", m.Hparams.Arch, flash, mode, e, tol)
			if e > tol {
				t.Errorf("%s flash=%v %s: logits differ from the reference by %.3g > %g", m.Hparams.Arch, flash, mode, e, tol)
			}
		}
	}
}

func TestMixtralHparams(t *testing.T) {
	m := mixtralSynth().mustModel(t)
	h := m.Hparams
	if h.Arch != ArchLlama || h.NExpert != 4 || h.NExpertUsed != 2 || h.NFFExp != 24 || !h.ExpertWeightsNorm {
		t.Fatalf("hparams %+v", h)
	}
	l := m.Weights.Layers[1]
	if l.FFNGate != nil || l.FFNGateInp == nil || l.FFNDownExps.Ne != [4]int64{24, 16, 4, 1} {
		t.Fatalf("layer 1 weights: dense gate %v, router %v, down experts %v", l.FFNGate, l.FFNGateInp, l.FFNDownExps)
	}
}

// TestMixtralMatchesReference: a llama model with experts (Mixtral's
// GGUF form) against the float64 reference in every decoding mode.
func TestMixtralMatchesReference(t *testing.T) {
	checkDecodeModes(t, mixtralSynth().mustModel(t), tolF32, nil)
}

// TestMoEWeightsNotNormalized: expert_weights_norm = false takes the
// chosen entries of the softmax over all experts, and the reference
// agrees; expert_weights_scale multiplies them.
func TestMoEWeightsNotNormalized(t *testing.T) {
	s := mixtralSynth()
	norm := s.mustModel(t)
	s.keys = map[string]any{"llama.expert_weights_norm": false, "llama.expert_weights_scale": float32(2.5)}
	m := s.mustModel(t)
	if m.Hparams.ExpertWeightsNorm || m.Hparams.ExpertWeightsScale != 2.5 {
		t.Fatalf("hparams %+v", m.Hparams)
	}
	a, err := ReferenceForward(norm, archSeqA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReferenceForward(m, archSeqA)
	if err != nil {
		t.Fatal(err)
	}
	if maxRelErr(f32(b[5]), a[5]) < 1e-3 {
		t.Fatal("unnormalized weights give the normalized logits; the test would prove nothing")
	}
	checkDecodeModes(t, m, tolF32, nil)
}

// TestMoEQuantized runs a mixture of experts whose experts are q8_0 and
// q4_K (MUL_MAT_ID over quantized experts) against the reference of the
// same (dequantized) weights.
func TestMoEQuantized(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0} {
		s := mixtralSynth()
		s.nEmbd, s.nFF, s.typ = 32, 64, typ
		m := s.mustModel(t)
		if m.Weights.Layers[0].FFNUpExps.Type != typ {
			t.Fatalf("experts are %v, want %v", m.Weights.Layers[0].FFNUpExps.Type, typ)
		}
		ref, err := ReferenceForward(m, archSeqA)
		if err != nil {
			t.Fatal(err)
		}
		c := newCtx(t, m, true, quant.F32, nil)
		if err := c.Decode(allLogits(SimpleBatch(archSeqA, 0, 0))); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range archSeqA {
			worst = math.Max(worst, maxRelErr(c.Logits(i), ref[i]))
		}
		// Quantized weights: MUL_MAT and MUL_MAT_ID round the
		// activations to q8_0 (q8_1 for q4_1-like types) for the
		// integer dot products, as ggml does, a step of 1/127 of each
		// block's largest value. In this small random model that moves
		// the logits by 4.6% (q8_0) and 5.3% (q4_0) of their largest
		// magnitude; the dense llama of the same sizes moves them by
		// 4.1% with q8_0, so the error is the activations' rounding, not
		// the routing. 0.1 checks the output is the model's; the f32
		// tests above check the routing tightly.
		t.Logf("%v experts: max relative logit error %.3g", typ, worst)
		if worst > 0.1 {
			t.Errorf("%v experts: logits differ from the reference by %.3g", typ, worst)
		}
	}
}

// TestMoEGraph checks the routing nodes of a mixture-of-experts layer and
// their block.
func TestMoEGraph(t *testing.T) {
	m := mixtralSynth().mustModel(t)
	c := newCtx(t, m, true, quant.F32, nil)
	if err := c.Decode(SimpleBatch(archSeqA[:4], 0, 0)); err != nil {
		t.Fatal(err)
	}
	g := c.LastGraph()
	count := map[ops.Op]int{}
	for _, n := range g.Computed() {
		count[n.Op]++
		if n.Op == ops.OpMulMatID {
			if _, block := g.Scope(n); block != "ffn_moe" {
				t.Errorf("%s is in block %q, want ffn_moe", n.Name, block)
			}
		}
	}
	nl := m.Hparams.NLayer
	for op, want := range map[ops.Op]int{ops.OpMulMatID: 3 * nl, ops.OpArgsort: nl, ops.OpSwiGLU: nl} {
		if count[op] != want {
			t.Errorf("%d %v nodes, want %d", count[op], op, want)
		}
	}
}

func TestArchLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		s    synth
		want string
	}{
		{func() synth { s := mixtralSynth(); s.keys = map[string]any{"llama.expert_used_count": nil}; return s }(), "expert_used_count"},
		{func() synth {
			s := mixtralSynth()
			s.keys = map[string]any{"llama.expert_used_count": uint32(5)}
			return s
		}(), "expert_used_count"},
		{func() synth {
			s := mixtralSynth()
			s.shapes = map[string][]int64{"blk.1.ffn_up_exps.weight": {16, 24, 3}}
			return s
		}(), "blk.1.ffn_up_exps.weight"},
		{func() synth {
			s := mixtralSynth()
			s.shapes = map[string][]int64{"blk.0.ffn_gate_inp.weight": nil}
			return s
		}(), "blk.0.ffn_gate_inp.weight is missing"},
		{func() synth { s := mixtralSynth(); s.extra = []string{"blk.0.ffn_gate.weight"}; return s }(), "blk.0.ffn_gate.weight"},
		{func() synth { s := defaultSynth(); s.keys = map[string]any{"general.architecture": "falcon"}; return s }(), `architecture "falcon" is not supported`},
	} {
		_, err := tc.s.model(t)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v / %v: %v, want an error naming %q", tc.s.keys, tc.s.shapes, tc.s.extra, err, tc.want)
		}
	}
}

func TestGPTOSSHparams(t *testing.T) {
	m := gptOSSSynth().mustModel(t)
	h := m.Hparams
	if h.Arch != ArchGPTOSS || h.NSWA != 4 || h.SWAPattern != 2 || h.RopeMode != ops.RopeNeoX || h.RopeScaling != RopeScalingYaRN ||
		h.RopeExtFactor != 1 || h.RopeFreqScale != 0.25 || h.RopeNCtxOrig != 32 || h.HeadDimK != 8 || h.NFFExp != 12 || !h.ExpertWeightsNorm {
		t.Fatalf("hparams %+v", h)
	}
	if !h.LayerSWA(0) || h.LayerSWA(1) {
		t.Errorf("sliding-window layers: 0 %v, 1 %v; want the even ones", h.LayerSWA(0), h.LayerSWA(1))
	}
	l := m.Weights.Layers[0]
	for name, x := range map[string]*ops.Tensor{"bq": l.Bq, "bo": l.Bo, "sinks": l.Sinks, "router bias": l.FFNGateInpB, "down bias": l.FFNDownExpsB, "norm": l.FFNNorm} {
		if x == nil {
			t.Errorf("%s not loaded", name)
		}
	}
}

// TestGPTOSSMatchesReference: sinks, alternating sliding-window and full
// layers (window 4, so the 13-token sequence crosses it), biases, the
// clamped SwiGLU experts and YaRN, against the float64 reference in every
// decoding mode.
func TestGPTOSSMatchesReference(t *testing.T) {
	checkDecodeModes(t, gptOSSSynth().mustModel(t), tolF32, nil)
}

// TestGPTOSSWindowReuse decodes 70 tokens of a window-4 gpt-oss model one
// and three at a time: the sliding-window layers' cache has 32 cells, so
// its cells are reused once they leave the window, and every token's
// logits still equal the reference's (which attends to the last 4
// positions in those layers and to all in the others).
func TestGPTOSSWindowReuse(t *testing.T) {
	m := gptOSSSynth().mustModel(t)
	toks := make([]int32, 70)
	for i := range toks {
		toks[i] = int32((i*7 + 3) % 40)
	}
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	wide := gptOSSSynth()
	wide.nSWA = 1000
	full, err := ReferenceForward(wide.mustModel(t), toks)
	if err != nil {
		t.Fatal(err)
	}
	if maxRelErr(f32(full[60]), ref[60]) < 1e-3 {
		t.Fatal("the window does not change the logits; the test would prove nothing")
	}
	for _, flash := range []bool{true, false} {
		for _, step := range []int{1, 3} {
			c := newCtx(t, m, flash, quant.F32, func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch = 128, 4, 4 })
			swa := c.kv.stores[1]
			if !swa.swa || swa.size != 32 {
				t.Fatalf("sliding-window store: swa %v, %d cells; want 32", swa.swa, swa.size)
			}
			worst := 0.0
			for i := 0; i < len(toks); i += step {
				n := min(step, len(toks)-i)
				if err := c.Decode(allLogits(SimpleBatch(toks[i:i+n], int32(i), 0))); err != nil {
					t.Fatalf("flash=%v token %d: %v", flash, i, err)
				}
				for j := range n {
					worst = math.Max(worst, maxRelErr(c.Logits(j), ref[i+j]))
				}
				if u := swa.cells[0].Used(); u > swa.size {
					t.Fatalf("%d cells used of %d", u, swa.size)
				}
			}
			if got := c.kv.stores[0].cells[0].Used(); got != len(toks) {
				t.Errorf("full-attention store holds %d cells, want %d", got, len(toks))
			}
			t.Logf("flash=%v step %d: max relative logit error past the window %.3g", flash, step, worst)
			if worst > tolF32 {
				t.Errorf("flash=%v step %d: logits differ from the windowed reference by %.3g", flash, step, worst)
			}
		}
	}
}

// TestGPTOSSGraph checks the sinks reach attention, the layer kinds'
// blocks and the clamped SwiGLU.
func TestGPTOSSGraph(t *testing.T) {
	m := gptOSSSynth().mustModel(t)
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, nil)
		if err := c.Decode(SimpleBatch(archSeqA[:4], 0, 0)); err != nil {
			t.Fatal(err)
		}
		g := c.LastGraph()
		blocks := map[string]int{}
		oai := 0
		for _, n := range g.Computed() {
			il, block := g.Scope(n)
			switch n.Op {
			case ops.OpFlashAttnExt, ops.OpSoftMax:
				if block == "ffn_moe" {
					continue
				}
				blocks[block]++
				var sinks *ops.Tensor
				if n.Op == ops.OpSoftMax {
					sinks = n.Src[ops.SMSinks]
				} else {
					sinks = n.Src[ops.FASinks]
				}
				if sinks != m.Weights.Layers[il].Sinks {
					t.Errorf("%s does not read layer %d's sinks", n.Name, il)
				}
			case ops.OpSwiGLUOAI:
				oai++
			}
		}
		if blocks["attn_swa"] != 1 || blocks["attn"] != 1 || oai != 2 {
			t.Errorf("flash=%v: attention blocks %v, %d SWIGLU_OAI; want one attn_swa, one attn, 2", flash, blocks, oai)
		}
	}
}

func TestMambaHparams(t *testing.T) {
	m := mambaSynth().mustModel(t)
	h := m.Hparams
	if h.Arch != ArchMamba || !h.Recurrent() || h.SSMConv != 4 || h.SSMInner != 32 || h.SSMState != 8 || h.SSMDtRank != 4 || h.NHead != 0 {
		t.Fatalf("hparams %+v", h)
	}
	if m.Weights.Output != m.Weights.TokEmbd {
		t.Error("the output is not tied to token_embd")
	}
}

// TestMambaMatchesReference: Mamba-1 against the float64 reference, one
// batch, token by token, uneven micro-batches (the conv and SSM states
// carry over between them) and two sequences of one batch (each with its
// own state cell).
func TestMambaMatchesReference(t *testing.T) {
	checkDecodeModes(t, mambaSynth().mustModel(t), tolF32, nil)
}

// TestMambaSequences decodes two sequences in one batch, copies the first
// into a third (seq_cp), removes the first (seq_rm), continues the second
// and third in one batch and starts the first anew: every sequence gives
// the logits of running it alone. Removing part of a sequence is an error
// that leaves it intact. Mamba-1 and Mamba-2.
func TestMambaSequences(t *testing.T) {
	for _, s := range []synth{mambaSynth(), mamba2Synth()} {
		testMambaSequences(t, s.mustModel(t))
	}
}

func testMambaSequences(t *testing.T, m *Model) {
	a, b := archSeqA[:8], archSeqB
	c := newCtx(t, m, true, quant.F32, func(p *ContextParams) { p.NSeqMax = 3 })
	batch, _, _ := twoSeqBatch(a, b)
	if err := c.Decode(batch); err != nil {
		t.Fatal(err)
	}
	kv := c.KV()
	if kv.Used() != 2 || kv.Size() != 3 || kv.SeqPosMax(0) != 7 || kv.SeqPosMax(1) != 6 || kv.SeqPosMin(1) != 0 {
		t.Fatalf("after two sequences: used %d of %d, pos max %d/%d", kv.Used(), kv.Size(), kv.SeqPosMax(0), kv.SeqPosMax(1))
	}
	if err := kv.SeqCp(0, 2, -1, -1); err != nil {
		t.Fatal(err)
	}
	if err := kv.SeqRm(0, -1, -1); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int32{{2, -1}, {0, 3}, {3, 5}} {
		err := kv.SeqRm(1, r[0], r[1])
		if err == nil || !strings.Contains(err.Error(), "cannot be rewound") {
			t.Errorf("seq_rm(1, %d, %d): %v, want an error saying a state cannot be rewound", r[0], r[1], err)
		}
	}
	if err := kv.SeqRm(1, 7, -1); err != nil {
		t.Errorf("seq_rm after the last position: %v", err)
	}
	if err := kv.SeqCp(1, 0, 2, -1); err == nil {
		t.Error("copying part of a state succeeded")
	}
	if kv.Used() != 2 || kv.SeqPosMax(0) != -1 || kv.SeqPosMax(2) != 7 || kv.SeqPosMax(1) != 6 {
		t.Fatalf("after seq_cp and seq_rm: used %d, pos max %d/%d/%d", kv.Used(), kv.SeqPosMax(0), kv.SeqPosMax(1), kv.SeqPosMax(2))
	}
	nextA, nextB := archSeqA[8], int32(33)
	cont := Batch{Tokens: []int32{nextB, nextA}, SeqIDs: [][]int32{{1}, {2}}, Logits: []bool{true, true}}
	if err := c.Decode(cont); err != nil {
		t.Fatal(err)
	}
	check := func(name string, got []float32, seq []int32) {
		t.Helper()
		ref, err := ReferenceForward(m, seq)
		if err != nil {
			t.Fatal(err)
		}
		if e := maxRelErr(got, ref[len(seq)-1]); e > tolF32 {
			t.Errorf("%s: logits differ from the sequence alone by %.3g", name, e)
		}
	}
	check("sequence 1 continued", c.Logits(0), append(append([]int32{}, b...), nextB))
	check("sequence 2 (a copy of 0) continued", c.Logits(1), archSeqA[:9])
	// Sequence 0 starts again from a zero state.
	fresh := archSeqB[:4]
	if err := c.Decode(SimpleBatch(fresh, 0, 0)); err != nil {
		t.Fatal(err)
	}
	check("sequence 0 anew", c.Logits(-1), fresh)
	// A token in two sequences is refused: the states are apart.
	shared := Batch{Tokens: []int32{5}, Pos: []int32{8}, SeqIDs: [][]int32{{0, 1}}}
	if err := c.Decode(shared); err == nil || !strings.Contains(err.Error(), "seq_cp") {
		t.Errorf("a token of two sequences: %v", err)
	}
}

// TestMambaGraph checks the scan and conv nodes and their block.
func TestMambaGraph(t *testing.T) {
	m := mambaSynth().mustModel(t)
	c := newCtx(t, m, true, quant.F32, nil)
	if err := c.Decode(SimpleBatch(archSeqA[:5], 0, 0)); err != nil {
		t.Fatal(err)
	}
	g := c.LastGraph()
	count := map[ops.Op]int{}
	for _, n := range g.Computed() {
		count[n.Op]++
		if n.Op == ops.OpSSMScan || n.Op == ops.OpSSMConv {
			if _, block := g.Scope(n); block != "ssm" {
				t.Errorf("%s is in block %q, want ssm", n.Name, block)
			}
		}
	}
	nl := m.Hparams.NLayer
	for op, want := range map[ops.Op]int{ops.OpSSMScan: nl, ops.OpSSMConv: nl, ops.OpFlashAttnExt: 0, ops.OpRope: 0} {
		if count[op] != want {
			t.Errorf("%d %v nodes, want %d", count[op], op, want)
		}
	}
}

func TestMamba2Hparams(t *testing.T) {
	m := mamba2Synth().mustModel(t)
	h := m.Hparams
	if h.Arch != ArchMamba2 || !h.Recurrent() || h.SSMGroups != 2 || h.SSMDtRank != 4 || h.SSMConvChannels() != 32+2*2*8 {
		t.Fatalf("hparams %+v", h)
	}
	if l := m.Weights.Layers[0]; l.SSMNorm == nil || l.SSMX != nil || l.SSMA.Ne != [4]int64{1, 4, 1, 1} {
		t.Fatalf("layer 0: norm %v, x_proj %v, A %v", l.SSMNorm, l.SSMX, l.SSMA)
	}
}

// TestMamba2MatchesReference: Mamba-2 (heads with a scalar A, B and C in
// groups, the grouped norm) against the float64 reference in every
// decoding mode.
func TestMamba2MatchesReference(t *testing.T) {
	checkDecodeModes(t, mamba2Synth().mustModel(t), tolF32, nil)
}

func TestMamba2LoadErrors(t *testing.T) {
	for _, tc := range []struct {
		keys map[string]any
		want string
	}{
		{map[string]any{"mamba2.ssm.group_count": nil}, "mamba2.ssm.group_count"},
		{map[string]any{"mamba2.ssm.group_count": uint32(3)}, "group_count 3 does not divide"},
		{map[string]any{"mamba2.ssm.time_step_rank": uint32(5)}, "not a multiple of the 5 heads"},
	} {
		s := mamba2Synth()
		s.keys = tc.keys
		if _, err := s.model(t); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.keys, err, tc.want)
		}
	}
	s := mambaSynth()
	s.keys = map[string]any{"mamba.ssm.group_count": uint32(1)}
	if _, err := s.model(t); err == nil || !strings.Contains(err.Error(), `"mamba2"`) {
		t.Errorf("a Mamba-1 file with a group count: %v", err)
	}
}
