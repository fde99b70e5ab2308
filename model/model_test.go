package model

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/model/kvcache"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Tolerances on logits, as the largest |runner - reference| over a row
// divided by the row's largest |reference logit|.
const (
	// tolF32: with an F32 cache the runner differs from the float64
	// reference only by float32 rounding in each op (relative ~6e-8 per
	// operation, compounded over 5 layers of ~64-172 term dot products);
	// measured 2.5e-7 on stories260K, so 1e-5 leaves 40x headroom while
	// still catching any real mistake (a wrong rope pair or mask entry
	// moves logits by 1e-2 or more).
	tolF32 = 1e-5
	// tolF16: an F16 cache rounds every cached K and V element to 11
	// significant bits (relative error up to 4.9e-4), and with f16 K the
	// query is rounded to f16 for the dot product as ggml does. Measured
	// 5e-4 for both attention paths; 2e-3 is 4x that.
	tolF16 = 2e-3
	// tolSame: the same computation reached another way (micro-batches,
	// sequences in one batch, a re-decoded tail) must agree to float32
	// rounding. With the generic CPU tier it is bit-identical; SIMD tiers
	// pick MUL_MAT kernels by batch width (a dot per row for n=1, four-row
	// kernels for n<4, register-tiled GEMM for n>=4), which sum in other
	// orders: measured up to 5.6e-6 (avx2, MUL_MAT attention path); 2e-5
	// is about 4x that, still far below an indexing or masking bug (>1e-2).
	tolSame = 2e-5
)

// onceUponATime returns BOS and the vocabulary ids of "▁Once ▁upon ▁a
// ▁time", looked up in the model's own token list.
func onceUponATime(t *testing.T, m *Model) []int32 {
	t.Helper()
	vocab := vocabOf(t, m)
	ids := []int32{1} // BOS (tokenizer.ggml.bos_token_id)
	if bos, err := m.File().Uint("tokenizer.ggml.bos_token_id"); err == nil {
		ids[0] = int32(bos)
	}
	for _, w := range []string{"▁Once", "▁upon", "▁a", "▁time"} {
		id := -1
		for i, s := range vocab {
			if s == w {
				id = i
				break
			}
		}
		if id < 0 {
			t.Fatalf("vocabulary has no %q", w)
		}
		ids = append(ids, int32(id))
	}
	return ids
}

func vocabOf(t *testing.T, m *Model) []string {
	t.Helper()
	v, err := m.File().Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// storyTail continues onceUponATime: the first 8 greedy tokens of
// stories260K after the prompt (found once with ReferenceForward), so test
// sequences are ones the model finds plausible. Any ids would do.
var storyTail = []int32{432, 383, 286, 261, 376, 298, 315, 421}

func allLogits(b Batch) Batch {
	for i := range b.Logits {
		b.Logits[i] = true
	}
	return b
}

func TestHparamsStories260K(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	want := Hparams{
		Arch: "llama", NVocab: 512, NCtxTrain: 2048, NEmbd: 64, NLayer: 5, NFF: 172, NHead: 8, NHeadKV: 4,
		HeadDimK: 8, HeadDimV: 8, NRot: 8, RMSEps: 1e-5, RopeFreqBase: 10000, RopeFreqScale: 1,
		RopeScaling: RopeScalingNone, RopeNCtxOrig: 2048, RopeExtFactor: 0, RopeAttnFactor: 1, RopeBetaFast: 32, RopeBetaSlow: 1,
	}
	if m.Hparams != want {
		t.Fatalf("hparams\n%+v\nwant\n%+v", m.Hparams, want)
	}
	if m.Weights.Output == m.Weights.TokEmbd {
		t.Error("stories260K has its own output.weight, but it was tied")
	}
}

func TestRunnerMatchesReference(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	toks := append(onceUponATime(t, m), storyTail...)
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flash bool
		kv    quant.Type
		tol   float64
	}{
		{true, quant.F32, tolF32},
		{false, quant.F32, tolF32},
		{true, quant.F16, tolF16},
		{false, quant.F16, tolF16},
	} {
		c := newCtx(t, m, tc.flash, tc.kv, nil)
		if err := c.Decode(allLogits(SimpleBatch(toks, 0, 0))); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range toks {
			e := maxRelErr(c.Logits(i), ref[i])
			worst = math.Max(worst, e)
			if tc.kv == quant.F32 && argmax(c.Logits(i)) != argmax64(ref[i]) {
				t.Errorf("flash=%v %v token %d: argmax %d, reference %d", tc.flash, tc.kv, i, argmax(c.Logits(i)), argmax64(ref[i]))
			}
		}
		t.Logf("flash=%v kv=%v: max relative logit error %.3g (tolerance %g)", tc.flash, tc.kv, worst, tc.tol)
		if tc.kv == quant.F16 && tc.flash {
			// With f16 rounding of q, k and v modelled, flash attention
			// agrees to float32 rounding. (The MUL_MAT path also rounds
			// the softmax weights to f16 for the f16 V product, which
			// this does not model.)
			r16, err := referenceForward(m, toks, refOptions{round: roundRows(t, quant.F16)})
			if err != nil {
				t.Fatal(err)
			}
			w16 := 0.0
			for i := range toks {
				w16 = math.Max(w16, maxRelErr(c.Logits(i), r16[i]))
			}
			t.Logf("flash=%v kv=%v: against the f16-rounded reference %.3g", tc.flash, tc.kv, w16)
			if w16 > tolF32 {
				t.Errorf("flash f16: logits differ from the f16-rounded reference by %.3g", w16)
			}
		}
		if worst > tc.tol {
			t.Errorf("flash=%v kv=%v: logits differ from the reference by %.3g > %g", tc.flash, tc.kv, worst, tc.tol)
		}
	}
}

