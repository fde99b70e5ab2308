package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomLogits returns n logits spread over about spread nats.
func randomLogits(rng *rand.Rand, n int, spread float64) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(rng.NormFloat64() * spread / 4)
	}
	return l
}

func TestQuantizeLogProbs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		logits []float32
	}{
		{"narrow", randomLogits(rng, 512, 4)},
		{"wide", randomLogits(rng, 512, 200)}, // many tokens below the floor
		{"flat", make([]float32, 16)},
		{"two", []float32{0, -100}},
	} {
		l := tc.logits
		lse, am := logSumExp(l)
		target := len(l) - 1
		var r kldRecord
		quantizeLogProbs(&r, l, lse, am, target)
		if int(r.Argmax) != am || float64(r.TargetLP) != float64(float32(float64(l[target])-lse)) {
			t.Errorf("%s: argmax %d target lp %v, want %d and the exact value", tc.name, r.Argmax, r.TargetLP, am)
		}
		maxLP := float64(l[am]) - lse
		for i, v := range l {
			lp := float64(v) - lse
			got, ok := r.LogProb(i)
			switch {
			case lp < maxLP-kldRange-1e-3:
				if ok {
					t.Errorf("%s: token %d at %v nats below the top is kept", tc.name, i, maxLP-lp)
				}
			case lp > maxLP-kldRange+1e-3:
				if !ok {
					t.Errorf("%s: token %d at %v nats below the top is dropped", tc.name, i, maxLP-lp)
				} else if math.Abs(got-lp) > float64(r.Scale)/2+1e-6*math.Abs(lp) {
					t.Errorf("%s: token %d: %v, want %v within %v", tc.name, i, got, lp, r.Scale/2)
				}
			}
		}
		// Through the file encoding and back.
		var buf bytes.Buffer
		scratch := make([]byte, kldRecordHead+2*len(l))
		if err := writeRecord(&buf, scratch, &r); err != nil {
			t.Fatal(err)
		}
		var back kldRecord
		if err := readRecord(&buf, scratch, len(l), &back); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if back.Scale != r.Scale || back.Lo != r.Lo || back.TargetLP != r.TargetLP || back.Argmax != r.Argmax || !equalCodes(back.Codes, r.Codes) {
			t.Errorf("%s: the record does not survive the file", tc.name)
		}
	}
}

func equalCodes(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// exactKL computes KL(softmax(p) || softmax(q)) in float64.
func exactKL(p, q []float32) float64 {
	lp, _ := logSumExp(p)
	lq, _ := logSumExp(q)
	var s float64
	for i := range p {
		a := float64(p[i]) - lp
		s += math.Exp(a) * (a - (float64(q[i]) - lq))
	}
	return s
}

func TestKLDivergence(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		p := randomLogits(rng, 512, 12)
		lse, am := logSumExp(p)
		var r kldRecord
		quantizeLogProbs(&r, p, lse, am, 0)
		// The same distribution: 0 up to the second-order quantization
		// error.
		if k := klDivergence(&r, p, lse); k < -1e-9 || k > 1e-7 {
			t.Errorf("trial %d: KL of a distribution with itself %v", trial, k)
		}
		// A perturbed one: the exact KL within the quantization error.
		// To first order the error is sum_i P_i (e_i - mean e) d_i with
		// |e_i - mean e| <= scale and d_i = log P_i - log Q_i, so it is
		// at most scale * sum_i P_i |d_i|.
		q := make([]float32, len(p))
		for i := range q {
			q[i] = p[i] + float32(rng.NormFloat64()*0.3)
		}
		lq, _ := logSumExp(q)
		var bound float64
		for i := range p {
			a := float64(p[i]) - lse
			bound += math.Exp(a) * math.Abs(a-(float64(q[i])-lq))
		}
		bound = float64(r.Scale)*bound + 1e-7
		got, want := klDivergence(&r, q, lq), exactKL(p, q)
		if math.Abs(got-want) > bound {
			t.Errorf("trial %d: KL %v, exact %v, differ by more than %v", trial, got, want, bound)
		}
	}
}

