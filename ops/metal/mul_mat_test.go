package metal

import (
	"fmt"
	"testing"

	"github.com/kernbench/kernbench/harness"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestMMActVector checks which activations kb_mm_tile may read as vectors:
// f32 and f16 with packed elements and every column aligned, at an
// aligned offset, and nothing else.
func TestMMActVector(t *testing.T) {
	f32, err := ops.NewTensor("b", quant.F32, 64, 40)
	if err != nil {
		t.Fatal(err)
	}
	f16, _ := ops.NewTensor("b", quant.F16, 64, 40)
	f16odd, _ := ops.NewTensor("b", quant.F16, 66, 40) // 132-byte columns
	bf16, _ := ops.NewTensor("b", quant.BF16, 64, 40)
	tr, _ := ops.NewTensor("b", quant.F32, 40, 64)
	trv, err := ops.View(tr, []int64{64, 40, 1, 1}, []int64{160, 4, tr.Nb[2], tr.Nb[3]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    *ops.Tensor
		off  int64
		want int32
	}{
		{"f32", f32, 0, 1},
		{"f32 at offset 32", f32, 32, 1},
		{"f32 at offset 4", f32, 4, 0},
		{"f16", f16, 0, 2},
		{"f16 at offset 2", f16, 2, 0},
		{"f16 columns of 132 bytes", f16odd, 0, 0},
		{"bf16", bf16, 0, 0},
		{"f32 transposed", trv, 0, 0},
	} {
		if got := mmActVector(tc.b, tc.off); got != tc.want {
			t.Errorf("%s: mmActVector = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestMulMmActivationReads runs the simdgroup-matrix kernel (n > 4) on
// activations of each way kb_mm_tile reads them, which the harness's
// cases do not all reach there: f16 as half4 vectors and one at a time,
// bf16, and f32 whose columns are not 16-byte aligned (a view at an
// offset of one element).
func TestMulMmActivationReads(t *testing.T) {
	be := emulated(t)
	uni := harness.Uniform(-1, 1)
	type variant struct {
		name string
		bt   quant.Type
		k    int64
		off  int64 // elements the activations start past their leaf's first
	}
	for _, wt := range []quant.Type{quant.F16, quant.Q4_K, quant.F32} {
		for _, v := range []variant{
			{"f16 half4", quant.F16, 256, 0},
			{"f16 scalar", quant.F16, 256, 1},
			{"bf16", quant.BF16, 256, 0},
			{"f32 misaligned", quant.F32, 256, 1},
		} {
			m, n := int64(70), int64(37)
			c := harness.Case{
				Name: fmt.Sprintf("%s,%s", wt, v.name), Op: ops.OpMulMat, Types: []quant.Type{wt, v.bt},
				Build: func(b *harness.Builder) (*ops.Tensor, error) {
					a := b.Leaf("a", wt, uni, v.k, m)
					x := b.Leaf("b", v.bt, uni, v.k*n+v.off)
					if b.Err() != nil {
						return nil, b.Err()
					}
					es := int64(v.bt.TypeSize())
					xv, err := ops.View(x, []int64{v.k, n, 1, 1}, []int64{es, es * v.k, es * v.k * n, es * v.k * n}, v.off*es)
					if err != nil {
						return nil, err
					}
					return ops.MulMat(a, xv)
				},
			}
			r := harness.Run(be, c)
			if !r.Passed() {
				t.Errorf("%s: %s %s", c.Name, r.Summary(), r.Err)
			}
		}
	}
}

// TestMulMmRawCopy runs the simdgroup-matrix kernel (n > 8) on the weight
// types whose rows kb_mm_tile copies raw into threadgroup memory, at
// bindings and strides that move the copy's 16-byte words against the
// blocks: rows 16-byte apart or not (q6_K's 210 bytes, q4_0's 18 per
// block), a row of a partial stage (k not a multiple of 256), a binding
// offset of one block (the first word partly before the weights, copied
// a byte at a time), and a last tile of 6 rows.
func TestMulMmRawCopy(t *testing.T) {
	be := emulated(t)
	uni := harness.Uniform(-1, 1)
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.IQ4_NL,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		if mmRawStride(wt) == 0 {
			t.Errorf("%v: no raw copy", wt)
			continue
		}
		bs := wt.BlockSize()
		for _, v := range []struct {
			name   string
			k      int64
			blocks int64 // the weights' binding offset, in blocks
		}{
			{"two stages", 2 * 256, 0},
			{"partial stage", 288, 0}, // the legacy types only
			{"offset", 256, 1},
		} {
			if v.k%bs != 0 {
				continue
			}
			m, n := int64(70), int64(37)
			c := harness.Case{
				Name: fmt.Sprintf("%s,%s", wt, v.name), Op: ops.OpMulMat, Types: []quant.Type{wt, quant.F32},
				Build: func(b *harness.Builder) (*ops.Tensor, error) {
					a := b.Leaf("a", wt, uni, v.k*m+bs*v.blocks)
					x := b.Leaf("b", quant.F32, uni, v.k, n)
					if b.Err() != nil {
						return nil, b.Err()
					}
					rb := v.k / bs * int64(wt.TypeSize())
					av, err := ops.View(a, []int64{v.k, m}, []int64{0, rb}, v.blocks*int64(wt.TypeSize()))
					if err != nil {
						return nil, err
					}
					return ops.MulMat(av, x)
				},
			}
			if r := harness.Run(be, c); !r.Passed() {
				t.Errorf("%s: %s %s", c.Name, r.Summary(), r.Err)
			}
		}
	}
}

// TestMMShared checks kb_mm_tile's threadgroup memory against the 32 KiB
// of an Apple GPU for every weight type, and that the raw copy's rows
// hold the 16-byte words of a stage's bytes at any even offset of a word,
// an odd number of 8-byte words apart.
func TestMMShared(t *testing.T) {
	for ty := quant.Type(0); ty < 64; ty++ {
		if !isWeightType(ty) {
			continue
		}
		if got := mmShared(ty); got > 32<<10 {
			t.Errorf("%v: %d bytes of threadgroup memory", ty, got)
		}
		rs := mmRawStride(ty)
		if rs == 0 {
			continue
		}
		rb := int(ty.TypeSize()) * mmStage / int(ty.BlockSize())
		if rs < 16*((rb+14+15)/16) || rs%8 != 0 || rs/8%2 != 1 {
			t.Errorf("%v: row stride %d for %d bytes", ty, rs, rb)
		}
	}
}

// TestMulMvRawCopy runs the matrix-vector kernel (n <= 8) on the weight
// types whose rows kb_mul_mv copies raw into threadgroup memory, at
// bindings and strides that move the copy's 16-byte words against the
// blocks: rows 16-byte apart or not, two stages and a partial one (k
// past KB_MV_STAGE/NR), a binding offset of one block (the first word
// partly before the weights, copied a byte at a time), rows with a gap
// between them, a last simdgroup of fewer than NR rows and three
// columns.
func TestMulMvRawCopy(t *testing.T) {
	be := emulated(t)
	uni := harness.Uniform(-1, 1)
	for _, wt := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q8_1,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_K} {
		if mvRawStride(wt) == 0 {
			t.Errorf("%v: no raw copy", wt)
			continue
		}
		bs := wt.BlockSize()
		stage := mvStage / mvTypeRows(wt)
		for _, v := range []struct {
			name   string
			k      int64
			blocks int64 // the weights' binding offset, in blocks
			gap    int64 // blocks between rows (moving rows of q4_0, q6_K, ... off 16 bytes)
			n      int64
		}{
			{"one stage", 256, 0, 0, 1},
			{"stage and a part", stage + 256, 0, 0, 1},
			{"legacy partial", 288, 0, 0, 1}, // the legacy types only
			{"offset", 512, 1, 0, 3},
			{"gap", 256, 0, 1, 2},
			{"offset and gap", stage + 512, 1, 3, 1},
		} {
			if v.k%bs != 0 {
				continue
			}
			m := int64(13)
			nb1 := (v.k/bs + v.gap) * int64(wt.TypeSize())
			c := harness.Case{
				Name: fmt.Sprintf("%s,%s", wt, v.name), Op: ops.OpMulMat, Types: []quant.Type{wt, quant.F32},
				Build: func(b *harness.Builder) (*ops.Tensor, error) {
					// Whole blocks: the offset's, then m rows of k/bs blocks
					// and the gap's.
					a := b.Leaf("a", wt, uni, bs*(v.blocks+m*(v.k/bs+v.gap)))
					x := b.Leaf("b", quant.F32, uni, v.k, v.n)
					if b.Err() != nil {
						return nil, b.Err()
					}
					av, err := ops.View(a, []int64{v.k, m}, []int64{0, nb1}, v.blocks*int64(wt.TypeSize()))
					if err != nil {
						return nil, err
					}
					return ops.MulMat(av, x)
				},
			}
			if r := harness.Run(be, c); !r.Passed() {
				t.Errorf("%s: %s %s", c.Name, r.Summary(), r.Err)
			}
		}
	}
}

// TestMVShared checks kb_mul_mv's threadgroup memory against the 32 KiB of
// an Apple GPU for every weight type, and that a row's raw copy holds the
// 16-byte words of a stage's bytes at any even offset of a word.
func TestMVShared(t *testing.T) {
	for ty := quant.Type(0); ty < 64; ty++ {
		if !isWeightType(ty) {
			continue
		}
		if got := mvShared(ty); got > 32<<10 || got%16 != 0 {
			t.Errorf("%v: %d bytes of threadgroup memory", ty, got)
		}
		rs := mvRawStride(ty)
		if rs == 0 {
			continue
		}
		rb := int(ty.TypeSize()) * (mvStage / int(mvTypeRows(ty)) / int(ty.BlockSize()))
		if rs < 16*((rb+14+15)/16) || rs%16 != 0 {
			t.Errorf("%v: row stride %d for %d bytes", ty, rs, rb)
		}
	}
}

// TestMulMvVectorReads runs the matrix-vector kernel on the ways it reads
// float rows and activations: one 16-byte vector of f16 or bf16 (two
// float4 of f32) where the rows or columns are 16-byte aligned, one
// element at a time where they are not (f16 8 bytes past a boundary, f32
// 4), with k no multiple of 8 (the rows' tail).
func TestMulMvVectorReads(t *testing.T) {
	be := emulated(t)
	uni := harness.Uniform(-1, 1)
	for _, wt := range []quant.Type{quant.F16, quant.BF16, quant.F32, quant.Q4_0} {
		for _, bt := range []quant.Type{quant.F32, quant.F16} {
			for _, v := range []struct {
				name       string
				k          int64
				aoff, boff int64 // elements the weights and activations start past their leaves'
			}{
				{"aligned", 512, 0, 0},
				{"activations off 8 bytes", 512, 0, 8 / int64(bt.TypeSize())},
				{"weights off 8 bytes", 512, 8 / int64(wt.TypeSize()), 0},
				{"tail", 300, 0, 0},
			} {
				if v.k%wt.BlockSize() != 0 || v.aoff%wt.BlockSize() != 0 {
					continue
				}
				m, n := int64(11), int64(2)
				c := harness.Case{
					Name: fmt.Sprintf("%s,%s,%s", wt, bt, v.name), Op: ops.OpMulMat, Types: []quant.Type{wt, bt},
					Build: func(b *harness.Builder) (*ops.Tensor, error) {
						a := b.Leaf("a", wt, uni, v.k*m+v.aoff)
						x := b.Leaf("b", bt, uni, v.k*n+v.boff)
						if b.Err() != nil {
							return nil, b.Err()
						}
						bb := int64(wt.TypeSize())
						av, err := ops.View(a, []int64{v.k, m}, []int64{bb, v.k / wt.BlockSize() * bb}, v.aoff/wt.BlockSize()*bb)
						if err != nil {
							return nil, err
						}
						es := int64(bt.TypeSize())
						xv, err := ops.View(x, []int64{v.k, n}, []int64{es, es * v.k}, v.boff*es)
						if err != nil {
							return nil, err
						}
						return ops.MulMat(av, xv)
					},
				}
				if r := harness.Run(be, c); !r.Passed() {
					t.Errorf("%s: %s %s", c.Name, r.Summary(), r.Err)
				}
			}
		}
	}
}
