package harness

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/cpu/cputest"
	"github.com/kernbench/kernbench/quant"
	"github.com/kernbench/kernbench/reference"
)

// faulty is the CPU backend with a deliberate bug in Compute: the proof
// that the harness catches such bugs.
type faulty struct {
	*cpu.Backend
	name    string
	compute func(be *cpu.Backend, node *ops.Tensor) error
}

func (f faulty) Name() string                   { return "cpu+" + f.name }
func (f faulty) Compute(node *ops.Tensor) error { return f.compute(f.Backend, node) }

// elementOffset returns the byte offset (from the storage's first byte) of
// the block holding element flat index i of t.
func elementOffset(t *ops.Tensor, i int64) int64 {
	c := coords(i, t.Ne)
	return c[0]/t.Type.BlockSize()*t.Nb[0] + c[1]*t.Nb[1] + c[2]*t.Nb[2] + c[3]*t.Nb[3]
}

// perturbOne computes correctly, then changes the middle element: by half
// the output's largest magnitude plus one for f32, by one for i32, and by
// flipping bits in its block for other types (CPY destinations).
func perturbOne(be *cpu.Backend, node *ops.Tensor) error {
	if err := be.Compute(node); err != nil {
		return err
	}
	mem, err := node.HostBytes()
	if err != nil {
		return err
	}
	off := elementOffset(node, node.NumElements()/2)
	switch node.Type {
	case quant.F32:
		vals, err := reference.Read(node)
		if err != nil {
			return err
		}
		big := 0.0
		for _, v := range vals {
			if !math.IsInf(v, 0) && !math.IsNaN(v) {
				big = max(big, math.Abs(v))
			}
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(mem[off:]))
		binary.LittleEndian.PutUint32(mem[off:], math.Float32bits(v+float32(big/2+1)))
	case quant.I32:
		v := binary.LittleEndian.Uint32(mem[off:])
		binary.LittleEndian.PutUint32(mem[off:], v+1)
	default:
		mem[off+node.Type.TypeSize()-1] ^= 0x11
	}
	return nil
}

// pastEnd computes correctly, then writes one byte just past the end of
// the output's storage.
func pastEnd(be *cpu.Backend, node *ops.Tensor) error {
	if err := be.Compute(node); err != nil {
		return err
	}
	o := owner(node)
	buf, off := o.Storage()
	_, err := buf.WriteAt([]byte{0x5A}, off+o.Extent())
	return err
}

// skipLast computes correctly, then overwrites the last element's block
// with 0xFF bytes (NaN, or -1), as a kernel that misses the tail leaves a
// poisoned output.
func skipLast(be *cpu.Backend, node *ops.Tensor) error {
	if err := be.Compute(node); err != nil {
		return err
	}
	mem, err := node.HostBytes()
	if err != nil {
		return err
	}
	off := elementOffset(node, node.NumElements()-1)
	for i := int64(0); i < node.Type.TypeSize(); i++ {
		mem[off+i] = 0xFF
	}
	return nil
}

// touchInput computes correctly, then changes the first byte of the first
// source that is not the output's storage.
func touchInput(be *cpu.Backend, node *ops.Tensor) error {
	if err := be.Compute(node); err != nil {
		return err
	}
	for _, s := range node.Src {
		if s == nil || owner(s) == owner(node) || owner(s).Extent() == 0 {
			continue
		}
		mem, err := owner(s).HostBytes()
		if err != nil {
			return err
		}
		mem[0] ^= 0x01
		return nil
	}
	return fmt.Errorf("no input")
}

// noop computes nothing.
func noop(*cpu.Backend, *ops.Tensor) error { return nil }

// variant computes a copy of node whose sources and parameters edit
// returns, and copies the result into node's storage: a kernel that reads
// the wrong operand or ignores one.
func variant(edit func(be *cpu.Backend, src []*ops.Tensor, params any) ([]*ops.Tensor, any, error)) func(*cpu.Backend, *ops.Tensor) error {
	return func(be *cpu.Backend, node *ops.Tensor) error {
		c := *node
		src, params, err := edit(be, slices.Clone(node.Src), node.Params)
		if err != nil {
			return err
		}
		c.Src, c.Params, c.Buffer, c.Offset, c.ViewOf = src, params, nil, 0, nil
		if err := ops.AllocTensor(be, &c, 0); err != nil {
			return err
		}
		if err := be.Compute(&c); err != nil {
			return err
		}
		from, err := c.HostBytes()
		if err != nil {
			return err
		}
		to, err := node.HostBytes()
		if err != nil {
			return err
		}
		copy(to, from)
		return nil
	}
}