func argmax64(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestIncrementalDecode decodes the prompt, then one token per Decode, so
// every later token reads keys cached by earlier calls.
func TestIncrementalDecode(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := onceUponATime(t, m)
	toks := append(append([]int32{}, prompt...), storyTail...)
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, nil)
		if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if got := maxRelErr(c.Logits(-1), ref[len(prompt)-1]); got > tolF32 {
			t.Fatalf("flash=%v prompt: error %.3g", flash, got)
		}
		for i := len(prompt); i < len(toks); i++ {
			if err := c.Decode(SimpleBatch(toks[i:i+1], int32(i), 0)); err != nil {
				t.Fatal(err)
			}
			if got := maxRelErr(c.Logits(0), ref[i]); got > tolF32 {
				t.Fatalf("flash=%v token %d: error %.3g", flash, i, got)
			}
		}
		if c.KV().Used() != len(toks) {
			t.Errorf("cache holds %d cells, want %d", c.KV().Used(), len(toks))
		}
	}
}

func TestMicroBatchesMatchOneBatch(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	toks := append(onceUponATime(t, m), storyTail...) // 13 tokens
	for _, flash := range []bool{true, false} {
		one := newCtx(t, m, flash, quant.F16, nil)
		split := newCtx(t, m, flash, quant.F16, func(p *ContextParams) { p.NUBatch = 5 })
		for _, c := range []*Context{one, split} {
			if err := c.Decode(allLogits(SimpleBatch(toks, 0, 0))); err != nil {
				t.Fatal(err)
			}
		}
		worst := 0.0
		for i := range toks {
			worst = math.Max(worst, maxRelErr(split.Logits(i), f64(one.Logits(i))))
		}
		t.Logf("flash=%v: 3 micro-batches vs 1: max relative difference %.3g", flash, worst)
		if worst > tolSame {
			t.Errorf("flash=%v: micro-batched logits differ by %.3g", flash, worst)
		}
		// The last micro-batch had 3 tokens: its graph's token input says so.
		for _, n := range split.LastGraph().Leaves() {
			if n.Name == "inp_tokens" && n.Ne[0] != 3 {
				t.Errorf("last micro-batch has %d tokens, want 3", n.Ne[0])
			}
		}
	}
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestTwoSequencesInOneBatch interleaves two prompts in one batch and
// checks each against decoding it alone, then continues each sequence by
// one token in a shared batch.
func TestTwoSequencesInOneBatch(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	a := append(onceUponATime(t, m), storyTail[:3]...) // 8 tokens
	b := append([]int32{1}, storyTail[2:6]...)         // 5 tokens
	for _, flash := range []bool{true, false} {
		var batch Batch
		ia, ib := 0, 0
		var idxA, idxB []int
		for ia < len(a) || ib < len(b) {
			if ia < len(a) {
				idxA = append(idxA, len(batch.Tokens))
				batch.Tokens, batch.Pos = append(batch.Tokens, a[ia]), append(batch.Pos, int32(ia))
				batch.SeqIDs = append(batch.SeqIDs, []int32{0})
				ia++
			}
			if ib < len(b) {
				idxB = append(idxB, len(batch.Tokens))
				batch.Tokens, batch.Pos = append(batch.Tokens, b[ib]), append(batch.Pos, int32(ib))
				batch.SeqIDs = append(batch.SeqIDs, []int32{1})
				ib++
			}
		}
		batch.Logits = make([]bool, len(batch.Tokens))
		for i := range batch.Logits {
			batch.Logits[i] = true
		}
		both := newCtx(t, m, flash, quant.F16, func(p *ContextParams) { p.NSeqMax = 2; p.NUBatch = 6 })
		if err := both.Decode(batch); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, s := range []struct {
			toks []int32
			idx  []int
		}{{a, idxA}, {b, idxB}} {
			alone := newCtx(t, m, flash, quant.F16, nil)
			if err := alone.Decode(allLogits(SimpleBatch(s.toks, 0, 0))); err != nil {
				t.Fatal(err)
			}
			for i, bi := range s.idx {
				worst = math.Max(worst, maxRelErr(both.Logits(bi), f64(alone.Logits(i))))
			}
		}
		// Continue both in one batch, with positions filled in.
		na := int32(argmax(both.Logits(idxA[len(idxA)-1])))
		nb := int32(argmax(both.Logits(idxB[len(idxB)-1])))
		cont := Batch{Tokens: []int32{na, nb}, SeqIDs: [][]int32{{0}, {1}}, Logits: []bool{true, true}}
		if err := both.Decode(cont); err != nil {
			t.Fatal(err)
		}
		for i, s := range [][]int32{append(append([]int32{}, a...), na), append(append([]int32{}, b...), nb)} {
			ref, err := ReferenceForward(m, s)
			if err != nil {
				t.Fatal(err)
			}
			if e := maxRelErr(both.Logits(i), ref[len(s)-1]); e > tolF16 {
				t.Errorf("flash=%v: continued sequence %d differs from the reference by %.3g", flash, i, e)
			}
		}
		t.Logf("flash=%v: two sequences in one batch vs alone: max relative difference %.3g", flash, worst)
		if worst > tolSame {
			t.Errorf("flash=%v: sequences decoded together differ from alone by %.3g", flash, worst)
		}
	}
}

// TestSharedPrompt decodes a prompt once, shares its cells with a second
// sequence (seq_cp), and continues the two sequences differently in one
// batch.
func TestSharedPrompt(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := onceUponATime(t, m)
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, func(p *ContextParams) { p.NSeqMax = 2 })
		if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := c.KV().SeqCp(0, 1, -1, -1); err != nil {
			t.Fatal(err)
		}
		next := []int32{storyTail[0], storyTail[4]}
		b := Batch{Tokens: next, SeqIDs: [][]int32{{0}, {1}}, Logits: []bool{true, true}}
		if err := c.Decode(b); err != nil {
			t.Fatal(err)
		}
		if c.KV().Used() != len(prompt)+2 {
			t.Errorf("%d cells used, want %d (the prompt is stored once)", c.KV().Used(), len(prompt)+2)
		}
		for i, tok := range next {
			seq := append(append([]int32{}, prompt...), tok)
			ref, err := ReferenceForward(m, seq)
			if err != nil {
				t.Fatal(err)
			}
			if e := maxRelErr(c.Logits(i), ref[len(seq)-1]); e > tolF32 {
				t.Errorf("flash=%v sequence %d: error %.3g against the reference", flash, i, e)
			}
		}
	}
}