func TestParseKLDHeader(t *testing.T) {
	good := kldHeader{NVocab: 512, NCtx: 64, NChunks: 3, First: 32, VocabHash: 99}
	enc := func(h kldHeader, edit func(b []byte)) []byte {
		var buf bytes.Buffer
		h.write(&buf)
		b := buf.Bytes()
		if edit != nil {
			edit(b)
		}
		return b
	}
	size, err := good.fileSize()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(40 + 3*64*4 + 3*31*(16+1024)); size != want {
		t.Fatalf("fileSize %d, want %d", size, want)
	}
	h, err := parseKLDHeader(enc(good, nil), size)
	if err != nil || h != good {
		t.Fatalf("round trip: %+v, %v", h, err)
	}
	put := func(off int, v uint32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[off:], v) }
	}
	for _, tc := range []struct {
		name string
		b    []byte
		size int64
		msg  string
	}{
		{"short", enc(good, nil)[:20], size, "shorter than"},
		{"magic", enc(good, func(b []byte) { b[0] = 'X' }), size, "magic"},
		{"version", enc(good, put(8, 7)), size, "version 7"},
		{"vocab", enc(good, put(12, 1)), size, "n_vocab 1"},
		{"huge vocab", enc(good, put(12, 1<<30)), size, "n_vocab"},
		{"ctx", enc(good, put(16, 0)), size, "n_ctx 0"},
		{"chunks", enc(good, put(20, 0)), size, "n_chunks is 0"},
		{"first", enc(good, put(24, 5)), size, "first scored position 5"},
		{"reserved", enc(good, put(28, 1)), size, "reserved"},
		{"size", enc(good, nil), size - 1, "truncated or corrupt"},
		{"overflow", enc(good, func(b []byte) {
			binary.LittleEndian.PutUint32(b[12:], maxKLDVocab)
			binary.LittleEndian.PutUint32(b[16:], maxKLDCtx)
			binary.LittleEndian.PutUint32(b[20:], math.MaxUint32)
			binary.LittleEndian.PutUint32(b[24:], maxKLDCtx/2)
		}), size, "overflow"},
	} {
		if _, err := parseKLDHeader(tc.b, tc.size); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.msg)
		}
	}
}

// FuzzKLDFile reads arbitrary bytes as a KLD base file (either format)
// for a 4-token vocabulary: it must return an error or records, never panic, and never
// allocate more than the input's size for the tokens.
func FuzzKLDFile(f *testing.F) {
	var seed bytes.Buffer
	h := kldHeader{NVocab: 4, NCtx: 4, NChunks: 1, First: 2, VocabHash: vocabHash([]string{"a", "b", "c", "d"})}
	h.write(&seed)
	binary.Write(&seed, binary.LittleEndian, []int32{1, 2, 3, 0})
	var r kldRecord
	quantizeLogProbs(&r, []float32{1, 2, 3, -40}, 3.5, 2, 0)
	writeRecord(&seed, make([]byte, h.recordSize()), &r)
	f.Add(seed.Bytes())
	f.Add([]byte(kldMagic))
	f.Add([]byte{})
	// A llama-perplexity file of the same run.
	var lseed bytes.Buffer
	lh := kldHeader{NVocab: 4, NCtx: 4, NChunks: 1, First: 2, Llama: true}
	writeLlamaHeader(&lseed, lh)
	binary.Write(&lseed, binary.LittleEndian, []int32{1, 2, 3, 0})
	llamaLogProbs(&r, []float32{1, 2, 3, -40})
	writeLlamaRecord(&lseed, make([]byte, lh.recordSize()), &r)
	f.Add(lseed.Bytes())
	f.Add([]byte(llamaMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		kb, err := readKLDStart(bytes.NewReader(b), int64(len(b)), 4, h.VocabHash)
		if err != nil {
			return
		}
		if 4*len(kb.tokens) > len(b) {
			t.Fatalf("%d tokens from %d bytes", len(kb.tokens), len(b))
		}
		buf := make([]byte, kb.h.recordSize())
		var rec kldRecord
		n := 0
		for {
			err := kb.readRecord(buf, n%4, &rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				if err == io.ErrUnexpectedEOF {
					t.Fatal("a file of the right size ended early")
				}
				return
			}
			for i := range 4 {
				if lp, ok := rec.LogProb(i); ok && math.IsNaN(lp) {
					t.Fatal("NaN log-probability from a checked record")
				}
			}
			n++
		}
		if n != kb.h.NChunks*kb.h.scored() {
			t.Fatalf("%d records, header says %d", n, kb.h.NChunks*kb.h.scored())
		}
	})
}