// hostLeaf allocates a leaf of type t, shape ne and bytes data on be.
func hostLeaf(be *cpu.Backend, t quant.Type, ne [4]int64, data []byte) (*ops.Tensor, error) {
	x, err := ops.NewTensor("fault", t, ne[:]...)
	if err != nil {
		return nil, err
	}
	if err := ops.AllocTensor(be, x, 0); err != nil {
		return nil, err
	}
	_, err = x.Buffer.WriteAt(data, 0)
	return x, err
}

// packedRows copies t's rows (which must be packed) into a contiguous
// tensor, editing each row's bytes with edit (row index in i1, i2, i3).
func packedRows(be *cpu.Backend, t *ops.Tensor, ne [4]int64, row func(i1, i2, i3 int64) (int64, int64, int64), edit func(row []byte)) (*ops.Tensor, error) {
	mem, err := t.HostBytes()
	if err != nil {
		return nil, err
	}
	rb := t.RowBytes()
	var out []byte
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			for i1 := int64(0); i1 < ne[1]; i1++ {
				j1, j2, j3 := row(i1, i2, i3)
				off := j1*t.Nb[1] + j2*t.Nb[2] + j3*t.Nb[3]
				r := slices.Clone(mem[off : off+rb])
				if edit != nil {
					edit(r)
				}
				out = append(out, r...)
			}
		}
	}
	return hostLeaf(be, t.Type, ne, out)
}

// dropLastBlock zeroes the last block of every weight row: a block loop
// that stops one short.
func dropLastBlock(be *cpu.Backend, src []*ops.Tensor, params any) ([]*ops.Tensor, any, error) {
	w := src[0]
	size := w.Type.TypeSize()
	z, err := packedRows(be, w, w.Ne, func(i1, i2, i3 int64) (int64, int64, int64) { return i1, i2, i3 },
		func(r []byte) { clear(r[len(r)-int(size):]) })
	src[0] = z
	return src, params, err
}

// posPlusOne rotates every token by the next position.
func posPlusOne(be *cpu.Backend, src []*ops.Tensor, params any) ([]*ops.Tensor, any, error) {
	p := src[ops.RopePos]
	vals, err := reference.Read(p)
	if err != nil {
		return nil, nil, err
	}
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(int32(v)+1))
	}
	src[ops.RopePos], err = hostLeaf(be, quant.I32, p.Ne, data)
	return src, params, err
}

// dropSource ignores the optional source at position i.
func dropSource(i int) func(*cpu.Backend, []*ops.Tensor, any) ([]*ops.Tensor, any, error) {
	return func(_ *cpu.Backend, src []*ops.Tensor, params any) ([]*ops.Tensor, any, error) {
		src[i] = nil
		return src, params, nil
	}
}

// gqaModulo maps query head h to kv head h % n_kv_heads instead of
// h / (n_head / n_kv_heads), by expanding K and V to one head per query
// head.
func gqaModulo(be *cpu.Backend, src []*ops.Tensor, params any) ([]*ops.Tensor, any, error) {
	heads := src[ops.FAQ].Ne[2]
	for _, i := range []int{ops.FAK, ops.FAV} {
		t := src[i]
		nkv := t.Ne[2]
		ne := [4]int64{t.Ne[0], t.Ne[1], heads, t.Ne[3]}
		x, err := packedRows(be, t, ne, func(i1, i2, i3 int64) (int64, int64, int64) { return i1, i2 % nkv, i3 }, nil)
		if err != nil {
			return nil, nil, err
		}
		src[i] = x
	}
	return src, params, nil
}

// transposed computes correctly into a scratch tensor, then stores each
// [m, n] plane of the product as if it were [n, m]: a kernel that swaps
// the output strides.
func transposed(be *cpu.Backend, node *ops.Tensor) error {
	same := func(_ *cpu.Backend, src []*ops.Tensor, p any) ([]*ops.Tensor, any, error) { return src, p, nil }
	if err := variant(same)(be, node); err != nil {
		return err
	}
	mem, err := node.HostBytes()
	if err != nil {
		return err
	}
	m, n := node.Ne[0], node.Ne[1]
	plane := 4 * m * n
	for p := int64(0); p < node.Ne[2]*node.Ne[3]; p++ {
		src := slices.Clone(mem[p*plane : (p+1)*plane])
		for i := int64(0); i < m; i++ {
			for j := int64(0); j < n; j++ {
				copy(mem[p*plane+4*(i+j*m):], src[4*(j+i*n):4*(j+i*n)+4])
			}
		}
	}
	return nil
}

// faultCase pairs a fault with the cases it must be caught on.
type faultCase struct {
	name   string
	fault  func(*cpu.Backend, *ops.Tensor) error
	match  func(c Case) bool
	reason string // a substring every failure's reason must hold
}

