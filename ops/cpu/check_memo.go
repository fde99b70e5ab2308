package cpu

import (
	"reflect"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// A checkMemo is what the backend leaves on a node that passed Supports
// (in the node's ops.Tensor.Memo): a signature of everything the checks
// read, namely the op, its parameters, and the pointer, type, shape and
// strides of the node and of every source. A node whose signature is
// unchanged has passed the same checks and need not run them again (a
// graph computed again, as a decoder's per token, is checked once and
// allocates nothing after); any change (a new source, a reshaped view,
// other parameters) misses and rechecks. Nodes with more sources than a
// signature holds, or parameters that cannot be compared, are never
// memoized. The memo lives and dies with its node: nothing is kept for
// graphs that are gone.
type checkMemo struct {
	b   *Backend
	sig nodeSig
}

// sigMaxSrcs is the most sources a memoized node may have.
const sigMaxSrcs = 7

type tensorSig struct {
	t      *ops.Tensor
	typ    quant.Type
	ne, nb [ops.MaxDims]int64
}

type nodeSig struct {
	node   tensorSig
	op     ops.Op
	params any
	nsrc   int
	src    [sigMaxSrcs]tensorSig
}

func sigOf(t *ops.Tensor) tensorSig {
	if t == nil {
		return tensorSig{}
	}
	return tensorSig{t: t, typ: t.Type, ne: t.Ne, nb: t.Nb}
}

// signature returns t's signature, and false when t cannot be cached.
func signature(t *ops.Tensor) (nodeSig, bool) {
	if len(t.Src) > sigMaxSrcs {
		return nodeSig{}, false
	}
	if t.Params != nil && !reflect.TypeOf(t.Params).Comparable() {
		return nodeSig{}, false
	}
	s := nodeSig{node: sigOf(t), op: t.Op, params: t.Params, nsrc: len(t.Src)}
	for i, x := range t.Src {
		s.src[i] = sigOf(x)
	}
	return s, true
}

// passedChecks reports whether t passed b's checks with its current
// signature.
func (b *Backend) passedChecks(t *ops.Tensor) bool {
	m, ok := t.Memo.(*checkMemo)
	if !ok || m.b != b {
		return false
	}
	return m.sig.matches(t)
}

// matches reports whether t's signature is s, comparing in place (a
// decoded token checks hundreds of nodes: building each signature to
// compare it whole cost more than the comparison). s's parameters were
// comparable when it was taken, so comparing them with t's cannot panic:
// parameters of the same dynamic type are comparable too, and of
// another type unequal.
func (s *nodeSig) matches(t *ops.Tensor) bool {
	if s.op != t.Op || s.nsrc != len(t.Src) || !s.node.is(t) {
		return false
	}
	for i, x := range t.Src {
		if !s.src[i].is(x) {
			return false
		}
	}
	return s.params == t.Params
}

// is reports whether t (nil allowed) has signature s.
func (s *tensorSig) is(t *ops.Tensor) bool {
	if t == nil {
		return s.t == nil
	}
	return s.t == t && s.typ == t.Type && s.ne == t.Ne && s.nb == t.Nb
}

// rememberChecks records on t that it passed b's checks, in place when t
// already holds b's memo (no allocation for a node checked again after a
// change).
func (b *Backend) rememberChecks(t *ops.Tensor) {
	s, ok := signature(t)
	if !ok {
		return
	}
	if m, ok := t.Memo.(*checkMemo); ok && m.b == b && m.sig.node.t == t {
		m.sig = s
		return
	}
	t.Memo = &checkMemo{b: b, sig: s}
}
