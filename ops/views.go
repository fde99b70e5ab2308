package ops

import "fmt"

// View returns a tensor that sees a's storage with shape ne and byte strides
// nb (same length as ne; nb[0] may be omitted as 0 to mean the element or
// block size) starting offset bytes into a. The view must lie within a's
// extent.
func View(a *Tensor, ne []int64, nb []int64, offset int64) (*Tensor, error) {
	s, err := shape(ne)
	if err != nil {
		return nil, shapeErr(OpView, "%v", err)
	}
	if len(nb) != len(ne) {
		return nil, shapeErr(OpView, "%d sizes but %d strides", len(ne), len(nb))
	}
	if s[0]%a.Type.BlockSize() != 0 {
		return nil, shapeErr(OpView, "row of %d %v elements is not a multiple of the block size %d", s[0], a.Type, a.Type.BlockSize())
	}
	v := &Tensor{Type: a.Type, Ne: s, Op: OpView, Src: []*Tensor{a}, ViewOf: a, Offset: offset}
	v.Nb = ContiguousStrides(a.Type, s)
	for i := range nb {
		if nb[i] != 0 || i > 0 {
			v.Nb[i] = nb[i]
		}
	}
	for i := len(nb); i < MaxDims; i++ {
		v.Nb[i] = v.Nb[i-1] * v.Ne[i-1]
	}
	for i, x := range v.Nb {
		if x < 0 {
			return nil, shapeErr(OpView, "negative stride %d in dimension %d", x, i)
		}
	}
	if offset < 0 || offset+v.Extent() > a.Extent() {
		return nil, shapeErr(OpView, "view of bytes [%d,%d) outside %s's %d bytes", offset, offset+v.Extent(), a.Label(), a.Extent())
	}
	return v, nil
}

// Reshape returns a contiguous tensor's data with a new shape of the same
// number of elements.
func Reshape(a *Tensor, ne ...int64) (*Tensor, error) {
	s, err := shape(ne)
	if err != nil {
		return nil, shapeErr(OpReshape, "%v", err)
	}
	if !a.IsContiguous() {
		return nil, shapeErr(OpReshape, "%s is not contiguous (use Cont first)", a.Label())
	}
	n := s[0] * s[1] * s[2] * s[3]
	if n != a.NumElements() {
		return nil, shapeErr(OpReshape, "%v has %d elements, %s has %d", s, n, a.Label(), a.NumElements())
	}
	if s[0]%a.Type.BlockSize() != 0 {
		return nil, shapeErr(OpReshape, "row of %d is not a multiple of %v's block size %d", s[0], a.Type, a.Type.BlockSize())
	}
	return &Tensor{Type: a.Type, Ne: s, Nb: ContiguousStrides(a.Type, s), Op: OpReshape, Src: []*Tensor{a}, ViewOf: a}, nil
}

// Permute returns a view of a whose dimension i is dimension axes[i] of the
// result, as ggml_permute does. Block-quantized tensors must keep
// dimension 0 in place.
func Permute(a *Tensor, axes ...int) (*Tensor, error) {
	if len(axes) != MaxDims {
		return nil, shapeErr(OpPermute, "need %d axes, got %d", MaxDims, len(axes))
	}
	var seen [MaxDims]bool
	for _, ax := range axes {
		if ax < 0 || ax >= MaxDims || seen[ax] {
			return nil, shapeErr(OpPermute, "axes %v are not a permutation of 0..3", axes)
		}
		seen[ax] = true
	}
	if a.Type.IsQuantized() && axes[0] != 0 {
		return nil, shapeErr(OpPermute, "cannot move dimension 0 of block-quantized %v", a.Type)
	}
	v := &Tensor{Type: a.Type, Op: OpPermute, Src: []*Tensor{a}, ViewOf: a}
	var p PermuteParams
	for i, ax := range axes {
		v.Ne[ax] = a.Ne[i]
		v.Nb[ax] = a.Nb[i]
		p.Axes[i] = ax
	}
	v.Params = p
	return v, nil
}

// Transpose swaps dimensions 0 and 1.
func Transpose(a *Tensor) (*Tensor, error) {
	v, err := Permute(a, 1, 0, 2, 3)
	if err != nil {
		return nil, fmt.Errorf("transpose: %w", err)
	}
	v.Op = OpTranspose
	return v, nil
}