// TestSeqRmTailRedecode decodes a sequence, removes its tail from the cache,
// decodes a different tail and compares with a fresh context.
func TestSeqRmTailRedecode(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := onceUponATime(t, m)
	first := append(append([]int32{}, prompt...), storyTail...)
	second := append(append([]int32{}, prompt...), storyTail[4:]...)
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F16, nil)
		if err := c.Decode(SimpleBatch(first, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := c.KV().SeqRm(0, int32(len(prompt)), -1); err != nil {
			t.Fatal(err)
		}
		if c.KV().SeqPosMax(0) != int32(len(prompt)-1) || c.KV().Used() != len(prompt) {
			t.Fatalf("after seq_rm: pos max %d used %d", c.KV().SeqPosMax(0), c.KV().Used())
		}
		tail := second[len(prompt):]
		if err := c.Decode(allLogits(SimpleBatch(tail, int32(len(prompt)), 0))); err != nil {
			t.Fatal(err)
		}
		fresh := newCtx(t, m, flash, quant.F16, nil)
		if err := fresh.Decode(allLogits(SimpleBatch(second, 0, 0))); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range tail {
			worst = math.Max(worst, maxRelErr(c.Logits(i), f64(fresh.Logits(len(prompt)+i))))
		}
		t.Logf("flash=%v: re-decoded tail vs fresh: max relative difference %.3g", flash, worst)
		if worst > tolSame {
			t.Errorf("flash=%v: re-decoded tail differs from a fresh decode by %.3g", flash, worst)
		}
	}
}

