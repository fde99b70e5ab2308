package model

import (
	"math"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// TestContextShift decodes a sequence, moves all its positions by d
// (seq_add), and decodes the next token after the moved ones: its logits
// equal a fresh decode of the whole sequence at the moved positions (the
// reference's), which needs the cached keys re-roped by d. Without the
// re-rope the new query would meet keys d positions off. Covered: llama
// (stories260K) on both attention paths with f32 and f16 caches, a shift
// forward and back, and gpt-oss (NeoX, YaRN, a window of 4).
func TestContextShift(t *testing.T) {
	type model struct {
		name string
		m    *Model
		toks []int32
	}
	st := loadModel(t, "stories260K.gguf")
	models := []model{
		{"stories260K", st, append(onceUponATime(t, st), storyTail...)},
		{"gpt-oss", gptOSSSynth().mustModel(t), archSeqA},
	}
	for _, md := range models {
		n := len(md.toks) - 1
		for _, tc := range []struct {
			p0, d int32
			flash bool
			kv    quant.Type
			tol   float64
		}{
			{0, 37, true, quant.F32, tolF32},
			{0, 37, false, quant.F32, tolF32},
			{100, -100, true, quant.F32, tolF32},
			{0, 37, true, quant.F16, tolF16},
			{0, 37, false, quant.F16, tolF16},
		} {
			c := newCtx(t, md.m, tc.flash, tc.kv, nil)
			if err := c.Decode(SimpleBatch(md.toks[:n], tc.p0, 0)); err != nil {
				t.Fatal(err)
			}
			if err := c.KV().SeqAdd(0, -1, -1, tc.d); err != nil {
				t.Fatal(err)
			}
			p0 := tc.p0 + tc.d
			if got := c.KV().SeqPosMax(0); got != p0+int32(n)-1 {
				t.Fatalf("after seq_add: pos max %d, want %d", got, p0+int32(n)-1)
			}
			if err := c.Decode(SimpleBatch(md.toks[n:], p0+int32(n), 0)); err != nil {
				t.Fatal(err)
			}
			pos := make([]int32, n+1)
			for i := range pos {
				pos[i] = p0 + int32(i)
			}
			ref, err := ReferenceForwardAt(md.m, md.toks, pos)
			if err != nil {
				t.Fatal(err)
			}
			e := maxRelErr(c.Logits(0), ref[n])
			t.Logf("%s flash=%v %v, positions %d.. moved by %d: error %.3g", md.name, tc.flash, tc.kv, tc.p0, tc.d, e)
			if e > tc.tol {
				t.Errorf("%s flash=%v %v: after a shift by %d the logits differ from a fresh decode at the new positions by %.3g > %g",
					md.name, tc.flash, tc.kv, tc.d, e, tc.tol)
			}
		}
	}
}

// interleaved returns a batch of seqs (sequence i is seqs[i]) interleaved
// token by token from position 0, with logits for every token, and the
// batch index of each sequence's tokens.
func interleaved(seqs ...[]int32) (Batch, [][]int) {
	var b Batch
	idx := make([][]int, len(seqs))
	for i := 0; ; i++ {
		any := false
		for s, toks := range seqs {
			if i >= len(toks) {
				continue
			}
			any = true
			idx[s] = append(idx[s], len(b.Tokens))
			b.Tokens = append(b.Tokens, toks[i])
			b.Pos = append(b.Pos, int32(i))
			b.SeqIDs = append(b.SeqIDs, []int32{int32(s)})
			b.Logits = append(b.Logits, true)
		}
		if !any {
			return b, idx
		}
	}
}

// TestNonUnifiedMatchesUnified decodes the same three sequences in one
// batch through a unified cache and a cache with a stream per sequence:
// the logits agree with each other and with the reference, and the
// non-unified cache's attention reads only its stream's cells (n_kv of
// one stream, not of all). Covered: llama (stories260K), Mixtral and
// gpt-oss (whose sliding-window layers have streams too), both attention
// paths, micro-batches of 12 and 7 tokens.
func TestNonUnifiedMatchesUnified(t *testing.T) {
	st := loadModel(t, "stories260K.gguf")
	prompt := onceUponATime(t, st)
	for _, md := range []struct {
		name string
		m    *Model
		seqs [][]int32
	}{
		{"stories260K", st, [][]int32{append(append([]int32{}, prompt...), storyTail...), append([]int32{1}, storyTail[2:6]...), prompt}},
		{"mixtral", mixtralSynth().mustModel(t), [][]int32{archSeqA, archSeqB, archSeqA[3:9]}},
		{"gpt-oss", gptOSSSynth().mustModel(t), [][]int32{archSeqA, archSeqB, archSeqA[3:9]}},
	} {
		batch, idx := interleaved(md.seqs...)
		var refs [][][]float64
		for _, s := range md.seqs {
			r, err := ReferenceForward(md.m, s)
			if err != nil {
				t.Fatal(err)
			}
			refs = append(refs, r)
		}
		for _, flash := range []bool{true, false} {
			for _, ub := range []int{12, 7} {
				uni := newCtx(t, md.m, flash, quant.F32, func(p *ContextParams) { p.NCtx, p.NSeqMax, p.NUBatch = 96, 3, ub })
				non := newCtx(t, md.m, flash, quant.F32, func(p *ContextParams) { p.NCtx, p.NSeqMax, p.NUBatch, p.NonUnified = 96, 3, ub, true })
				for _, c := range []*Context{uni, non} {
					if err := c.Decode(batch); err != nil {
						t.Fatalf("%s flash=%v: %v", md.name, flash, err)
					}
				}
				same, worst := 0.0, 0.0
				for s := range md.seqs {
					for i, bi := range idx[s] {
						same = math.Max(same, maxRelErr(non.Logits(bi), f64(uni.Logits(bi))))
						worst = math.Max(worst, maxRelErr(non.Logits(bi), refs[s][i]))
					}
				}
				t.Logf("%s flash=%v ubatch %d: non-unified vs unified %.3g, vs reference %.3g", md.name, flash, ub, same, worst)
				if same > tolSame || worst > tolF32 {
					t.Errorf("%s flash=%v ubatch %d: non-unified logits differ from unified by %.3g, from the reference by %.3g", md.name, flash, ub, same, worst)
				}
				// One more token for each sequence: the non-unified
				// graph's attention reads each stream's cells apart
				// (dimension 3 of its K view), the unified one's every
				// cell of its one stream.
				next := Batch{Tokens: []int32{5, 6, 7}, SeqIDs: [][]int32{{0}, {1}, {2}}, Logits: []bool{true, true, true}}
				for _, c := range []*Context{uni, non} {
					if err := c.Decode(next); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 3 {
					if e := maxRelErr(non.Logits(i), f64(uni.Logits(i))); e > tolSame {
						t.Errorf("%s: next token of sequence %d: non-unified differs from unified by %.3g", md.name, i, e)
					}
				}
				for c, want := range map[*Context]int64{uni: 1, non: int64(len(md.seqs))} {
					for _, n := range c.LastGraph().Nodes() {
						if n.Name == "k-0" && (n.Ne[1] != 32 || n.Ne[3] != want) {
							t.Errorf("%s: K view %v, want 32 cells in %d streams", md.name, n.Ne, want)
						}
					}
				}
			}
		}
	}
}

// TestNonUnifiedSeqCp copies a whole sequence to another stream, then
// continues both apart; copying part of one across streams is refused.
func TestNonUnifiedSeqCp(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	prompt := onceUponATime(t, m)
	for _, flash := range []bool{true, false} {
		c := newCtx(t, m, flash, quant.F32, func(p *ContextParams) { p.NSeqMax, p.NonUnified = 2, true })
		if err := c.Decode(SimpleBatch(prompt, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := c.KV().SeqCp(0, 1, 2, -1); err == nil || !strings.Contains(err.Error(), "whole sequences") {
			t.Errorf("partial copy across streams: %v", err)
		}
		if err := c.KV().SeqCp(0, 1, -1, -1); err != nil {
			t.Fatal(err)
		}
		if c.KV().Used() != 2*len(prompt) || c.KV().SeqPosMax(1) != int32(len(prompt)-1) {
			t.Fatalf("after the copy: used %d, seq 1 pos max %d", c.KV().Used(), c.KV().SeqPosMax(1))
		}
		next := []int32{storyTail[0], storyTail[4]}
		if err := c.Decode(Batch{Tokens: next, SeqIDs: [][]int32{{0}, {1}}, Logits: []bool{true, true}}); err != nil {
			t.Fatal(err)
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
		// A token of two sequences cannot go to two streams.
		if err := c.Decode(Batch{Tokens: []int32{5}, SeqIDs: [][]int32{{0, 1}}}); err == nil || !strings.Contains(err.Error(), "seq_cp") {
			t.Errorf("a token of two sequences: %v", err)
		}
	}
}

// TestDefrag decodes three interleaved sequences, removes the middle one
// and the tail of the first, defragments, and continues the others: the
// cells in use move to the front (attention reads fewer), and the logits
// equal the reference's. Covered: K and V rows (flash), V transposed
// (MUL_MAT path) with an f16 cache, and a q8_0 cache (stories260K-wide).
func TestDefrag(t *testing.T) {
	narrow := loadModel(t, "stories260K.gguf")
	wide := loadModel(t, "stories260K-wide.gguf")
	prompt := onceUponATime(t, narrow)
	a := append(append([]int32{}, prompt...), storyTail[:6]...) // 11
	b := append([]int32{1}, storyTail...)                       // 9
	cseq := append([]int32{1}, storyTail[3:8]...)               // 6
	for _, tc := range []struct {
		m     *Model
		flash bool
		kv    quant.Type
		tol   float64
	}{
		{narrow, true, quant.F32, tolF32},
		{narrow, false, quant.F32, tolF32},
		{narrow, false, quant.F16, tolF16},
		{wide, true, quant.Q8_0, 0.1},
	} {
		c := newCtx(t, tc.m, tc.flash, tc.kv, func(p *ContextParams) { p.NCtx, p.NSeqMax = 64, 3 })
		batch, _ := interleaved(a, b, cseq)
		if err := c.Decode(batch); err != nil {
			t.Fatal(err)
		}
		kv := c.KV()
		if err := kv.SeqRm(1, -1, -1); err != nil {
			t.Fatal(err)
		}
		if err := kv.SeqRm(0, 8, -1); err != nil {
			t.Fatal(err)
		}
		used := kv.Used()
		if err := kv.Defrag(); err != nil {
			t.Fatal(err)
		}
		cache := c.kv.stores[0].cells[0]
		for i := range cache.Size() {
			if p, _ := cache.Cell(i); (i < used) != (p >= 0) {
				t.Fatalf("after defrag cell %d is at %d with %d used", i, p, used)
			}
		}
		next := Batch{Tokens: []int32{a[8], storyTail[7]}, Pos: []int32{8, int32(len(cseq))}, SeqIDs: [][]int32{{0}, {2}}, Logits: []bool{true, true}}
		if err := c.Decode(next); err != nil {
			t.Fatal(err)
		}
		for i, seq := range [][]int32{a[:9], append(append([]int32{}, cseq...), storyTail[7])} {
			ref, err := ReferenceForward(narrow, seq)
			if err != nil {
				t.Fatal(err)
			}
			e := maxRelErr(c.Logits(i), ref[len(seq)-1])
			t.Logf("flash=%v %v: sequence %d after defrag: error %.3g", tc.flash, tc.kv, 2*i, e)
			if e > tc.tol {
				t.Errorf("flash=%v %v: sequence %d after defrag differs from the reference by %.3g", tc.flash, tc.kv, 2*i, e)
			}
		}
	}
}
