package model

import (
	"slices"
	"testing"
)

type fakeCache map[int32]int32

func (f fakeCache) SeqPosMax(s int32) int32 {
	if p, ok := f[s]; ok {
		return p
	}
	return -1
}

func TestPrepareDefaults(t *testing.T) {
	cache := fakeCache{0: 4, 1: 9}
	b := Batch{Tokens: []int32{7, 8, 9, 10}, SeqIDs: [][]int32{{0}, {1}, {0}, {2}}}
	p, err := prepare(b, 16, 3, 8, cache)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{5, 10, 6, 0}; !slices.Equal(p.pos, want) {
		t.Errorf("filled positions %v, want %v", p.pos, want)
	}
	if want := []bool{false, false, false, true}; !slices.Equal(p.logits, want) {
		t.Errorf("default logits %v, want %v", p.logits, want)
	}
	p, err = prepare(Batch{Tokens: []int32{1, 2, 3}}, 16, 1, 8, fakeCache{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.pos, []int32{0, 1, 2}) || len(p.seqs) != 3 || p.seqs[2][0] != 0 {
		t.Errorf("defaults: pos %v seqs %v", p.pos, p.seqs)
	}
}

func TestSplit(t *testing.T) {
	b := SimpleBatch([]int32{1, 2, 3, 4, 5, 6, 7}, 0, 0)
	b.Logits = []bool{true, false, false, true, true, false, true}
	p, err := prepare(b, 16, 1, 8, fakeCache{})
	if err != nil {
		t.Fatal(err)
	}
	us := p.split(3)
	if len(us) != 3 {
		t.Fatalf("%d micro-batches, want 3", len(us))
	}
	wantOut := [][]int32{{0}, {0, 1}, {0}}
	for i, u := range us {
		if u.start != 3*i || !slices.Equal(u.out, wantOut[i]) {
			t.Errorf("micro-batch %d: start %d out %v, want %d %v", i, u.start, u.out, 3*i, wantOut[i])
		}
	}
	if len(us[2].tokens) != 1 || us[2].pos[0] != 6 {
		t.Errorf("last micro-batch %v", us[2])
	}
}

// FuzzPrepare checks that any batch is either rejected or prepared into
// strictly increasing positions per sequence, after the cache's.
func FuzzPrepare(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{0, 1, 2}, []byte{0, 0, 1}, true, false)
	f.Add([]byte{200, 2}, []byte{}, []byte{3, 3}, false, true)
	f.Fuzz(func(t *testing.T, toks, pos, seqs []byte, withPos, withSeqs bool) {
		cache := fakeCache{0: 2, 2: 0}
		var b Batch
		for _, x := range toks {
			b.Tokens = append(b.Tokens, int32(x)-8)
		}
		if withPos {
			for _, x := range pos {
				b.Pos = append(b.Pos, int32(int8(x)))
			}
		}
		if withSeqs {
			for _, x := range seqs {
				ids := []int32{int32(x % 5)}
				if x >= 128 {
					ids = append(ids, int32(x/5%5))
				}
				b.SeqIDs = append(b.SeqIDs, ids)
			}
		}
		p, err := prepare(b, 100, 4, 16, cache)
		if err != nil {
			return
		}
		last := map[int32]int32{0: 2, 2: 0}
		for i := range p.tokens {
			if p.tokens[i] < 0 || p.tokens[i] >= 100 {
				t.Fatalf("token %d accepted", p.tokens[i])
			}
			for _, s := range p.seqs[i] {
				if s < 0 || s >= 4 {
					t.Fatalf("sequence %d accepted", s)
				}
				if l, ok := last[s]; ok && p.pos[i] <= l {
					t.Fatalf("sequence %d goes from %d to %d", s, l, p.pos[i])
				}
				last[s] = p.pos[i]
			}
		}
		n := 0
		for _, u := range p.split(3) {
			n += len(u.tokens)
		}
		if n != len(p.tokens) || len(p.logits) != n {
			t.Fatalf("split covers %d of %d tokens", n, len(p.tokens))
		}
	})
}