// TestSlidingWindow compares a windowed context with the windowed
// reference, in a cache smaller than the sequence (cells that leave the
// window are reused).
func TestSlidingWindow(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	toks := append(onceUponATime(t, m), storyTail...) // 13 tokens
	const window = 4
	ref, err := ReferenceForwardWindow(m, toks, window)
	if err != nil {
		t.Fatal(err)
	}
	full, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	if maxRelErr(f32(full[12]), ref[12]) < 1e-3 {
		t.Fatal("the window does not change the last logits; the test would prove nothing")
	}
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, func(p *ContextParams) {
			p.NCtx, p.NBatch, p.NUBatch, p.NSWA = 8, 8, 4, window
		})
		if err := c.Decode(allLogits(SimpleBatch(toks[:4], 0, 0))); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			if e := maxRelErr(c.Logits(i), ref[i]); e > tolF32 {
				t.Fatalf("flash=%v token %d: error %.3g", flash, i, e)
			}
		}
		for i := 4; i < len(toks); i++ {
			if err := c.Decode(SimpleBatch(toks[i:i+1], int32(i), 0)); err != nil {
				t.Fatalf("flash=%v token %d: %v", flash, i, err)
			}
			if e := maxRelErr(c.Logits(0), ref[i]); e > tolF32 {
				t.Fatalf("flash=%v token %d: error %.3g against the windowed reference", flash, i, e)
			}
		}
	}
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func TestLlama2TinyRandom(t *testing.T) {
	m := loadModel(t, "llama-2-tiny-random.gguf")
	h := m.Hparams
	if h.NVocab != 32000 || h.NEmbd != 8 || h.NLayer != 1 || h.NHead != 2 || h.NFF != 32 || h.NRot != 4 {
		t.Fatalf("hparams %+v", h)
	}
	if m.Weights.TokEmbd.Type != quant.F16 || m.Weights.Layers[0].Wq.Type != quant.F16 {
		t.Fatalf("weights are %v/%v, want f16", m.Weights.TokEmbd.Type, m.Weights.Layers[0].Wq.Type)
	}
	toks := []int32{1, 15043, 3186, 29889}
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	c := newCtx(t, m, true, quant.F16, nil)
	if err := c.Decode(SimpleBatch(toks, 0, 0)); err != nil {
		t.Fatal(err)
	}
	got := c.Logits(-1)
	if len(got) != 32000 {
		t.Fatalf("%d logits", len(got))
	}
	for i, v := range got {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d is %v", i, v)
		}
	}
	// F16 weights: MUL_MAT rounds activations to f16 (as ggml's
	// vec-dot type for f16) on top of the f16 cache; each rounding is
	// at most 4.9e-4 relative. Measured 1.9e-4; 2e-3 as tolF16.
	e := maxRelErr(got, ref[len(toks)-1])
	t.Logf("llama-2-tiny-random: max relative logit error %.3g", e)
	if e > tolF16 {
		t.Errorf("logits differ from the reference by %.3g", e)
	}
}