func matchCase(c Case) bool { return c.Expect == ExpectMatch }

// emptyOutput returns the IDs of default cases whose output has no
// elements: a fault in the values of an empty output changes nothing. (It
// is computed on first use: the op definitions it reads are registered by
// init functions, after package-level variables are set.)
var emptyOutput = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range Cases() {
		node, err := build(c, newPlanBuilder())
		if err == nil && node.NumElements() == 0 {
			m[c.ID()] = true
		}
	}
	return m
})

func computing(c Case) bool { return matchCase(c) && !emptyOutput()[c.ID()] }

func ops_(o ...ops.Op) func(Case) bool {
	return func(c Case) bool { return computing(c) && slices.Contains(o, c.Op) }
}

// TestFaultsAreCaught runs every matching case of the default set on a CPU
// backend with one deliberate bug each and requires every run to FAIL: a
// wrong element, a write past the end, a missed element, a changed input,
// no computation at all, a transposed product, a dropped block, a rope
// position off by one, an ignored mask or sink, and a wrong GQA head
// mapping.
func TestFaultsAreCaught(t *testing.T) {
	base := cputest.New(t, 2)
	defer base.Close()
	hasMask := func(c Case) bool {
		return strings.Contains(c.Name, "mask") || strings.Contains(c.Name, "causal") || strings.Contains(c.Name, "alibi")
	}
	faults := []faultCase{
		{name: "perturb one element", fault: perturbOne, match: computing},
		{name: "write past the end", fault: pastEnd, match: matchCase, reason: "out-of-bounds"},
		{name: "skip the last element", fault: skipLast, match: computing},
		{name: "change an input", fault: touchInput, match: computing, reason: "changed"},
		{name: "compute nothing", fault: noop, match: computing},
		{name: "transposed product", fault: transposed, reason: "NMSE",
			match: func(c Case) bool {
				return ops_(ops.OpMulMat)(c) && !strings.Contains(c.Name, "m=1,") && !strings.Contains(c.Name, "n=1,")
			}},
		{name: "drop the last block", fault: variant(dropLastBlock), match: ops_(ops.OpMulMat, ops.OpMulMatID, ops.OpGetRows)},
		{name: "position off by one", fault: variant(posPlusOne), match: ops_(ops.OpRope)},
		{name: "ignore the mask", fault: variant(dropSource(ops.SMMask)),
			match: func(c Case) bool { return ops_(ops.OpSoftMax)(c) && hasMask(c) }},
		{name: "ignore the sinks", fault: variant(dropSource(ops.SMSinks)),
			match: func(c Case) bool { return ops_(ops.OpSoftMax)(c) && strings.Contains(c.Name, "sinks") }},
		{name: "ignore the FA mask", fault: variant(dropSource(ops.FAMask)),
			match: func(c Case) bool { return ops_(ops.OpFlashAttnExt)(c) && strings.Contains(c.Name, "mask") }},
		{name: "ignore the FA sinks", fault: variant(dropSource(ops.FASinks)),
			match: func(c Case) bool { return ops_(ops.OpFlashAttnExt)(c) && strings.Contains(c.Name, "sinks") }},
		{name: "GQA head modulo", fault: variant(gqaModulo),
			match: func(c Case) bool {
				return ops_(ops.OpFlashAttnExt)(c) && !strings.Contains(c.Name, "kv=1,") && !strings.Contains(c.Name, "heads=4,kv=4,")
			}},
	}
	cases := finiteCases() // the faults of non-finite cases: TestNonFiniteCoverage
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			be := faulty{Backend: base, name: f.name, compute: f.fault}
			n := 0
			for _, c := range cases {
				if !f.match(c) {
					continue
				}
				n++
				r := Run(be, c)
				if r.Status != StatusFail {
					t.Errorf("%s: %v with NMSE %.3g, max err %.3g: the fault went unnoticed", c.ID(), r.Status, r.NMSE, r.MaxErr)
					continue
				}
				if r.Err != "" {
					t.Errorf("%s: the faulty backend itself failed (%s: %s), so nothing was detected", c.ID(), r.Reason, r.Err)
					continue
				}
				if testing.Verbose() && n <= 2 {
					t.Logf("%s: %s", c.ID(), r.Summary())
				}
				if !strings.Contains(r.Reason, f.reason) {
					t.Errorf("%s: failed for %q (%s), want a reason with %q", c.ID(), r.Reason, r.Err, f.reason)
				}
			}
			if n == 0 {
				t.Fatal("no case to run the fault on")
			}
		})
	}
}
