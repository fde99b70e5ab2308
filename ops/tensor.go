package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kernbench/kernbench/quant"
)

// MaxDims is the number of dimensions a tensor has; unused ones are 1.
const MaxDims = 4

// A Tensor is a node of a compute graph, as in ggml: an element type, a
// shape, byte strides, the op that computes it with its sources and
// parameters, and, once allocated, its storage.
type Tensor struct {
	Name string
	Type quant.Type
	// Ne is the number of elements in each dimension, Ne[0] innermost.
	Ne [MaxDims]int64
	// Nb is the byte stride of each dimension. For block-quantized types
	// Nb[0] is the size of one block.
	Nb [MaxDims]int64

	// Op computes the tensor from Src; OpNone for leaves.
	Op Op
	// Src are the operands, at the positions the op's constructor
	// documents; optional operands are nil.
	Src []*Tensor
	// Params holds the op's parameter struct (for example SoftMaxParams),
	// or nil for ops without parameters.
	Params any

	// Buffer and Offset place the tensor's bytes. For a tensor that shares
	// another's storage (ViewOf != nil: views, and the destination of CPY),
	// Buffer is unused and Offset is relative to ViewOf's storage.
	Buffer Buffer
	Offset int64
	ViewOf *Tensor

	// Memo is where a backend may keep what it learned about the node
	// to skip work when the same node is computed again (the CPU backend
	// keeps the signature of the checks it passed); nil until one does.
	// It lives and dies with the node. Graph code does not read it; a
	// copy of a node carries its original's memo, so a backend must
	// recognise its own memo for this node and ignore any other.
	Memo any
}

// ContiguousStrides returns the byte strides of a packed tensor of type t
// and shape ne.
func ContiguousStrides(t quant.Type, ne [MaxDims]int64) [MaxDims]int64 {
	var nb [MaxDims]int64
	nb[0] = t.TypeSize()
	nb[1] = nb[0] * (ne[0] / t.BlockSize())
	for i := 2; i < MaxDims; i++ {
		nb[i] = nb[i-1] * ne[i-1]
	}
	return nb
}

func shape(ne []int64) ([MaxDims]int64, error) {
	out := [MaxDims]int64{1, 1, 1, 1}
	if len(ne) == 0 || len(ne) > MaxDims {
		return out, fmt.Errorf("ops: a tensor has 1 to %d dimensions, got %d", MaxDims, len(ne))
	}
	for i, n := range ne {
		if n < 0 {
			return out, fmt.Errorf("ops: negative size %d in dimension %d", n, i)
		}
		out[i] = n
	}
	return out, nil
}

// NewTensor returns a contiguous leaf tensor of type t and shape ne (1 to 4
// sizes, innermost first). It has no storage until a backend allocates it.
func NewTensor(name string, t quant.Type, ne ...int64) (*Tensor, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("ops: tensor %q: invalid element type %v", name, t)
	}
	s, err := shape(ne)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	if _, err := t.RowSize(s[0]); err != nil {
		return nil, fmt.Errorf("ops: tensor %q: %w", name, err)
	}
	return &Tensor{Name: name, Type: t, Ne: s, Nb: ContiguousStrides(t, s)}, nil
}

// newNode returns a contiguous computed node.
func newNode(op Op, t quant.Type, ne [MaxDims]int64, params any, src ...*Tensor) *Tensor {
	return &Tensor{Type: t, Ne: ne, Nb: ContiguousStrides(t, ne), Op: op, Src: src, Params: params}
}

