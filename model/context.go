package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/model/kvcache"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// ContextParams configure a Context. Start from DefaultContextParams: the
// zero value selects an F32 cache and the MUL_MAT attention path.
type ContextParams struct {
	// NCtx is the number of KV cache cells (tokens over all sequences).
	// 0 means the model's training context, at most 4096.
	NCtx int
	// NBatch is the most tokens one Decode takes (0: NCtx).
	NBatch int
	// NUBatch is the most tokens one graph computes (0: min(NBatch,
	// 512)); larger batches are split into micro-batches.
	NUBatch int
	// KVType is the element type of the K and V cache: quant.F16
	// (llama.cpp's default), quant.F32 or quant.Q8_0, for both K and V.
	// Q8_0 needs head sizes that are multiples of 32 and FlashAttn.
	// Recurrent models keep their states in f32 whatever it says.
	KVType quant.Type
	// FlashAttn selects FLASH_ATTN_EXT (true) or MUL_MAT + SOFT_MAX +
	// MUL_MAT (false) for attention. The MUL_MAT path stores V
	// transposed in the cache, as llama.cpp does, so that the second
	// MUL_MAT reads packed rows.
	FlashAttn bool
	// NSeqMax is the number of sequences (ids 0..NSeqMax-1), 0 meaning 1.
	NSeqMax int
	// NSWA > 0 limits attention to a sliding window, in every layer of a
	// model that has no sliding-window layers of its own (gpt-oss's
	// window is the model's): a token at position p sees keys at
	// positions above p - NSWA. When the cache is full,
	// cells that have left the window of all their sequences are reused,
	// so a sequence can run longer than NCtx; rolling such a sequence
	// back (KV().SeqRm) past the window afterwards is not supported.
	NSWA int
	// NonUnified gives each sequence a cache stream of its own (llama.cpp's
	// kv_unified = false): NCtx/NSeqMax cells per sequence, so that a
	// token's attention reads only its sequence's cells instead of every
	// cell masked. Batches are then split by sequence (each micro-batch
	// takes as many tokens of each of a run of consecutive sequences), a
	// token belongs to one sequence, and seq_cp between sequences copies
	// whole sequences. Recurrent models (Mamba) ignore it: their states
	// are per sequence anyway.
	NonUnified bool
	// Fallback, when set, computes the nodes the context's backend does
	// not support, with the copies between the two that graphs.Scheduler
	// inserts; the weights, inputs and cache stay in the backend's memory.
	Fallback ops.Backend
	// Sched tunes the memory plan of each micro-batch's graph (for
	// example graphs.Options{NoReuse: true}, to check the plan).
	Sched graphs.Options
}

// DefaultContextParams returns llama.cpp's defaults at a small context: 512
// cells, an F16 cache and flash attention.
func DefaultContextParams() ContextParams {
	return ContextParams{NCtx: 512, NBatch: 512, NUBatch: 512, KVType: quant.F16, FlashAttn: true, NSeqMax: 1}
}

// Padding of the attention's view of the cache (n_kv is a multiple of it)
// and of the mask's rows, as llama.cpp's KV padding and GGML_KQ_MASK_PAD.
const (
	kvPad   = 32
	maskPad = 64
)

// maxCacheBytes bounds the KV cache a context allocates.
const maxCacheBytes = 1 << 40

