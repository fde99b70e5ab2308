package tokenizer

import "math"

// bigram is a candidate merge of the adjacent symbols left (the low 32
// bits of key) and right, size bytes long together. key orders the merges:
// the smallest key is merged first. Its high 32 bits hold the priority
// (see spmKey and bpeKey), its low 32 bits the left index, so that ties go
// to the leftmost pair, as in llama.cpp.
type bigram struct {
	key   uint64
	right int32
	size  int32
}

func (b bigram) left() int32 { return int32(uint32(b.key)) }

// spmKey is the key of an SPM bigram: higher score first.
func spmKey(score float32, left int32) uint64 {
	if score == 0 {
		score = 0 // -0 and +0 compare equal as floats, so key them alike
	}
	u := math.Float32bits(score)
	if u&(1<<31) != 0 {
		u = ^u
	} else {
		u |= 1 << 31
	}
	// u now increases with the score; invert it so that the highest
	// score has the smallest key.
	return uint64(^u)<<32 | uint64(uint32(left))
}

// bpeKey is the key of a BPE bigram: lower rank first.
func bpeKey(rank, left int32) uint64 {
	return uint64(uint32(rank))<<32 | uint64(uint32(left))
}

// mergeQueue is a 4-ary min-heap of bigrams by key. The merge loops use it
// so that each merge costs O(log n) rather than a rescan of the text; four
// children per node keep each level's comparisons in one cache line.
type mergeQueue struct {
	a []bigram
}

func (q *mergeQueue) len() int { return len(q.a) }

func (q *mergeQueue) reset() { q.a = q.a[:0] }

func (q *mergeQueue) push(x bigram) {
	q.a = append(q.a, x)
	a := q.a
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 4
		if a[p].key <= x.key {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = x
}

func (q *mergeQueue) pop() bigram {
	a := q.a
	top := a[0]
	last := len(a) - 1
	x := a[last]
	a = a[:last]
	q.a = a
	if last == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= last {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < last; j++ {
			if a[j].key < a[m].key {
				m = j
			}
		}
		if a[m].key >= x.key {
			break
		}
		a[i] = a[m]
		i = m
	}
	a[i] = x
	return top
}
