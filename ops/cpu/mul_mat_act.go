package cpu

import (
	"fmt"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
	"github.com/kernbench/kernbench/quant"
)

// Activation conversion for the matrix kernels: each activation row is
// read once (any strides, f32, f16 or bf16), converted to the weight
// type's vec-dot type and kept in scratch, so the dot products read packed
// blocks. Quantized vec-dot types use quant.QuantizeRow, ggml's reference
// quantizer, so the activations round exactly as ggml's do.

// loadFloatRow reads len(dst) elements of a f32, f16 or bf16 row from b,
// the first at byte offset off and the next ones stride bytes apart.
func loadFloatRow(t quant.Type, b []byte, off, stride int64, dst []float32) error {
	switch t {
	case quant.F32:
		if stride == 4 {
			copy(dst, f32s(b, off, int64(len(dst))))
			return nil
		}
		for i := range dst {
			dst[i] = f32At(b, off+int64(i)*stride)
		}
	case quant.F16:
		for i := range dst {
			dst[i] = simd.HalfAt(b, int(off+int64(i)*stride))
		}
	case quant.BF16:
		for i := range dst {
			o := off + int64(i)*stride
			dst[i] = quant.BF16ToFP32(uint16(b[o]) | uint16(b[o+1])<<8)
		}
	default:
		return fmt.Errorf("cannot read %v as a float row", t)
	}
	return nil
}

// convertRow writes src as a row of type t into dst, which holds exactly
// one row of len(src) elements of t.
func convertRow(t quant.Type, src []float32, dst []byte) error {
	switch t {
	case quant.F32:
		copy(f32s(dst, 0, int64(len(src))), src)
	case quant.F16:
		h := u16s(dst, 0, int64(len(src)))
		for i, v := range src {
			h[i] = quant.FP32ToFP16(v)
		}
	case quant.BF16:
		h := u16s(dst, 0, int64(len(src)))
		for i, v := range src {
			h[i] = quant.FP32ToBF16(v)
		}
	default:
		if err := quant.QuantizeRow(t, src, dst); err != nil {
			return fmt.Errorf("quantizing activations to %v: %w", t, err)
		}
	}
	return nil
}

// actRows are the activation rows of a matrix product in the vec-dot
// type: row (j, i2, i3) starts at byte j*nb1 + i2*nb2 + i3*nb3 of mem.
type actRows struct {
	mem           []byte
	nb1, nb2, nb3 int64
	rowBytes      int64
}

// row returns activation row (j, i2, i3).
func (a *actRows) row(j, i2, i3 int64) []byte {
	off := j*a.nb1 + i2*a.nb2 + i3*a.nb3
	return a.mem[off : off+a.rowBytes]
}

// actJob converts activation rows to the vec-dot type, one row per item.
type actJob struct {
	ks   *kernelSet
	sc   *scratch
	x    *ops.Tensor
	src  []byte
	vt   quant.Type
	dst  actRows
	errs workerErrors
}

func (j *actJob) do(w, lo, hi int) {
	x := j.x
	k, n1, n2 := x.Ne[0], x.Ne[1], x.Ne[2]
	direct := x.Type == quant.F32 && x.Nb[0] == 4
	var buf []float32
	if !direct {
		buf = j.sc.worker(w, k, 0, 0).f32[:k]
	}
	for r := int64(lo); r < int64(hi) && !j.errs.failed(w); r++ {
		i1, i2, i3 := r%n1, r/n1%n2, r/(n1*n2)
		off := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
		row := buf
		if direct {
			row = f32s(j.src, off, k)
		} else if err := loadFloatRow(x.Type, j.src, off, x.Nb[0], buf); err != nil {
			j.errs.set(w, err)
			return
		}
		j.errs.set(w, j.ks.convertRow(j.vt, row, j.dst.mem[r*j.dst.rowBytes:(r+1)*j.dst.rowBytes]))
	}
}

// actPadRows is how many rows past the last the converted activation
// rows (prepareActivations) carry, zeroed.
const actPadRows = 3

// prepareActivations returns the rows of x (f32, f16 or bf16, any
// strides) in type vt. When x already has type vt with packed rows it is
// used in place; otherwise every row is converted, in parallel, into the
// backend's scratch (valid until the next call).
func (b *Backend) prepareActivations(x *ops.Tensor, vt quant.Type) (actRows, error) {
	k := x.Ne[0]
	rowBytes, err := vt.RowSize(k)
	if err != nil {
		return actRows{}, fmt.Errorf("activation rows: %w", err)
	}
	src := mem(x)
	if x.Type == vt && x.HasContiguousRows() {
		return actRows{mem: src, nb1: x.Nb[1], nb2: x.Nb[2], nb3: x.Nb[3], rowBytes: rowBytes}, nil
	}
	n1, n2, n3 := x.Ne[1], x.Ne[2], x.Ne[3]
	rows := n1 * n2 * n3
	// actPadRows zero rows past the last: a four-column panel kernel
	// can take a last group of one to three columns whole
	// (mul_mat_ktile.go).
	b.scratch.act = growBytes(b.scratch.act, (rows+actPadRows)*rowBytes)
	clear(b.scratch.act[rows*rowBytes:])
	j := &b.act
	*j = actJob{
		ks: b.kern, sc: &b.scratch, x: x, src: src, vt: vt,
		dst:  actRows{mem: b.scratch.act, nb1: rowBytes, nb2: n1 * rowBytes, nb3: n2 * n1 * rowBytes, rowBytes: rowBytes},
		errs: b.workerErrs(),
	}
	b.pool.run(int(rows), 4, j)
	if err := j.errs.err(); err != nil {
		return actRows{}, err
	}
	return j.dst, nil
}