// A Context decodes batches with one model on one backend and keeps their
// memory (KV cache or recurrent states) and logits. It is not safe for
// concurrent use.
type Context struct {
	m     *Model
	b     ops.Backend
	p     ContextParams
	mem   Memory
	kv    *kvMemory // attention models
	rs    *rsMemory // recurrent models
	sched *graphs.Scheduler

	hook graphs.NodeHook
	rec  graphs.Recorder
	last *graphs.Graph
	// stepwise runs every graph stepwise (FindNonFinite).
	stepwise bool

	logits []float32 // n_outputs x n_vocab, in batch order
	outRow []int     // batch index -> output row, -1 for none
	nOut   int

	// reuse is the last micro-batch's graph, computed again for the next
	// micro-batch of the same shape (reuseKey: tokens, outputs, groups,
	// streams, each store's n_kv and runs of cells; see graphKey) with
	// its inputs rewritten and its cache views moved to the new cells,
	// as llama.cpp reuses graphs between decoded tokens. Building and
	// planning a graph costs more than computing a small model's.
	reuse    *ubatchGraph
	reuseKey []int64
	keyBuf   []int64
	// undo holds what gives back the cells or states of the batch being
	// decoded, should a micro-batch fail; its records' memory is kept.
	undo []undo
	// Batch splitting's memory, kept: the micro-batches, their token
	// indices and output rows, and the last position per sequence.
	ubs     []ubatch
	idxBuf  []int
	outIdx  []int32
	lastPos map[int32]int32
	// Scratch for inputs and logits, kept so that a decoded token
	// allocates nothing.
	inBuf   []byte
	maskBuf []float32
	outBuf  []byte
}

// NewContext returns a context that runs m on b. The weights must be in
// memory b computes from (host memory for the CPU backend).
func (m *Model) NewContext(b ops.Backend, p ContextParams) (*Context, error) {
	if b == nil {
		return nil, fmt.Errorf("model: NewContext with a nil backend")
	}
	if m.closed.Load() {
		return nil, errClosed
	}
	h := m.Hparams
	if p.NCtx == 0 {
		p.NCtx = min(h.NCtxTrain, 4096)
	}
	if p.NBatch == 0 {
		p.NBatch = p.NCtx
	}
	if p.NUBatch == 0 {
		p.NUBatch = min(p.NBatch, 512)
	}
	if p.NSeqMax == 0 {
		p.NSeqMax = 1
	}
	switch {
	case p.NCtx < 0 || p.NCtx > maxDim:
		return nil, fmt.Errorf("model: n_ctx %d is outside [1, %d]", p.NCtx, maxDim)
	case p.NBatch < 0 || p.NUBatch < 0:
		return nil, fmt.Errorf("model: negative n_batch %d or n_ubatch %d", p.NBatch, p.NUBatch)
	case p.NUBatch > p.NBatch:
		return nil, fmt.Errorf("model: n_ubatch %d exceeds n_batch %d", p.NUBatch, p.NBatch)
	case p.NUBatch > p.NCtx && !h.Recurrent():
		return nil, fmt.Errorf("model: n_ubatch %d exceeds n_ctx %d (a micro-batch must fit in the cache)", p.NUBatch, p.NCtx)
	case p.NSeqMax < 0 || p.NSeqMax > kvcache.MaxSeq:
		return nil, fmt.Errorf("model: n_seq_max %d is outside [1, %d]", p.NSeqMax, kvcache.MaxSeq)
	case p.NSWA < 0:
		return nil, fmt.Errorf("model: n_swa %d is negative", p.NSWA)
	case p.NSWA > 0 && h.NSWA > 0:
		return nil, fmt.Errorf("model: n_swa %d for a %s model, which has sliding-window layers of its own (window %d)", p.NSWA, h.Arch, h.NSWA)
	case p.NSWA > 0 && h.Recurrent():
		return nil, fmt.Errorf("model: n_swa %d for a recurrent %s model, which has no attention", p.NSWA, h.Arch)
	}
	if !h.Recurrent() {
		switch p.KVType {
		case quant.F32, quant.F16:
		case quant.Q8_0:
			bs := int(quant.Q8_0.BlockSize())
			if h.HeadDimK%bs != 0 || h.HeadDimV%bs != 0 {
				return nil, fmt.Errorf("model: a %v KV cache needs head sizes that are multiples of %d; this model's are %d (K) and %d (V)", p.KVType, bs, h.HeadDimK, h.HeadDimV)
			}
			if !p.FlashAttn {
				return nil, fmt.Errorf("model: a %v KV cache needs FlashAttn: the MUL_MAT path stores V transposed, which a block type cannot be", p.KVType)
			}
		default:
			return nil, fmt.Errorf("model: KV cache type %v is not supported (f32, f16, q8_0)", p.KVType)
		}
	}
	backends := []ops.Backend{b}
	if p.Fallback != nil && p.Fallback != b {
		backends = append(backends, p.Fallback)
	}
	sched, err := graphs.NewScheduler(p.Sched, backends...)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c := &Context{m: m, b: b, p: p, sched: sched, lastPos: map[int32]int32{}}
	if h.Recurrent() {
		if c.rs, err = newRSMemory(h, p, b); err != nil {
			return nil, err
		}
		c.mem = c.rs
	} else {
		if c.kv, err = newKVMemory(h, p, b); err != nil {
			return nil, err
		}
		c.mem = c.kv
	}
	return c, nil
}

