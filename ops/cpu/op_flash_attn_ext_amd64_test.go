//go:build amd64 && !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// faOneKeyVec returns the AVX2 row kernels with FLASH_ATTN_EXT's
// multi-key and q8_0 kernels replaced by the one-key-at-a-time path they
// stand for: no dot2F16 (one dot kernel call per key), axpy4/axpy4F16 as
// four axpy/axpyF16 calls, axpyQ8_0 as quant.DequantizeRow then axpy.
func faOneKeyVec() vecKernels {
	vk := avx2Kernels.vec
	vk.dot2F16 = nil
	vk.axpy4 = func(acc, x0, x1, x2, x3 []float32, s0, s1, s2, s3 float32) {
		for i, x := range [][]float32{x0, x1, x2, x3} {
			avx2Kernels.vec.axpy(acc, x, [4]float32{s0, s1, s2, s3}[i])
		}
	}
	vk.axpy4F16 = func(acc []float32, x0, x1, x2, x3 []uint16, s0, s1, s2, s3 float32) {
		for i, x := range [][]uint16{x0, x1, x2, x3} {
			avx2Kernels.vec.axpyF16(acc, x, [4]float32{s0, s1, s2, s3}[i])
		}
	}
	vk.axpyQ8_0 = func(acc []float32, x []byte, s float32) {
		tmp := make([]float32, len(acc))
		if err := quant.DequantizeRow(quant.Q8_0, x[:34*(len(acc)/32)], tmp); err != nil {
			panic(err)
		}
		avx2Kernels.vec.axpy(acc, tmp, s)
	}
	return vk
}

// TestFlashAttnRowKernelsExact checks that the AVX2 tier's FLASH_ATTN_EXT
// with its multi-key score and value kernels (dot2F16, axpy4, axpy4F16)
// and the q8_0 value kernel gives the same bits as with one key at a time
// (faOneKeyVec), over masks that break the key groups at random places.
func TestFlashAttnRowKernelsExact(t *testing.T) {
	needAVX2(t)
	faNoBlock = true // the row kernels (f16 block scores sum in their own order)
	defer func() { faNoBlock = false }()
	rng := rand.New(rand.NewPCG(41, 42))
	oneKey := avx2Kernels.extend("avx2-one-key")
	oneKey.vec = faOneKeyVec()
	pairs := [][2]quant.Type{
		{quant.F16, quant.F16}, {quant.F32, quant.F32}, {quant.F16, quant.Q8_0}, {quant.Q8_0, quant.Q8_0}, {quant.F16, quant.F32},
	}
	cases := []faCase{
		{name: "nomask", d: 128, dv: 128, nQ: 3, nKV: 150, nHead: 4, nHeadKV: 2, q3: 1, k3: 1, noMask: true, maskedQuery: -1},
		{name: "mask", d: 64, dv: 64, nQ: 4, nKV: 133, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: 2, sinks: true},
		{name: "d40", d: 40, dv: 40, nQ: 2, nKV: 71, nHead: 2, nHeadKV: 2, q3: 1, k3: 1, mask: quant.F32, maskedQuery: -1},
		{name: "softcap", d: 64, dv: 96, nQ: 2, nKV: 66, nHead: 2, nHeadKV: 1, q3: 1, k3: 1, mask: quant.F16, maskedQuery: -1},
	}
	for _, c := range cases {
		c.params.Scale = 0.125
		if c.name == "softcap" {
			c.params.Softcap = 5
		}
		for _, p := range pairs {
			if p[1] == quant.Q8_0 && c.dv%32 != 0 || p[0] == quant.Q8_0 && c.d%32 != 0 {
				continue
			}
			seed := rng.Uint64()
			t.Run(c.name+"/k="+p[0].String()+",v="+p[1].String(), func(t *testing.T) {
				var outs [2][]float32
				for i, ks := range []*kernelSet{avx2Kernels, oneKey} {
					b, err := NewWithOptions(Options{Threads: 2, Tier: "avx2"})
					if err != nil {
						t.Fatal(err)
					}
					b.kern = ks
					// The same seed: both backends get the same operands.
					node := faBuild(t, b, rand.New(rand.NewPCG(seed, 7)), c, p[0], p[1])
					if err := mxCompute(t, b, node); err != nil {
						t.Fatal(err)
					}
					outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
					b.Close()
				}
				for i := range outs[0] {
					if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) && !(outs[0][i] != outs[0][i] && outs[1][i] != outs[1][i]) {
						t.Fatalf("element %d: multi-key %g, one key %g", i, outs[0][i], outs[1][i])
					}
				}
			})
		}
	}
}