// TestWideQ8_0Cache runs stories260K-wide (the same function as
// stories260K with head size 32) with a Q8_0 cache, against stories260K's
// reference.
func TestWideQ8_0Cache(t *testing.T) {
	narrow := loadModel(t, "stories260K.gguf")
	wide := loadModel(t, "stories260K-wide.gguf")
	if wide.Hparams.HeadDimK != 32 || wide.Hparams.RopeFreqBase != 1e16 {
		t.Fatalf("wide hparams %+v", wide.Hparams)
	}
	toks := append(onceUponATime(t, narrow), storyTail...)
	ref, err := ReferenceForward(narrow, toks)
	if err != nil {
		t.Fatal(err)
	}
	// The same rounding modelled in the reference: K, V and the query
	// (converted to q8_0 for the K dot product) through q8_0.
	refQ8, err := referenceForward(wide, toks, refOptions{round: roundRows(t, quant.Q8_0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kv   quant.Type
		want [][]float64
		tol  float64
		what string
	}{
		// Same function: F32 agrees to float32 rounding (the padded
		// zeros add nothing; rope angles from base 1e16 over 32 dims
		// equal those from 1e4 over 8 in exact arithmetic). Measured
		// 2e-7.
		{quant.F32, ref, tolF32, "stories260K's reference"},
		// Q8_0 rounds each block of 32 K or V values (one head here) to
		// 8 bits, a step of 1/127 of the block maximum, and the query
		// likewise; in this tiny model that moves logits by up to 3.5%
		// of their largest magnitude (measured), so 0.1 only checks the
		// output is the model's.
		{quant.Q8_0, ref, 0.1, "stories260K's reference"},
		// Against a reference that rounds q, k and v to q8_0 the same
		// way, only float32 rounding remains: measured 2e-7.
		{quant.Q8_0, refQ8, tolF32, "the q8_0-rounded reference"},
	} {
		c := newCtx(t, wide, true, tc.kv, nil)
		if err := c.Decode(allLogits(SimpleBatch(toks, 0, 0))); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range toks {
			worst = math.Max(worst, maxRelErr(c.Logits(i), tc.want[i]))
		}
		t.Logf("wide, kv=%v: max relative error against %s %.3g", tc.kv, tc.what, worst)
		if worst > tc.tol {
			t.Errorf("wide, kv=%v: error against %s %.3g > %g", tc.kv, tc.what, worst, tc.tol)
		}
	}
	// Q8_0 needs flash attention and head sizes that are multiples of 32.
	p := DefaultContextParams()
	p.KVType, p.FlashAttn = quant.Q8_0, false
	if _, err := wide.NewContext(backend(t), p); err == nil || !strings.Contains(err.Error(), "FlashAttn") {
		t.Errorf("q8_0 without flash attention: %v", err)
	}
	p.FlashAttn = true
	if _, err := narrow.NewContext(backend(t), p); err == nil || !strings.Contains(err.Error(), "multiples of 32") {
		t.Errorf("q8_0 with head size 8: %v", err)
	}
}

func TestGreedyGeneration(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	vocab := vocabOf(t, m)
	prompt := onceUponATime(t, m)
	c := newCtx(t, m, true, quant.F16, nil)
	if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var gen []int32
	pos := int32(len(prompt))
	for range 32 {
		next := int32(argmax(c.Logits(-1)))
		gen = append(gen, next)
		if err := c.Decode(SimpleBatch([]int32{next}, pos, 0)); err != nil {
			t.Fatal(err)
		}
		pos++
	}
	var text strings.Builder
	distinct := map[int32]bool{}
	for _, id := range append(prompt[1:], gen...) {
		text.WriteString(strings.ReplaceAll(vocab[id], "▁", " "))
	}
	for _, id := range gen {
		distinct[id] = true
	}
	t.Logf("greedy: %q", text.String())
	if len(distinct) < 8 {
		t.Errorf("32 greedy tokens use only %d distinct ids: %v", len(distinct), gen)
	}
}

func TestGraphAndHook(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	toks := onceUponATime(t, m)
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F16, nil)
		var calls int
		c.SetNodeHook(func(n *ops.Tensor, start, end time.Time) {
			calls++
			if n.Op == ops.OpNone || n.Op.IsView() {
				t.Errorf("hook called for %v", n)
			}
		})
		if err := c.Decode(SimpleBatch(toks, 0, 0)); err != nil {
			t.Fatal(err)
		}
		g := c.LastGraph()
		if g == nil {
			t.Fatal("no graph")
		}
		if calls != len(g.Computed()) {
			t.Errorf("hook called %d times for %d computed nodes", calls, len(g.Computed()))
		}
		count := map[ops.Op]int{}
		for _, n := range g.Computed() {
			count[n.Op]++
		}
		nl := m.Hparams.NLayer
		want := map[ops.Op]int{ops.OpCpy: 2 * nl, ops.OpRope: 2 * nl, ops.OpRMSNorm: 2*nl + 1, ops.OpSwiGLU: nl, ops.OpGetRows: 3}
		if flash {
			want[ops.OpFlashAttnExt], want[ops.OpSoftMax], want[ops.OpMulMat] = nl, 0, 7*nl+1
		} else {
			want[ops.OpFlashAttnExt], want[ops.OpSoftMax], want[ops.OpMulMat] = 0, nl, 9*nl+1
		}
		for op, n := range want {
			if count[op] != n {
				t.Errorf("flash=%v: %d %v nodes, want %d", flash, count[op], op, n)
			}
		}
		// Each attention node comes after both cache stores of its layer.
		for _, n := range g.Nodes() {
			if n.Op != ops.OpCpy {
				continue
			}
			il := n.Name[strings.LastIndexByte(n.Name, '-'):]
			reader := "fattn" + il
			if !flash {
				reader = "kq" + il
				if strings.HasPrefix(n.Name, "v_store") {
					reader = "kqv" + il
				}
			}
			for _, r := range g.Nodes() {
				if r.Name == reader && g.Index(r) < g.Index(n) {
					t.Errorf("%s runs before %s", reader, n.Name)
				}
			}
		}
	}
}