// Params returns the context's parameters with defaults filled in.
func (c *Context) Params() ContextParams { return c.p }

// Model returns the context's model.
func (c *Context) Model() *Model { return c.m }

// KV returns the context's memory (KV cache or recurrent states), for
// removing, copying, keeping and shifting sequences (SeqRm, SeqCp,
// SeqKeep, SeqAdd, SeqDiv), defragmenting and clearing. Removing cells of
// a KV cache needs no change to its tensors: the mask hides empty cells.
func (c *Context) KV() Memory { return c.mem }

// SetNodeHook sets a function called after each node of every graph the
// context computes (nil: none), for per-node timing.
func (c *Context) SetNodeHook(h graphs.NodeHook) { c.hook = h }

// SetRecorder sets a function that receives the execution record of each
// step (node or copy between backends) of every graph the context
// computes (nil: none). Records carry each node's layer and block
// ("input", "attn", "ffn", "output").
func (c *Context) SetRecorder(r graphs.Recorder) { c.rec = r }

// SetStepwise makes the graphs of later decodes run stepwise
// (graphs.Graph.Stepwise): each node alone, its record made once the
// device is done with it. It is for inspecting a run (a profiler's counters
// per node), not for timing one.
func (c *Context) SetStepwise(on bool) { c.stepwise = on }

// LastGraph returns the graph of the last micro-batch computed (nil before
// the first); its Plan tells where each node ran and what memory the plan
// took. The memory plan reuses the bytes of intermediates, so only its
// outputs (the logits, and the stores into the cache) keep their data,
// until the next Decode.
func (c *Context) LastGraph() *graphs.Graph { return c.last }

// NumOutputs returns how many tokens of the last batch have logits.
func (c *Context) NumOutputs() int { return c.nOut }

// Logits returns the logits (n_vocab values) of token i of the last batch
// decoded, or nil when that token asked for none. A negative i counts
// from the end of the tokens that have logits (-1: the last of them), as
// llama_get_logits_ith. The slice is the context's own and is overwritten
// by the next Decode.
func (c *Context) Logits(i int) []float32 {
	row := -1
	switch {
	case i < 0 && -i <= c.nOut:
		row = c.nOut + i
	case i >= 0 && i < len(c.outRow):
		row = c.outRow[i]
	}
	if row < 0 {
		return nil
	}
	nv := c.m.Hparams.NVocab
	return c.logits[row*nv : (row+1)*nv : (row+1)*nv]
}

// Close releases the context's cache. The context cannot be used after.
func (c *Context) Close() error {
	c.last, c.logits, c.outRow, c.nOut = nil, nil, nil, 0
	c.reuse, c.reuseKey = nil, nil
	c.mem, c.kv, c.rs = nil, nil, nil
	return nil
}

