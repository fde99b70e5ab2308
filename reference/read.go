package reference

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// Read returns t's elements, dequantized, as float64 in logical row-major
// order: element (i0, i1, i2, i3) is at index i0 + Ne0*(i1 + Ne1*(i2 +
// Ne2*i3)). It follows t's strides and views, so a permuted or strided view
// reads the elements it sees. It reads through the ops.Buffer interface
// (one ReadAt of t's extent), never HostBytes, so it works for any
// backend's buffers.
//
// Integer types come back exactly; f16 and bf16 are widened exactly;
// block-quantized types are dequantized with quant.DequantizeRow, as ggml's
// dequantizers do, except MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the
// IQ1, IQ2 and IQ3 codebook formats, which are decoded in float64 here
// from their layouts (blocks.go).
func Read(t *ops.Tensor) ([]float64, error) {
	if t == nil {
		return nil, fmt.Errorf("reference: read of a nil tensor")
	}
	n, err := numElements(t)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []float64{}, nil
	}
	raw, err := readExtent(t)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	if t.Type.BlockSize() == 1 {
		err = decodeElements(t, raw, out)
	} else {
		err = decodeBlocks(t, raw, out)
	}
	if err != nil {
		return nil, fmt.Errorf("reference: read %s: %w", t.Label(), err)
	}
	return out, nil
}

// maxElements bounds the elements of a tensor the reference reads or
// computes (2^33, 64 GiB of float64), so that a corrupt shape is an error
// and not an overflow.
const maxElements = 1 << 33

// numElements checks that t's type, shape and strides describe readable
// storage and returns its element count.
func numElements(t *ops.Tensor) (int64, error) {
	if !t.Type.Valid() {
		return 0, fmt.Errorf("reference: tensor %s has invalid type %v", t.Label(), t.Type)
	}
	n := int64(1)
	for i, ne := range t.Ne {
		if ne < 0 {
			return 0, fmt.Errorf("reference: tensor %s has negative size %d in dimension %d", t.Label(), ne, i)
		}
		if t.Nb[i] < 0 {
			return 0, fmt.Errorf("reference: tensor %s has negative stride %d in dimension %d", t.Label(), t.Nb[i], i)
		}
		if ne != 0 && n > maxElements/ne {
			return 0, fmt.Errorf("reference: tensor %s of shape %v has more than %d elements", t.Label(), t.Ne, int64(maxElements))
		}
		n *= ne
	}
	if t.Ne[0]%t.Type.BlockSize() != 0 {
		return 0, fmt.Errorf("reference: tensor %s: row of %d %v elements is not a multiple of the block size %d",
			t.Label(), t.Ne[0], t.Type, t.Type.BlockSize())
	}
	return n, nil
}

// readExtent returns the bytes of t from its first byte to the end of its
// extent, read from the buffer that holds them.
func readExtent(t *ops.Tensor) ([]byte, error) {
	buf, off := t.Storage()
	if buf == nil {
		return nil, fmt.Errorf("reference: tensor %s has no storage", t.Label())
	}
	ext := t.Extent()
	if off < 0 || ext < 0 || off > buf.Size() || ext > buf.Size()-off {
		return nil, fmt.Errorf("reference: tensor %s spans bytes [%d,%d) of a %d-byte buffer", t.Label(), off, off+ext, buf.Size())
	}
	raw := make([]byte, ext)
	if _, err := buf.ReadAt(raw, off); err != nil {
		return nil, fmt.Errorf("reference: read %s: %w", t.Label(), err)
	}
	return raw, nil
}

// decodeElements fills out from raw for a type of one element per block.
func decodeElements(t *ops.Tensor, raw []byte, out []float64) error {
	dec, err := elementDecoder(t.Type)
	if err != nil {
		return err
	}
	i := 0
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				for i0 := int64(0); i0 < t.Ne[0]; i0++ {
					off := i0*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
					out[i] = dec(raw[off:])
					i++
				}
			}
		}
	}
	return nil
}

// elementDecoder returns the function that decodes one element of type
// typ from the start of a byte slice.
func elementDecoder(typ quant.Type) (func([]byte) float64, error) {
	le := binary.LittleEndian
	switch typ {
	case quant.F32:
		return func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) }, nil
	case quant.F16:
		return func(b []byte) float64 { return float64(quant.FP16ToFP32(le.Uint16(b))) }, nil
	case quant.BF16:
		return func(b []byte) float64 { return float64(quant.BF16ToFP32(le.Uint16(b))) }, nil
	case quant.I8:
		return func(b []byte) float64 { return float64(int8(b[0])) }, nil
	case quant.I16:
		return func(b []byte) float64 { return float64(int16(le.Uint16(b))) }, nil
	case quant.I32:
		return func(b []byte) float64 { return float64(int32(le.Uint32(b))) }, nil
	}
	return nil, fmt.Errorf("no element decoder for type %v", typ)
}

// decodeBlocks fills out from raw for a block-quantized type, one block at
// a time so that any block stride Nb[0] is honoured.
func decodeBlocks(t *ops.Tensor, raw []byte, out []float64) error {
	bs, ts := t.Type.BlockSize(), t.Type.TypeSize()
	decode := blockDecoders[t.Type]
	if decode == nil {
		block := make([]float32, bs)
		decode = func(b []byte, out []float64) {
			// The lengths are the type's block: DequantizeRow cannot fail.
			_ = quant.DequantizeRow(t.Type, b, block)
			for j, v := range block {
				out[j] = float64(v)
			}
		}
	}
	i := 0
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				for ib := int64(0); ib < t.Ne[0]/bs; ib++ {
					off := ib*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
					decode(raw[off:off+ts], out[i:i+int(bs)])
					i += int(bs)
				}
			}
		}
	}
	return nil
}