func TestLogitsSelection(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	toks := onceUponATime(t, m)
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	c := newCtx(t, m, true, quant.F32, nil)
	b := SimpleBatch(toks, 0, 0)
	b.Logits = []bool{false, true, false, true, false}
	if err := c.Decode(b); err != nil {
		t.Fatal(err)
	}
	if c.NumOutputs() != 2 {
		t.Fatalf("%d outputs, want 2", c.NumOutputs())
	}
	for i, want := range b.Logits {
		if got := c.Logits(i); (got != nil) != want {
			t.Errorf("Logits(%d) = %v, requested %v", i, got != nil, want)
		} else if want {
			if e := maxRelErr(got, ref[i]); e > tolF32 {
				t.Errorf("token %d: error %.3g", i, e)
			}
		}
	}
	if e := maxRelErr(c.Logits(-1), ref[3]); e > tolF32 {
		t.Errorf("Logits(-1) is not token 3's: error %.3g", e)
	}
	if c.Logits(-3) != nil || c.Logits(5) != nil {
		t.Error("out-of-range Logits not nil")
	}
	// A batch where no token wants logits still fills the cache.
	b2 := SimpleBatch([]int32{toks[1]}, 5, 0)
	b2.Logits = []bool{false}
	if err := c.Decode(b2); err != nil {
		t.Fatal(err)
	}
	if c.NumOutputs() != 0 || c.KV().SeqPosMax(0) != 5 {
		t.Errorf("no-logit batch: %d outputs, pos max %d", c.NumOutputs(), c.KV().SeqPosMax(0))
	}
}

func TestDecodeErrors(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	c := newCtx(t, m, true, quant.F16, func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch, p.NSeqMax = 8, 8, 4, 2 })
	if err := c.Decode(SimpleBatch([]int32{1, 2}, 0, 0)); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		b    Batch
		want string
	}{
		{Batch{}, "empty batch"},
		{Batch{Tokens: make([]int32, 9)}, "exceeds n_batch"},
		{Batch{Tokens: []int32{512}}, "outside the vocabulary"},
		{Batch{Tokens: []int32{-1}}, "outside the vocabulary"},
		{Batch{Tokens: []int32{3}, Pos: []int32{1, 2}}, "2 Pos"},
		{Batch{Tokens: []int32{3}, SeqIDs: [][]int32{{2}}}, "sequence id 2"},
		{Batch{Tokens: []int32{3}, SeqIDs: [][]int32{{}}}, "no sequence"},
		{Batch{Tokens: []int32{3}, SeqIDs: [][]int32{{1, 1}}}, "twice"},
		{Batch{Tokens: []int32{3}, Pos: []int32{1}}, "not after"},
		{Batch{Tokens: []int32{3, 4}, Pos: []int32{3, 3}}, "not after"},
		{Batch{Tokens: []int32{3}, Pos: []int32{-5}, SeqIDs: [][]int32{{1}}}, "negative position"},
		{Batch{Tokens: []int32{3}, Logits: []bool{true, true}}, "2 Logits"},
	}
	for _, tc := range bad {
		if err := c.Decode(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%+v): %v, want %q", tc.b, err, tc.want)
		}
	}
	if c.KV().Used() != 2 {
		t.Fatalf("rejected batches changed the cache: %d used", c.KV().Used())
	}
	// A batch whose second micro-batch finds no room gives back the
	// cells of the first.
	if err := c.Decode(SimpleBatch([]int32{5, 6, 7, 8, 9, 10, 11}, 2, 0)); !errors.Is(err, kvcache.ErrNoSlot) {
		t.Fatalf("overflowing batch: %v", err)
	}
	if c.KV().Used() != 2 || c.KV().SeqPosMax(0) != 1 {
		t.Fatalf("after a failed batch: used %d, pos max %d", c.KV().Used(), c.KV().SeqPosMax(0))
	}
	if c.NumOutputs() != 0 || c.Logits(0) != nil {
		t.Error("a failed batch left logits")
	}
	if err := c.Decode(SimpleBatch([]int32{5, 6}, 2, 0)); err != nil {
		t.Fatalf("decode after a failed batch: %v", err)
	}
}