// Decode runs a batch: it checks and completes the batch (see Batch),
// splits it into micro-batches of at most NUBatch tokens, and for each
// finds cache cells, stores them, builds the graph and computes it. The
// logits of the tokens that asked for them are then available from
// Logits. When a micro-batch fails, the cells of the whole batch are
// given back and the error returned.
func (c *Context) Decode(b Batch) error { return c.DecodeContext(context.Background(), b) }

// DecodeContext is Decode, stopping between nodes when ctx is done.
func (c *Context) DecodeContext(ctx context.Context, b Batch) error {
	if c.mem == nil {
		return fmt.Errorf("model: Decode on a closed context")
	}
	if c.m.closed.Load() {
		return errClosed
	}
	h := c.m.Hparams
	p, err := prepareWith(b, h.NVocab, c.p.NSeqMax, c.p.NBatch, c.mem, c.lastPos)
	if err != nil {
		return err
	}
	var us []ubatch
	switch {
	case c.rs != nil:
		us, err = p.splitEqual(c.p.NUBatch, c.p.NUBatch, false)
	case c.kv.nStream > 1:
		us, err = p.splitEqual(c.p.NUBatch, c.kv.stores[0].size, true)
	default:
		c.ubs, c.idxBuf, c.outIdx = p.splitTo(c.p.NUBatch, c.ubs, c.idxBuf, c.outIdx)
		us = c.ubs
	}
	if err != nil {
		return err
	}
	if c.kv != nil {
		if err := c.applyShifts(ctx); err != nil {
			return err
		}
	}
	c.nOut = 0
	c.outRow = c.outRow[:0]
	for _, l := range p.logits {
		r := -1
		if l {
			r = c.nOut
			c.nOut++
		}
		c.outRow = append(c.outRow, r)
	}
	if need := c.nOut * h.NVocab; cap(c.logits) < need {
		c.logits = make([]float32, need)
	} else {
		c.logits = c.logits[:need]
	}
	c.undo = c.undo[:0]
	for _, u := range us {
		err := c.runUbatch(ctx, u)
		if err != nil {
			for i := len(c.undo) - 1; i >= 0; i-- {
				c.undo[i].restore()
			}
			c.nOut = 0
			c.outRow = c.outRow[:0]
			if u.start >= 0 {
				return fmt.Errorf("model: micro-batch of tokens [%d, %d): %w", u.start, u.start+len(u.tokens), err)
			}
			return fmt.Errorf("model: micro-batch of %d tokens of sequences %v: %w", len(u.tokens), u.groupSeq, err)
		}
	}
	return nil
}

// An undo gives back what placing a micro-batch took: a KV cache's cells
// (cache and sv), or a recurrent state's positions (fn).
type undo struct {
	cache *kvcache.Cache
	sv    kvcache.Saved
	fn    func()
}

func (u *undo) restore() {
	if u.fn != nil {
		u.fn()
		return
	}
	u.cache.Restore(u.sv)
}

// pushUndo returns a cleared undo record at the end of c.undo, reusing
// the memory of one an earlier batch left there.
func (c *Context) pushUndo() *undo {
	if len(c.undo) < cap(c.undo) {
		c.undo = c.undo[:len(c.undo)+1]
	} else {
		c.undo = append(c.undo, undo{})
	}
	r := &c.undo[len(c.undo)-1]
	r.cache, r.fn = nil, nil
	return r
}