func TestStats(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct{ f, want float64 }{
		{0, 1}, {1, 5}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}, {0.99, 4.96}, {-1, 1}, {2, 5},
	} {
		if got := percentile(sorted, tc.f); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("percentile(%v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	if median(sorted) != 3 || median([]float64{1, 2, 3, 10}) != 2.5 {
		t.Error("median")
	}
	// meanUnc: mean and the standard error of the mean, 0 for n <= 10.
	vals := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	var s, s2 float64
	for _, v := range vals {
		s += v
		s2 += v * v
	}
	m, u := meanUnc(s, s2, len(vals))
	// Population variance of 1..12 is (144-1)/12; the error is
	// sqrt(var/(n-1)).
	if m != 6.5 || math.Abs(u-math.Sqrt(143.0/12/11)) > 1e-12 {
		t.Errorf("meanUnc = %v, %v", m, u)
	}
	if _, u := meanUnc(6, 14, 3); u != 0 {
		t.Errorf("meanUnc with 3 values gives error %v, want 0", u)
	}
	// pplStats: exp of the mean NLL, error propagated through exp.
	var p pplStats
	for _, v := range vals {
		p.add(v / 10)
	}
	ppl, unc, ok := p.estimate()
	if !ok || math.Abs(ppl-math.Exp(0.65)) > 1e-12 || math.Abs(unc-ppl*math.Sqrt(143.0/12/11)/10) > 1e-12 {
		t.Errorf("estimate = %v ± %v (%v)", ppl, unc, ok)
	}
	var flat pplStats
	flat.add(1)
	flat.add(1)
	if _, _, ok := flat.estimate(); ok {
		t.Error("an estimate from NLLs without spread")
	}
	// logSumExp is exact for equal logits and picks the first maximum.
	if lse, am := logSumExp([]float32{2, 5, 5, 1}); am != 1 || math.Abs(lse-(5+math.Log(2+math.Exp(-3)+math.Exp(-4)))) > 1e-12 {
		t.Errorf("logSumExp = %v, %d", lse, am)
	}
}

func TestKLDStats(t *testing.T) {
	var s kldStats
	// Q agrees with the base on 3 of 4 positions.
	s.add(1.0, 1.0, 0, true)
	s.add(2.0, 1.5, 0.2, false)
	s.add(0.5, 0.5, 0.0, true)
	s.add(1.5, 1.0, 0.1, true)
	if p, u := s.sameTopP(); p != 0.75 || math.Abs(u-math.Sqrt(0.75*0.25/3)) > 1e-12 {
		t.Errorf("sameTopP = %v ± %v", p, u)
	}
	if r, _ := s.lnRatio(); math.Abs(r-(5.0-4.0)/4) > 1e-12 {
		t.Errorf("lnRatio = %v, want 0.25", r)
	}
	var out bytes.Buffer
	s.report(&out)
	for _, want := range []string{"Same top p: 75.000", "Mean    KLD:   0.075000", "Maximum KLD:   0.200000", "Minimum KLD:   0.000000", "only 4 positions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReporterHold(t *testing.T) {
	var out bytes.Buffer
	// A reporter whose stdout shares a terminal with a live bar holds the
	// running line back until the bar is done.
	r := &reporter{stdout: &out, hold: true}
	r.running("[1]2.0,")
	r.running("[2]3.0,")
	if out.Len() != 0 {
		t.Fatalf("held output written early: %q", out.String())
	}
	r.finish()
	r.line("Final")
	if out.String() != "[1]2.0,[2]3.0,\nFinal\n" {
		t.Errorf("output %q", out.String())
	}
	// Without a bar it writes at once.
	out.Reset()
	r = &reporter{stdout: &out}
	r.running("[1]2.0,")
	if out.String() != "[1]2.0," {
		t.Errorf("output %q", out.String())
	}
	r.finish()
	if out.String() != "[1]2.0,\n" {
		t.Errorf("output %q", out.String())
	}
}