func TestContextParamErrors(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	for _, tc := range []struct {
		mod  func(*ContextParams)
		want string
	}{
		{func(p *ContextParams) { p.NCtx = -1 }, "n_ctx"},
		{func(p *ContextParams) { p.NUBatch = 1024 }, "exceeds n_batch"},
		{func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch = 16, 64, 32 }, "exceeds n_ctx"},
		{func(p *ContextParams) { p.NSeqMax = 1000 }, "n_seq_max"},
		{func(p *ContextParams) { p.NSWA = -2 }, "n_swa"},
		{func(p *ContextParams) { p.KVType = quant.Q4_K }, "not supported"},
	} {
		p := DefaultContextParams()
		tc.mod(&p)
		if _, err := m.NewContext(backend(t), p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("params %+v: %v, want %q", p, err, tc.want)
		}
	}
	if _, err := m.NewContext(nil, DefaultContextParams()); err == nil {
		t.Error("nil backend accepted")
	}
	// Defaults fill in.
	c, err := m.NewContext(backend(t), ContextParams{KVType: quant.F16})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Params(); p.NCtx != 2048 || p.NBatch != 2048 || p.NUBatch != 512 || p.NSeqMax != 1 {
		t.Errorf("defaults %+v", p)
	}
}

func TestClosedModel(t *testing.T) {
	m, err := Load(testdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.NewContext(backend(t), DefaultContextParams())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Decode(SimpleBatch([]int32{1}, 0, 0)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("decode with a closed model: %v", err)
	}
	if _, err := ReferenceForward(m, []int32{1}); err == nil {
		t.Error("reference forward of a closed model succeeded")
	}
	if err := m.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestSyntheticModel(t *testing.T) {
	s := defaultSynth()
	m, err := s.model(t)
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{3, 17, 5, 39, 0, 22}
	ref, err := ReferenceForward(m, toks)
	if err != nil {
		t.Fatal(err)
	}
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, nil)
		if err := c.Decode(allLogits(SimpleBatch(toks, 0, 0))); err != nil {
			t.Fatal(err)
		}
		for i := range toks {
			if e := maxRelErr(c.Logits(i), ref[i]); e > tolF32 {
				t.Errorf("flash=%v token %d: error %.3g", flash, i, e)
			}
		}
	}
	// Tied output.
	s.tied = true
	mt, err := s.model(t)
	if err != nil {
		t.Fatal(err)
	}
	if mt.Weights.Output != mt.Weights.TokEmbd {
		t.Error("output not tied to token_embd")
	}
}

func TestLoadErrors(t *testing.T) {
	drop := func(k string) synth { s := defaultSynth(); s.keys = map[string]any{k: nil}; return s }
	set := func(k string, v any) synth { s := defaultSynth(); s.keys = map[string]any{k: v}; return s }
	shape := func(n string, ne []int64) synth {
		s := defaultSynth()
		s.shapes = map[string][]int64{n: ne}
		return s
	}
	for _, tc := range []struct {
		s    synth
		want string
	}{
		{drop("llama.embedding_length"), "llama.embedding_length"},
		{drop("llama.block_count"), "llama.block_count"},
		{drop("llama.attention.layer_norm_rms_epsilon"), "llama.attention.layer_norm_rms_epsilon"},
		{drop("general.architecture"), "general.architecture"},
		{set("general.architecture", "gpt2"), `"gpt2"`},
		{set("llama.attention.head_count_kv", uint32(3)), "not a multiple"},
		{set("llama.embedding_length", "wide"), "llama.embedding_length"},
		{set("llama.block_count", uint32(0)), "llama.block_count"},
		{set("llama.rope.dimension_count", uint32(5)), "rope.dimension_count"},
		{set("llama.rope.scaling.type", "longrope"), "longrope"},
		{set("llama.expert_count", uint32(8)), "expert_count"},
		{set("llama.attention.layer_norm_rms_epsilon", math.Inf(1)), "layer_norm_rms_epsilon"},
		{shape("blk.1.attn_k.weight", []int64{16, 12}), "blk.1.attn_k.weight"},
		{shape("blk.0.ffn_down.weight", nil), "blk.0.ffn_down.weight is missing"},
		{shape("token_embd.weight", []int64{17, 40}), "token_embd.weight"},
		{func() synth { s := defaultSynth(); s.extra = []string{"blk.0.attn_q.bias"}; return s }(), "blk.0.attn_q.bias"},
	} {
		_, err := tc.s.model(t)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want an error naming %q", tc.s.keys, tc.s.shapes, err, tc.want)
		}
	}
	if _, err := Load("/nonexistent/model.gguf"); err == nil {
		t.Error("loading a missing file succeeded")
	}
	if _, err := Load(testdata(t, "ggml-vocab-gpt-2.gguf")); err == nil || !strings.Contains(err.Error(), `"gpt2"`) {
		t.Errorf("gpt2 vocab file: %v", err)
	}
	if _, err := Load(testdata(t, "ggml-vocab-llama-spm.gguf")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("tensor-less llama file: %v", err)
	}
}

