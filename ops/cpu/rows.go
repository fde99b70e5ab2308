package cpu

import (
	"fmt"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// This file holds the helpers the non-matmul kernels share: loading and
// storing float elements of any float type at any stride, walking rows, and
// choosing how many rows a thread should get.

// halfBitsAt returns the uint16 at byte offset off of b.
func halfBitsAt(b []byte, off int64) uint16 {
	return *(*uint16)(unsafe.Pointer(&b[off : off+2][0]))
}

// int32At returns the int32 at byte offset off of b.
func int32At(b []byte, off int64) int32 {
	return *(*int32)(unsafe.Pointer(&b[off : off+4][0]))
}

// putF32At stores v as the float32 at byte offset off of b.
func putF32At(b []byte, off int64, v float32) {
	*(*float32)(unsafe.Pointer(&b[off : off+4][0])) = v
}

// isFloatType reports whether loadFloats reads elements of type t.
func isFloatType(t quant.Type) bool {
	return t == quant.F32 || t == quant.F16 || t == quant.BF16
}

// loadFloats converts len(dst) elements of type typ (F32, F16 or BF16), the
// first at byte offset off of b and the others stride bytes apart, into dst.
func loadFloats(typ quant.Type, b []byte, off, stride int64, dst []float32) {
	n := int64(len(dst))
	if n == 0 {
		return
	}
	switch typ {
	case quant.F32:
		if stride == 4 {
			copy(dst, f32s(b, off, n))
			return
		}
		_ = b[off+(n-1)*stride+3]
		for i := range dst {
			dst[i] = f32At(b, off)
			off += stride
		}
	case quant.F16:
		if stride == 2 {
			for i, h := range u16s(b, off, n) {
				dst[i] = quant.FP16ToFP32(h)
			}
			return
		}
		_ = b[off+(n-1)*stride+1]
		for i := range dst {
			dst[i] = quant.FP16ToFP32(halfBitsAt(b, off))
			off += stride
		}
	case quant.BF16:
		if stride == 2 {
			for i, h := range u16s(b, off, n) {
				dst[i] = quant.BF16ToFP32(h)
			}
			return
		}
		_ = b[off+(n-1)*stride+1]
		for i := range dst {
			dst[i] = quant.BF16ToFP32(halfBitsAt(b, off))
			off += stride
		}
	default:
		panic("cpu: loadFloats of " + typ.String())
	}
}

// storeFloats converts src to type typ (F32, F16 or BF16) and writes it to b,
// the first element at byte offset off and the others stride bytes apart.
func storeFloats(typ quant.Type, b []byte, off, stride int64, src []float32) {
	n := int64(len(src))
	if n == 0 {
		return
	}
	switch typ {
	case quant.F32:
		if stride == 4 {
			copy(f32s(b, off, n), src)
			return
		}
		_ = b[off+(n-1)*stride+3]
		for _, v := range src {
			*(*float32)(unsafe.Pointer(&b[off])) = v
			off += stride
		}
	case quant.F16:
		if stride == 2 {
			d := u16s(b, off, n)
			for i, v := range src {
				d[i] = quant.FP32ToFP16(v)
			}
			return
		}
		_ = b[off+(n-1)*stride+1]
		for _, v := range src {
			*(*uint16)(unsafe.Pointer(&b[off])) = quant.FP32ToFP16(v)
			off += stride
		}
	case quant.BF16:
		if stride == 2 {
			d := u16s(b, off, n)
			for i, v := range src {
				d[i] = quant.FP32ToBF16(v)
			}
			return
		}
		_ = b[off+(n-1)*stride+1]
		for _, v := range src {
			*(*uint16)(unsafe.Pointer(&b[off])) = quant.FP32ToBF16(v)
			off += stride
		}
	default:
		panic("cpu: storeFloats of " + typ.String())
	}
}

// rowIndices splits the flat row number r of a tensor of shape ne into its
// indices in dimensions 1, 2 and 3.
func rowIndices(ne [ops.MaxDims]int64, r int64) (i1, i2, i3 int64) {
	i1 = r % ne[1]
	r /= ne[1]
	return i1, r % ne[2], r / ne[2]
}

// floatRow returns row (i1, i2, i3) of t (F32, F16 or BF16; b its bytes) as
// float32: a view of b when the row is packed F32, otherwise a converted
// copy in scratch, which must hold t.Ne[0] values. Callers never write to
// the result.
func floatRow(t *ops.Tensor, b []byte, i1, i2, i3 int64, scratch []float32) []float32 {
	off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
	if t.Type == quant.F32 && t.Nb[0] == 4 {
		return f32s(b, off, t.Ne[0])
	}
	s := scratch[:t.Ne[0]]
	loadFloats(t.Type, b, off, t.Nb[0], s)
	return s
}

// scratchFor returns a row of scratch space for reading rows of t through
// floatRow, or nil when its rows are packed f32 and need none.
func scratchFor(t *ops.Tensor) []float32 {
	if t.Type == quant.F32 && t.Nb[0] == 4 {
		return nil
	}
	return make([]float32, t.Ne[0])
}

// outRow returns row (i1, i2, i3) of the F32 tensor t, whose rows are
// packed, as a slice of its bytes b.
func outRow(t *ops.Tensor, b []byte, i1, i2, i3 int64) []float32 {
	return f32s(b, i1*t.Nb[1]+i2*t.Nb[2]+i3*t.Nb[3], t.Ne[0])
}

// grainWork is the least work, in element operations, worth handing to a
// thread. Tests lower it to force small tensors to split.
var grainWork int64 = 32 << 10

// rowGrain returns parallelFor's minimum rows per thread for rows costing
// rowWork element operations each, so that a thread gets at least
// grainWork operations and small tensors run on one thread.
func rowGrain(rowWork int64) int {
	if rowWork < 1 {
		rowWork = 1
	}
	if g := grainWork / rowWork; g > 1 {
		return int(min(g, 1<<30))
	}
	return 1
}

// rowCount returns t's number of rows as an int for parallelFor, or an error
// when it does not fit.
func rowCount(t *ops.Tensor) (int, error) {
	n := t.NumRows()
	if n < 0 || n > int64(int(^uint(0)>>1)) {
		return 0, fmt.Errorf("%d rows is too many", n)
	}
	return int(n), nil
}

// checkOut checks that t, a node the kernel writes as type want, has that
// type and packed rows.
func checkOut(t *ops.Tensor, want quant.Type) error {
	if t.Type != want {
		return fmt.Errorf("result type %v, want %v", t.Type, want)
	}
	if err := checkDims(t, "result"); err != nil {
		return err
	}
	if !t.HasContiguousRows() {
		return fmt.Errorf("result rows are not packed (nb[0]=%d)", t.Nb[0])
	}
	return nil
}

// checkSrcs checks that t's sources 0 to required-1 are present and that
// it has no non-nil source at position n or later.
func checkSrcs(t *ops.Tensor, required, n int) error {
	if len(t.Src) < required {
		return fmt.Errorf("%d sources, want %d", len(t.Src), required)
	}
	for i := 0; i < required; i++ {
		if t.Src[i] == nil {
			return fmt.Errorf("source %d is nil", i)
		}
	}
	for i, s := range t.Src[:min(n, len(t.Src))] {
		if s == nil {
			continue
		}
		if err := checkDims(s, fmt.Sprintf("source %d", i)); err != nil {
			return err
		}
	}
	if len(t.Src) > n {
		for _, s := range t.Src[n:] {
			if s != nil {
				return fmt.Errorf("%d sources, want at most %d", len(t.Src), n)
			}
		}
	}
	return nil
}

// checkDims checks that x, called what, has no negative size or stride,
// which the kernels' indexing assumes.
func checkDims(x *ops.Tensor, what string) error {
	for i := range ops.MaxDims {
		if x.Ne[i] < 0 || x.Nb[i] < 0 {
			return fmt.Errorf("%s has shape %v and strides %v: negative", what, x.Ne, x.Nb)
		}
	}
	return nil
}

// srcAt returns t.Src[i], or nil when t has fewer sources.
func srcAt(t *ops.Tensor, i int) *ops.Tensor {
	if i < len(t.Src) {
		return t.Src[i]
	}
	return nil
}

// checkType checks that tensor x, called what, has one of the types ok.
func checkType(x *ops.Tensor, what string, ok ...quant.Type) error {
	for _, k := range ok {
		if x.Type == k {
			return nil
		}
	}
	return fmt.Errorf("%s has type %v, want one of %v", what, x.Type, ok)
}
