package main

import (
	"iter"
	"math"
	"strings"
	"time"

	"github.com/kernbench/kernbench/graphs"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A store keeps a trace's records compactly. A graphs.Record points into
// its graph (the node, its sources), so keeping records keeps every
// token's graph alive (3 GB for 5000 tokens of stories260K). The store
// keeps instead what a record says about its node (name, op, type,
// shape, sources, layer, block, backends, cost) once per distinct node,
// and per record its times in 12 bytes; Records rebuilds the records
// from them, with stand-in nodes that carry what the trace's outputs
// read.
type store struct {
	index  map[nodeInfo]uint32
	infos  []nodeInfo
	stubs  []stub // built when the records are first read
	chunks [][]entry
	n      int
	origin time.Time
	last   time.Duration // the last record's start, from origin
	// long holds the times that do not fit an entry (4.29 s or more;
	// negative), by record: the gap since the last record's start in
	// longGap, the wall time in long; device the device times of the
	// records that have one.
	long, longGap, device map[int]time.Duration
}

// chunkLen is the entries of a chunk: the store grows a chunk at a time
// and never copies what it holds.
const chunkLen = 1 << 14

// An entry is one record: its node and its times.
type entry struct {
	info uint32
	gap  uint32 // Start - the last record's Start in nanoseconds; tooLong: see store.longGap
	dur  uint32 // End - Start in nanoseconds; tooLong: see store.long
}

const tooLong = math.MaxUint32

// fit returns d as an entry's time, or tooLong, having kept d in m.
func (s *store) fit(d time.Duration, m map[int]time.Duration) uint32 {
	if d >= 0 && d < tooLong {
		return uint32(d)
	}
	m[s.n] = d
	return tooLong
}

// nodeInfo is what a record says about its node, other than times.
type nodeInfo struct {
	kind          graphs.StepKind
	name          string
	op            ops.Op
	typ           quant.Type
	ne            [ops.MaxDims]int64
	hasSrc0       bool       // Src[0] is set: OpLabel reads its type
	src0          quant.Type // its type
	srcs          string     // the labels of the sources, nil ones as "", joined by "\x00"
	nsrc          int
	forLabel      string // the label of Step.For, if set
	hasFor        bool
	backend, from ops.Backend
	bytes         int64
	cost          ops.Cost
	layer         int
	block         string
}

// stub holds the stand-in tensors of a nodeInfo.
type stub struct {
	node, forT *ops.Tensor
}

func newStore() *store {
	return &store{index: map[nodeInfo]uint32{}, long: map[int]time.Duration{}, longGap: map[int]time.Duration{}, device: map[int]time.Duration{}}
}

// Len returns the number of records.
func (s *store) Len() int { return s.n }

// Add keeps r.
func (s *store) Add(r graphs.Record) {
	n := r.Node
	ni := nodeInfo{
		kind: r.Kind, name: n.Name, op: n.Op, typ: n.Type, ne: n.Ne,
		backend: r.Backend, from: r.From, bytes: r.Bytes, cost: r.Cost, layer: r.Layer, block: r.Block,
	}
	if len(n.Src) > 0 && n.Src[0] != nil {
		ni.hasSrc0, ni.src0 = true, n.Src[0].Type
	}
	if len(n.Src) > 0 {
		labels := make([]string, len(n.Src))
		for i, src := range n.Src {
			if src != nil {
				labels[i] = src.Label()
			}
		}
		ni.srcs, ni.nsrc = strings.Join(labels, "\x00"), len(n.Src)
	}
	if r.For != nil {
		ni.forLabel, ni.hasFor = r.For.Label(), true
	}
	id, ok := s.index[ni]
	if !ok {
		id = uint32(len(s.infos))
		s.index[ni] = id
		s.infos = append(s.infos, ni)
	}
	if s.n == 0 {
		s.origin = r.Start
	}
	start := r.Start.Sub(s.origin)
	e := entry{info: id, gap: s.fit(start-s.last, s.longGap), dur: s.fit(r.End.Sub(r.Start), s.long)}
	s.last = start
	if r.Device != 0 {
		s.device[s.n] = r.Device
	}
	if s.n%chunkLen == 0 {
		s.chunks = append(s.chunks, make([]entry, 0, chunkLen))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, e)
	s.n++
}

// Records yields the records kept, in order, rebuilt.
func (s *store) Records() iter.Seq[graphs.Record] {
	return func(yield func(graphs.Record) bool) {
		if len(s.stubs) < len(s.infos) {
			s.buildStubs()
		}
		i := 0
		var at time.Duration
		for _, c := range s.chunks {
			for _, e := range c {
				ni, st := &s.infos[e.info], s.stubs[e.info]
				gap, d := time.Duration(e.gap), time.Duration(e.dur)
				if e.gap == tooLong {
					gap = s.longGap[i]
				}
				if e.dur == tooLong {
					d = s.long[i]
				}
				at += gap
				start := s.origin.Add(at)
				r := graphs.Record{
					Step:  graphs.Step{Kind: ni.kind, Node: st.node, Backend: ni.backend, From: ni.from, For: st.forT, Bytes: ni.bytes},
					Start: start, End: start.Add(d), Device: s.device[i], Cost: ni.cost, Layer: ni.layer, Block: ni.block,
				}
				if !yield(r) {
					return
				}
				i++
			}
		}
	}
}

// buildStubs makes the stand-in tensors of the infos that have none.
func (s *store) buildStubs() {
	for _, ni := range s.infos[len(s.stubs):] {
		t := &ops.Tensor{Name: ni.name, Op: ni.op, Type: ni.typ, Ne: ni.ne}
		if ni.nsrc > 0 {
			t.Src = make([]*ops.Tensor, ni.nsrc)
			for i, l := range strings.Split(ni.srcs, "\x00") {
				if l != "" || (i == 0 && ni.hasSrc0) {
					t.Src[i] = &ops.Tensor{Name: l}
				}
			}
			if ni.hasSrc0 {
				t.Src[0].Type = ni.src0
			}
		}
		var forT *ops.Tensor
		if ni.hasFor {
			forT = &ops.Tensor{Name: ni.forLabel}
		}
		s.stubs = append(s.stubs, stub{node: t, forT: forT})
	}
}