func TestRopeScalingKeys(t *testing.T) {
	for _, tc := range []struct {
		keys       map[string]any
		kind       string
		scale, ext float32
		nCtxOrig   int
	}{
		{nil, RopeScalingNone, 1, 0, 128},
		{map[string]any{"llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": float32(4)}, RopeScalingLinear, 0.25, 0, 128},
		{map[string]any{"llama.rope.scale_linear": float32(2)}, RopeScalingLinear, 0.5, 0, 128},
		{map[string]any{"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(8), "llama.rope.scaling.original_context_length": uint32(64)}, RopeScalingYaRN, 0.125, 1, 64},
	} {
		s := defaultSynth()
		s.keys = tc.keys
		m, err := s.model(t)
		if err != nil {
			t.Fatal(err)
		}
		h := m.Hparams
		if h.RopeScaling != tc.kind || h.RopeFreqScale != tc.scale || h.RopeExtFactor != tc.ext || h.RopeNCtxOrig != tc.nCtxOrig {
			t.Errorf("%v: scaling %s scale %v ext %v orig %d", tc.keys, h.RopeScaling, h.RopeFreqScale, h.RopeExtFactor, h.RopeNCtxOrig)
		}
		if tc.kind == RopeScalingLinear {
			// The runner applies the scale as the reference does.
			toks := []int32{1, 2, 3, 4, 5, 6, 7}
			ref, err := ReferenceForward(m, toks)
			if err != nil {
				t.Fatal(err)
			}
			c := newCtx(t, m, true, quant.F32, nil)
			if err := c.Decode(SimpleBatch(toks, 0, 0)); err != nil {
				t.Fatal(err)
			}
			if e := maxRelErr(c.Logits(-1), ref[6]); e > tolF32 {
				t.Errorf("%v: error %.3g", tc.keys, e)
			}
		}
	}
}

// FuzzHparams feeds arbitrary numbers to the hyperparameter keys: loading
// must fail cleanly or give a model whose contexts work.
func FuzzHparams(f *testing.F) {
	f.Add(uint32(16), uint32(2), uint32(4), uint32(2), uint32(24), uint32(4), float32(1e-5))
	f.Add(uint32(0), uint32(1), uint32(1), uint32(0), uint32(1), uint32(1), float32(-1))
	f.Add(uint32(1<<31), uint32(1<<30), uint32(7), uint32(3), uint32(5), uint32(9), float32(math.NaN()))
	f.Fuzz(func(t *testing.T, embd, layers, heads, kvHeads, ff, rot uint32, eps float32) {
		s := defaultSynth()
		s.keys = map[string]any{
			"llama.embedding_length":                 embd,
			"llama.block_count":                      layers,
			"llama.attention.head_count":             heads,
			"llama.attention.head_count_kv":          kvHeads,
			"llama.feed_forward_length":              ff,
			"llama.rope.dimension_count":             rot,
			"llama.attention.layer_norm_rms_epsilon": eps,
		}
		f, err := gguf.Parse(s.bytes(t))
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromGGUF(f)
		if err != nil {
			return
		}
		c, err := m.NewContext(backend(t), ContextParams{NCtx: 8, KVType: quant.F32})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Decode(SimpleBatch([]int32{1, 2}, 0, 0)); err != nil {
			t.Fatal(err)
		}
	})
}