// place finds cells for u in every store (KV cache) or advances its
// sequences' states (recurrent), adding to c.undo what gives them back.
func (c *Context) place(u ubatch) error {
	gl := u.groupLen()
	if c.rs != nil {
		for g, seq := range u.groupSeq {
			first, last := c.rs.states.StateOf(seq)
			if last < 0 {
				if err := c.rs.zero(seq); err != nil {
					return err
				}
			}
			if err := c.rs.states.Advance(seq, u.pos[g*gl], u.pos[(g+1)*gl-1]); err != nil {
				return err
			}
			c.pushUndo().fn = func() { c.rs.states.RestoreState(seq, first, last) }
		}
		return nil
	}
	for _, st := range c.kv.stores {
		st.nKV = 0
		for len(st.where) < u.groups {
			st.where = append(st.where, nil)
		}
		st.where = st.where[:u.groups]
		for g := range u.groups {
			cache := st.cells[c.streamOfGroup(u, g)]
			cells, err := cache.AppendCells(st.where[g][:0], gl)
			if err != nil {
				return err
			}
			st.where[g] = cells
			r := c.pushUndo()
			if err := cache.ApplyCellsTo(&r.sv, cells, u.pos[g*gl:(g+1)*gl], u.seqs[g*gl:(g+1)*gl]); err != nil {
				c.undo = c.undo[:len(c.undo)-1]
				return err
			}
			r.cache = cache
		}
		for g := range u.groups {
			st.nKV = max(st.nKV, st.cells[c.streamOfGroup(u, g)].NKV(kvPad))
		}
	}
	return nil
}

// runUbatch places u in the memory, builds its graph (or reuses the last
// one, when it has the same shape) and computes it, and copies its logits
// to their rows of c.logits.
func (c *Context) runUbatch(ctx context.Context, u ubatch) error {
	if err := c.place(u); err != nil {
		return err
	}
	c.keyBuf = c.graphKey(c.keyBuf[:0], u)
	ug := c.reuse
	var reused *ubatchGraph
	if ug != nil && slices.Equal(c.keyBuf, c.reuseKey) {
		c.moveCellViews(ug)
		reused = ug
	} else {
		c.reuse = nil
		var err error
		if ug, err = c.build(u); err != nil {
			return err
		}
		if err := c.allocInputs(ug); err != nil {
			return err
		}
		c.reuse, c.reuseKey = ug, append(c.reuseKey[:0], c.keyBuf...)
	}
	if err := c.setInputs(ug, u, ug != reused); err != nil {
		return err
	}
	ug.g.Hook, ug.g.Recorder, ug.g.Stepwise = c.hook, c.rec, c.stepwise
	c.last = ug.g
	if err := c.sched.Compute(ctx, ug.g); err != nil {
		return err
	}
	if ug.logits == nil {
		return nil
	}
	nv := c.m.Hparams.NVocab
	n := 4 * nv * len(u.out)
	if cap(c.outBuf) < n {
		c.outBuf = make([]byte, n)
	}
	raw := c.outBuf[:n]
	buf, off := ug.logits.Storage()
	if _, err := buf.ReadAt(raw, off); err != nil {
		return fmt.Errorf("reading logits: %w", err)
	}
	for k, o := range u.out {
		row := c.outRow[u.idx[o]]
		dst := c.logits[row*nv : (row+1)*nv]
		src := raw[4*k*nv:]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	}
	return nil
}

// graphKey appends to dst everything the shape of u's graph depends on:
// the counts of tokens, outputs and groups, each group's stream (KV
// cache) or sequence (recurrent states, whose cells the graph's views
// name), and per KV store its n_kv and the lengths of each group's runs
// of consecutive cells (a CPY per run). Two micro-batches with equal keys
// have graphs that differ only in their inputs and in where their cache
// views start.
func (c *Context) graphKey(dst []int64, u ubatch) []int64 {
	dst = append(dst, int64(len(u.tokens)), int64(len(u.out)), int64(u.groups))
	if c.rs != nil {
		for _, s := range u.groupSeq {
			dst = append(dst, int64(s))
		}
		return dst
	}
	for g := range u.groups {
		dst = append(dst, int64(c.streamOfGroup(u, g)))
	}
	for _, st := range c.kv.stores {
		dst = append(dst, -1, int64(st.nKV))
		for _, cells := range st.where {
			dst = append(dst, -2)
			n := 0
			for i, cell := range cells {
				if i > 0 && cell != cells[i-1]+1 {
					dst = append(dst, int64(n))
					n = 0
				}
				n++
			}
			dst = append(dst, int64(n))
		}
	}
	return dst
}