// NumElements returns the number of elements.
func (t *Tensor) NumElements() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NumRows returns the number of rows (elements / Ne[0]).
func (t *Tensor) NumRows() int64 { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// RowBytes returns the bytes of one packed row of Ne[0] elements.
func (t *Tensor) RowBytes() int64 { return t.Ne[0] / t.Type.BlockSize() * t.Type.TypeSize() }

// Bytes returns the size of the tensor's data when packed.
func (t *Tensor) Bytes() int64 { return t.RowBytes() * t.NumRows() }

// Extent returns the number of bytes from the tensor's first byte to just
// past its last, following its strides. It is 0 for an empty tensor.
func (t *Tensor) Extent() int64 {
	if t.NumElements() == 0 {
		return 0
	}
	e := t.Type.TypeSize() + (t.Ne[0]/t.Type.BlockSize()-1)*t.Nb[0]
	for i := 1; i < MaxDims; i++ {
		e += (t.Ne[i] - 1) * t.Nb[i]
	}
	return e
}

// IsContiguous reports whether the tensor's elements are packed in
// logical order with no gaps.
func (t *Tensor) IsContiguous() bool {
	return t.Nb == ContiguousStrides(t.Type, t.Ne) || t.NumElements() <= 1 && t.Nb[0] == t.Type.TypeSize()
}

// HasContiguousRows reports whether each row (dimension 0) is packed:
// Nb[0] is the size of one block (or element).
func (t *Tensor) HasContiguousRows() bool { return t.Nb[0] == t.Type.TypeSize() }

// Storage returns the buffer and byte offset holding the tensor's first
// byte, following views to the tensor that owns the storage. The buffer is
// nil when the owner is not allocated yet.
func (t *Tensor) Storage() (Buffer, int64) {
	off := int64(0)
	for t.ViewOf != nil {
		off += t.Offset
		t = t.ViewOf
	}
	return t.Buffer, off + t.Offset
}

// HostBytes returns the host memory of the tensor, from its first byte to
// the end of its extent. It fails when the tensor is not allocated in a
// HostBuffer or its extent runs past the buffer.
func (t *Tensor) HostBytes() ([]byte, error) {
	buf, off := t.Storage()
	if buf == nil {
		return nil, fmt.Errorf("ops: tensor %s has no storage", t.Label())
	}
	hb, ok := buf.(*HostBuffer)
	if !ok {
		return nil, fmt.Errorf("ops: tensor %s is not in host memory (%T)", t.Label(), buf)
	}
	end := off + t.Extent()
	if off < 0 || end > int64(len(hb.b)) {
		return nil, fmt.Errorf("ops: tensor %s spans bytes [%d,%d) of a %d-byte buffer", t.Label(), off, end, len(hb.b))
	}
	return hb.b[off:end:end], nil
}

// WritableHostBytes is HostBytes for a tensor about to be written: it also
// fails when the storage is read-only (a memory-mapped weight).
func (t *Tensor) WritableHostBytes() ([]byte, error) {
	b, err := t.HostBytes()
	if err != nil {
		return nil, err
	}
	if buf, _ := t.Storage(); buf.(*HostBuffer).readOnly {
		return nil, fmt.Errorf("ops: tensor %s: %w", t.Label(), ErrReadOnly)
	}
	return b, nil
}

// Label returns the tensor's name, or its op when it has none.
func (t *Tensor) Label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Op.String()
}

// ShapeString returns the shape as "[4096 32 1 1]".
func (t *Tensor) ShapeString() string {
	return fmt.Sprint(t.Ne)
}

// String returns a one-line description: name, op, type and shape.
func (t *Tensor) String() string {
	var b strings.Builder
	b.WriteString(t.Label())
	if t.Name != "" && t.Op != OpNone {
		fmt.Fprintf(&b, " (%v)", t.Op)
	}
	fmt.Fprintf(&b, " %v %v", t.Type, t.Ne)
	if !t.IsContiguous() {
		fmt.Fprintf(&b, " nb=%v", t.Nb)
	}
	return b.String()
}

// ErrShape is wrapped by every error an op constructor returns for
// operands it cannot take.
var ErrShape = errors.New("invalid operands")

// shapeErr returns an error naming the op and the problem, wrapping
// ErrShape.
func shapeErr(op Op, format string, args ...any) error {
	return fmt.Errorf("ops: %v: %s: %w", op, fmt.Sprintf(format, args...), ErrShape)
}

// SetName sets the tensor's name and returns it, for chaining.
func (t *Tensor) SetName(name string) *Tensor {
	t.Name = name
	return t
}
