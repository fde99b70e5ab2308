package model

import (
	"fmt"

	"github.com/kernbench/kernbench/model/kvcache"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Memory is what a context keeps of the tokens it has decoded, by
// sequence: the KV cache of an attention model (one or two caches, the
// second for sliding-window layers, each unified or with a stream per
// sequence) or the recurrent states of a Mamba model. Its methods follow
// llama.cpp's llama_memory_seq_* functions; positions p0, p1 bound a
// half-open range [p0, p1), a negative p0 meaning 0 and a negative p1 no
// upper bound, and a negative seq every sequence where allowed.
type Memory interface {
	// Clear forgets every sequence.
	Clear()
	// SeqRm removes sequence seq's tokens at positions [p0, p1). A
	// recurrent state can only lose all of a sequence: other ranges are
	// an error.
	SeqRm(seq, p0, p1 int32) error
	// SeqCp makes sequence dst share (KV cache) or copy (recurrent
	// states, another stream) src's tokens at [p0, p1).
	SeqCp(src, dst, p0, p1 int32) error
	// SeqKeep removes every sequence but seq.
	SeqKeep(seq int32) error
	// SeqAdd moves the positions of seq's tokens in [p0, p1) by delta
	// (a context shift); the cached keys are re-roped to their new
	// positions before the next micro-batch is computed.
	SeqAdd(seq, p0, p1, delta int32) error
	// SeqDiv divides the positions of seq's tokens in [p0, p1) by d.
	SeqDiv(seq, p0, p1, d int32) error
	// SeqPosMin and SeqPosMax return the smallest and largest position
	// the memory holds for seq, or -1.
	SeqPosMin(seq int32) int32
	SeqPosMax(seq int32) int32
	// Used returns the number of cells in use (tokens cached, or
	// sequences with a state), Size the number of cells.
	Used() int
	Size() int
	// Defrag compacts the cells in use to the front of each cache
	// stream, moving their rows in the cache tensors, so that attention
	// reads fewer cells and later micro-batches find contiguous room.
	Defrag() error
}

// bufCopy copies n bytes from byte src to byte dst of t's storage, through
// the host (the backends' buffers read and write at offsets).
func bufCopy(t *ops.Tensor, dst, src, n int64, tmp []byte) ([]byte, error) {
	buf, off := t.Storage()
	if int64(cap(tmp)) < n {
		tmp = make([]byte, n)
	}
	tmp = tmp[:n]
	if _, err := buf.ReadAt(tmp, off+src); err != nil {
		return tmp, err
	}
	_, err := buf.WriteAt(tmp, off+dst)
	return tmp, err
}

// bufZero writes n zero bytes at byte at of t's storage.
func bufZero(t *ops.Tensor, at, n int64) error {
	buf, off := t.Storage()
	_, err := buf.WriteAt(make([]byte, n), off+at)
	return err
}

// kvMemory is an attention model's KV cache: one store for the layers
// that attend to the whole context and, for models with sliding-window
// layers, a smaller one for those. Each store has one stream (unified:
// every sequence's cells in one set, masked apart) or one per sequence
// (each sequence's cells apart, so attention reads only its own).
type kvMemory struct {
	stores  []*kvStore
	layer   []int // model layer -> store
	nStream int
	tmp     []byte
}

// kvStore is one KV cache: cells per stream and the K/V tensors of the
// layers that use it.
type kvStore struct {
	swa   bool
	size  int              // cells per stream
	cells []*kvcache.Cache // per stream
	// k and v per model layer (nil for another store's layers): K is
	// [n_embd_k_gqa, size*n_stream], V likewise or, when vTrans,
	// [size*n_stream, n_embd_v_gqa]; stream s holds cells
	// [s*size, (s+1)*size).
	k, v   []*ops.Tensor
	vTrans bool

	// The current micro-batch's placement: per group (stream), the
	// stream's cells of its tokens, and the cells attention reads.
	where [][]int
	nKV   int
}

// streamOf returns the stream of sequence seq.
func (m *kvMemory) streamOf(seq int32) int {
	if m.nStream == 1 {
		return 0
	}
	return int(seq)
}

// streams returns the streams a sequence argument names: every stream
// for seq < 0, else seq's.
func (m *kvMemory) streams(seq int32) ([]int, error) {
	if seq < 0 {
		s := make([]int, m.nStream)
		for i := range s {
			s[i] = i
		}
		return s, nil
	}
	if m.nStream > 1 && int(seq) >= m.nStream {
		return nil, fmt.Errorf("model: sequence id %d outside [0, %d)", seq, m.nStream)
	}
	return []int{m.streamOf(seq)}, nil
}

// each calls f on the cells of every store for the streams of seq.
func (m *kvMemory) each(seq int32, f func(st *kvStore, s int, c *kvcache.Cache) error) error {
	ss, err := m.streams(seq)
	if err != nil {
		return err
	}
	for _, st := range m.stores {
		for _, s := range ss {
			if err := f(st, s, st.cells[s]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *kvMemory) Clear() {
	for _, st := range m.stores {
		for _, c := range st.cells {
			c.Clear()
		}
	}
}

func (m *kvMemory) SeqRm(seq, p0, p1 int32) error {
	return m.each(seq, func(_ *kvStore, _ int, c *kvcache.Cache) error { return c.SeqRm(seq, p0, p1) })
}

func (m *kvMemory) SeqAdd(seq, p0, p1, delta int32) error {
	return m.each(seq, func(_ *kvStore, _ int, c *kvcache.Cache) error { return c.SeqAdd(seq, p0, p1, delta) })
}

func (m *kvMemory) SeqDiv(seq, p0, p1, d int32) error {
	return m.each(seq, func(_ *kvStore, _ int, c *kvcache.Cache) error { return c.SeqDiv(seq, p0, p1, d) })
}

// SeqCp shares src's cells with dst within a stream. Across streams
// (a cache with a stream per sequence) only whole sequences are copied,
// as llama.cpp does: dst's stream becomes a copy of src's, cells and
// cached rows.
func (m *kvMemory) SeqCp(src, dst, p0, p1 int32) error {
	ss, err := m.streams(src)
	if err != nil {
		return err
	}
	ds, err := m.streams(dst)
	if err != nil {
		return err
	}
	if src < 0 || dst < 0 {
		return fmt.Errorf("model: seq_cp of sequence %d to %d: ids must be >= 0", src, dst)
	}
	if ss[0] == ds[0] {
		return m.each(src, func(_ *kvStore, _ int, c *kvcache.Cache) error { return c.SeqCp(src, dst, p0, p1) })
	}
	if p0 > 0 || p1 >= 0 {
		return fmt.Errorf("model: seq_cp of positions [%d, %d) from sequence %d to %d: across the streams of a non-unified cache only whole sequences are copied", p0, p1, src, dst)
	}
	for _, st := range m.stores {
		if err := st.copyStream(ss[0], ds[0], src, dst, &m.tmp); err != nil {
			return err
		}
	}
	return nil
}

func (m *kvMemory) SeqKeep(seq int32) error {
	if m.nStream == 1 {
		return m.each(seq, func(_ *kvStore, _ int, c *kvcache.Cache) error { return c.SeqKeep(seq) })
	}
	if _, err := m.streams(seq); err != nil {
		return err
	}
	for _, st := range m.stores {
		for s, c := range st.cells {
			if s != int(seq) {
				c.Clear()
			}
		}
	}
	return nil
}

// SeqPosMin returns the smallest position every store still holds (the
// sliding-window store forgets the oldest first).
func (m *kvMemory) SeqPosMin(seq int32) int32 {
	ss, err := m.streams(seq)
	if err != nil || seq < 0 {
		return -1
	}
	p := int32(-1)
	for _, st := range m.stores {
		q := st.cells[ss[0]].SeqPosMin(seq)
		if q < 0 {
			return -1
		}
		p = max(p, q)
	}
	return p
}

func (m *kvMemory) SeqPosMax(seq int32) int32 {
	if seq < 0 || (m.nStream > 1 && int(seq) >= m.nStream) {
		return -1
	}
	return m.stores[0].cells[m.streamOf(seq)].SeqPosMax(seq)
}

func (m *kvMemory) Used() int {
	n := 0
	for _, c := range m.stores[0].cells {
		n += c.Used()
	}
	return n
}

func (m *kvMemory) Size() int { return m.stores[0].size * m.nStream }

func (m *kvMemory) Defrag() error {
	for _, st := range m.stores {
		for s, c := range st.cells {
			if err := st.move(s, c.Defrag(), &m.tmp); err != nil {
				return fmt.Errorf("model: defragmenting the KV cache: %w", err)
			}
		}
	}
	return nil
}

// move applies defragmentation moves to stream s's rows in every layer's
// tensors.
func (st *kvStore) move(s int, moves []kvcache.Move, tmp *[]byte) error {
	if len(moves) == 0 {
		return nil
	}
	base := int64(s * st.size)
	for il := range st.k {
		if st.k[il] == nil {
			continue
		}
		for _, t := range []*ops.Tensor{st.k[il], st.v[il]} {
			vt := t == st.v[il] && st.vTrans
			for _, mv := range moves {
				var err error
				if !vt {
					row := t.Nb[1]
					*tmp, err = bufCopy(t, (base+int64(mv.To))*row, (base+int64(mv.From))*row, int64(mv.N)*row, *tmp)
				} else {
					es := t.Nb[0]
					for j := range t.Ne[1] {
						if *tmp, err = bufCopy(t, j*t.Nb[1]+(base+int64(mv.To))*es, j*t.Nb[1]+(base+int64(mv.From))*es, int64(mv.N)*es, *tmp); err != nil {
							break
						}
					}
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// copyStream makes stream dst a copy of stream src (sequence srcSeq
// relabelled dstSeq): the cells and every layer's rows.
func (st *kvStore) copyStream(src, dst int, srcSeq, dstSeq int32, tmp *[]byte) error {
	c := st.cells[dst]
	c.Clear()
	from := st.cells[src]
	for i := range from.Size() {
		pos, seqs := from.Cell(i)
		if pos < 0 {
			continue
		}
		for _, q := range seqs {
			if q == srcSeq {
				if _, err := c.ApplyCells([]int{i}, []int32{pos}, [][]int32{{dstSeq}}); err != nil {
					return err
				}
			}
		}
	}
	for il := range st.k {
		if st.k[il] == nil {
			continue
		}
		for _, t := range []*ops.Tensor{st.k[il], st.v[il]} {
			var err error
			if t == st.v[il] && st.vTrans {
				es := t.Nb[0]
				n := int64(st.size) * es
				for j := range t.Ne[1] {
					if *tmp, err = bufCopy(t, j*t.Nb[1]+int64(dst)*n, j*t.Nb[1]+int64(src)*n, n, *tmp); err != nil {
						return err
					}
				}
				continue
			}
			n := int64(st.size) * t.Nb[1]
			if *tmp, err = bufCopy(t, int64(dst)*n, int64(src)*n, n, *tmp); err != nil {
				return err
			}
		}
	}
	return nil
}

// newKVMemory allocates the KV cache of an attention model on b.
func newKVMemory(h Hparams, p ContextParams, b ops.Backend) (*kvMemory, error) {
	nStream := 1
	if p.NonUnified {
		nStream = p.NSeqMax
	}
	if p.NCtx%nStream != 0 {
		return nil, fmt.Errorf("model: n_ctx %d is not a multiple of the %d streams of a non-unified cache", p.NCtx, nStream)
	}
	size := p.NCtx / nStream
	m := &kvMemory{nStream: nStream, layer: make([]int, h.NLayer)}
	full := &kvStore{size: size, vTrans: !p.FlashAttn, k: make([]*ops.Tensor, h.NLayer), v: make([]*ops.Tensor, h.NLayer)}
	m.stores = append(m.stores, full)
	window := p.NSWA
	if h.NSWA > 0 {
		// A store for the sliding-window layers: the window of each
		// sequence and a micro-batch, as llama.cpp sizes it, padded.
		perStream := h.NSWA
		if nStream == 1 {
			perStream *= p.NSeqMax
		}
		n := min(size, (perStream+p.NUBatch+kvPad-1)/kvPad*kvPad)
		swa := &kvStore{swa: true, size: n, vTrans: !p.FlashAttn, k: make([]*ops.Tensor, h.NLayer), v: make([]*ops.Tensor, h.NLayer)}
		m.stores = append(m.stores, swa)
		window = 0
	}
	for _, st := range m.stores {
		w := window
		if st.swa {
			w = h.NSWA
		}
		for range nStream {
			c, err := kvcache.New(st.size, p.NSeqMax, w)
			if err != nil {
				return nil, fmt.Errorf("model: %w", err)
			}
			st.cells = append(st.cells, c)
		}
	}
	rowK, err := p.KVType.RowSize(int64(h.NEmbdKGQA()))
	if err != nil {
		return nil, fmt.Errorf("model: K cache rows: %w", err)
	}
	rowV, err := p.KVType.RowSize(int64(h.NEmbdVGQA()))
	if err != nil {
		return nil, fmt.Errorf("model: V cache rows: %w", err)
	}
	total := 0.0
	for il := range h.NLayer {
		si := 0
		if h.LayerSWA(il) {
			si = 1
		}
		m.layer[il] = si
		total += float64(m.stores[si].size*nStream) * float64(rowK+rowV)
	}
	if total > maxCacheBytes {
		return nil, fmt.Errorf("model: a KV cache of %d cells would take %.0f bytes (limit %d)", p.NCtx, total, int64(maxCacheBytes))
	}
	for il := range h.NLayer {
		st := m.stores[m.layer[il]]
		cells := int64(st.size * nStream)
		k, err := ops.NewTensor(fmt.Sprintf("cache_k_l%d", il), p.KVType, int64(h.NEmbdKGQA()), cells)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		vne := []int64{int64(h.NEmbdVGQA()), cells}
		if st.vTrans {
			vne[0], vne[1] = vne[1], vne[0]
		}
		v, err := ops.NewTensor(fmt.Sprintf("cache_v_l%d", il), p.KVType, vne...)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		for _, t := range []*ops.Tensor{k, v} {
			if err := ops.AllocTensor(b, t, 0); err != nil {
				return nil, fmt.Errorf("model: allocating %s: %w", t.Name, err)
			}
		}
		st.k[il], st.v[il] = k, v
	}
	return m, nil
}

// rsMemory is a recurrent model's memory: per layer, the conv and SSM
// states of each sequence (cell s is sequence s), and their bookkeeping.
type rsMemory struct {
	states *kvcache.States
	// conv[il] is f32 [(d_conv-1)*channels, n_seq]: the last d_conv-1
	// inputs of each conv channel (d_inner, or Mamba-2's x, B and C);
	// ssm[il] is f32 [d_state*d_inner, n_seq].
	conv, ssm []*ops.Tensor
	tmp       []byte
}

func newRSMemory(h Hparams, p ContextParams, b ops.Backend) (*rsMemory, error) {
	st, err := kvcache.NewStates(p.NSeqMax)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m := &rsMemory{states: st}
	n := int64(p.NSeqMax)
	convRow := int64(h.SSMConv-1) * int64(h.SSMConvChannels())
	ssmRow := int64(h.SSMState) * int64(h.SSMInner)
	if total := float64(h.NLayer) * float64(n) * float64(convRow+ssmRow) * 4; total > maxCacheBytes {
		return nil, fmt.Errorf("model: recurrent states of %d sequences would take %.0f bytes (limit %d)", n, total, int64(maxCacheBytes))
	}
	for il := range h.NLayer {
		// A kernel of one tap keeps no past inputs: a row of one
		// (unused) element keeps the tensor valid.
		c, err := ops.NewTensor(fmt.Sprintf("cache_conv_l%d", il), quant.F32, max(convRow, 1), n)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		s, err := ops.NewTensor(fmt.Sprintf("cache_ssm_l%d", il), quant.F32, ssmRow, n)
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		for _, t := range []*ops.Tensor{c, s} {
			if err := ops.AllocTensor(b, t, 0); err != nil {
				return nil, fmt.Errorf("model: allocating %s: %w", t.Name, err)
			}
		}
		m.conv, m.ssm = append(m.conv, c), append(m.ssm, s)
	}
	return m, nil
}

func (m *rsMemory) Clear()                                { m.states.Clear() }
func (m *rsMemory) SeqRm(seq, p0, p1 int32) error         { return m.states.SeqRm(seq, p0, p1) }
func (m *rsMemory) SeqKeep(seq int32) error               { return m.states.SeqKeep(seq) }
func (m *rsMemory) SeqAdd(seq, p0, p1, delta int32) error { return m.states.SeqAdd(seq, p0, p1, delta) }
func (m *rsMemory) SeqDiv(seq, p0, p1, d int32) error     { return m.states.SeqDiv(seq, p0, p1, d) }
func (m *rsMemory) SeqPosMin(seq int32) int32             { return m.states.SeqPosMin(seq) }
func (m *rsMemory) SeqPosMax(seq int32) int32             { return m.states.SeqPosMax(seq) }
func (m *rsMemory) Used() int                             { return m.states.Used() }
func (m *rsMemory) Size() int                             { return m.states.Size() }

// Defrag does nothing: a sequence's state is always its own cell.
func (m *rsMemory) Defrag() error { return nil }

// SeqCp copies sequence src's states to dst, every layer's.
func (m *rsMemory) SeqCp(src, dst, p0, p1 int32) error {
	copied, err := m.states.SeqCp(src, dst, p0, p1)
	if err != nil || !copied {
		return err
	}
	for il := range m.conv {
		for _, t := range []*ops.Tensor{m.conv[il], m.ssm[il]} {
			row := t.Nb[1]
			if m.tmp, err = bufCopy(t, int64(dst)*row, int64(src)*row, row, m.tmp); err != nil {
				return fmt.Errorf("model: copying the state of sequence %d to %d: %w", src, dst, err)
			}
		}
	}
	return nil
}

// zero clears sequence seq's states in every layer, before a sequence
// starts from nothing.
func (m *rsMemory) zero(seq int32) error {
	for il := range m.conv {
		for _, t := range []*ops.Tensor{m.conv[il], m.ssm[il]} {
			if err := bufZero(t, int64(seq)*t.Nb[1], t.Nb[1]); err != nil {
				return fmt.Errorf("model: clearing the state of sequence %d: %w", seq, err)
			}
		}
	}
	return nil
}