// moveCellViews points a reused graph's cache views at the cells place
// found for the new micro-batch.
func (c *Context) moveCellViews(ug *ubatchGraph) {
	for _, v := range ug.cellViews {
		cells := c.kv.stores[v.si].where[v.g]
		r, start := 0, cells[0]
		for i := 1; i < len(cells) && r < v.r; i++ {
			if cells[i] != cells[i-1]+1 {
				r++
				start = cells[i]
			}
		}
		v.t.Offset = (v.stream + int64(start)) * v.stride
	}
}

// allocInputs gives a new graph's input tensors (and a recurrent
// model's scratch leaves) their memory.
func (c *Context) allocInputs(ug *ubatchGraph) error {
	ins := []*ops.Tensor{ug.tokens, ug.outIDs, ug.pos, ug.seqIDs}
	ins = append(ins, ug.masks...)
	ins = append(ins, ug.scratch...)
	for _, t := range ins {
		if t == nil {
			continue
		}
		if err := ops.AllocTensor(c.b, t, 0); err != nil {
			return fmt.Errorf("allocating input %s: %w", t.Name, err)
		}
	}
	return nil
}

// setInputs writes the micro-batch's inputs: tokens, output rows,
// positions and masks (attention models) or state cells (recurrent
// models), through scratch the context keeps. fresh says the graph is new,
// so that its masks' padding rows are written too.
func (c *Context) setInputs(ug *ubatchGraph, u ubatch, fresh bool) error {
	scratch := func(n int) []byte {
		if cap(c.inBuf) < n {
			c.inBuf = make([]byte, n)
		}
		return c.inBuf[:n]
	}
	write := func(t *ops.Tensor, raw []byte) error {
		if _, err := t.Buffer.WriteAt(raw, t.Offset); err != nil {
			return fmt.Errorf("writing input %s: %w", t.Name, err)
		}
		return nil
	}
	i32 := func(t *ops.Tensor, v []int32) error {
		raw := scratch(4 * len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
		}
		return write(t, raw)
	}
	if err := i32(ug.tokens, u.tokens); err != nil {
		return err
	}
	if ug.outIDs != nil {
		if err := i32(ug.outIDs, u.out); err != nil {
			return err
		}
	}
	if c.rs != nil {
		return i32(ug.seqIDs, u.groupSeq)
	}
	if err := i32(ug.pos, u.pos); err != nil {
		return err
	}
	// A reused graph's mask rows past the tokens (padding) still hold the
	// -Inf they were given when the graph was new: only the tokens' rows
	// are written again.
	gl := u.groupLen()
	for si, st := range c.kv.stores {
		mask := ug.masks[si]
		nKV, rows := int(mask.Ne[0]), int(mask.Ne[1])
		live := gl
		if fresh {
			live = rows
		}
		if cap(c.maskBuf) < live*nKV {
			c.maskBuf = make([]float32, live*nKV)
		}
		m := c.maskBuf[:live*nKV]
		es := int(mask.Type.TypeSize())
		for g := range u.groups {
			cache := st.cells[c.streamOfGroup(u, g)]
			if err := cache.Mask(m, nKV, live, u.pos[g*gl:(g+1)*gl], u.seqs[g*gl:(g+1)*gl]); err != nil {
				return err
			}
			raw := scratch(es * len(m))
			if mask.Type == quant.F16 {
				for i, x := range m {
					h := uint16(0xfc00) // -Inf
					if x == 0 {
						h = 0
					}
					binary.LittleEndian.PutUint16(raw[2*i:], h)
				}
			} else {
				for i, x := range m {
					binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
				}
			}
			if _, err := mask.Buffer.WriteAt(raw, mask.Offset+int64(g*rows*nKV*es)); err != nil {
				return fmt.Errorf("writing input %s: %w", mask.Name, err)
			}
		}
	}
	return nil
}
