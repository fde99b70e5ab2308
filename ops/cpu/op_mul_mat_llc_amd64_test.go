//go:build amd64 && !purego

package cpu

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/quant"
)

// TestGemvLLCPath checks, on every tier with kernels for weights about
// the LLC's size, that MUL_MAT of one to three activation rows takes
// them exactly where the weights lie in the window (the backend's LLC
// size set about a small matrix's), the tier's gemv kernel elsewhere and
// for other types, and that the outputs are bit for bit those of the
// tier's gemv kernel (each gemvLLC kernel equals it).
func TestGemvLLCPath(t *testing.T) {
	ptr := func(f gemvFunc) uintptr { return reflect.ValueOf(f).Pointer() }
	ran := false
	for _, ks := range kernelSets() {
		for wt := range ks.gemvLLC {
			ran = true
			for _, n := range []int64{1, 3} {
				t.Run(fmt.Sprintf("%s/%v/n%d", ks.name, wt, n), func(t *testing.T) {
					b, err := NewWithOptions(Options{Tier: ks.name, Threads: 2})
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					const k, m = 512, 96
					rng := rand.New(rand.NewPCG(uint64(k), uint64(n)))
					a := mxLeaf(t, b, rng, "a", wt, k, m)
					x := mxLeaf(t, b, rng, "x", quant.F32, k, n)
					node, err := ops.MulMat(a, x)
					if err != nil {
						t.Fatal(err)
					}
					var calls atomic.Int64
					llcKernel := b.kern.gemvLLC[wt]
					b.kern = deriveKernels(b.kern, b.kern.name, func(ks *kernelSet) {
						ks.gemvLLC[wt] = func(nb int, x []byte, ldx int, y []byte, dy []float32, out *[4]float32) {
							calls.Add(1)
							llcKernel(nb, x, ldx, y, dy, out)
						}
					})
					var outs [2][]float32
					for i, llc := range []int64{a.Bytes(), 64 * a.Bytes()} {
						b.llcBytes = llc
						if g := b.gemvKernel(a); (i == 0) != (ptr(g) == ptr(b.kern.gemvLLC[wt])) {
							t.Fatalf("LLC of %d bytes, weights of %d: gemvKernel took the wrong kernel", llc, a.Bytes())
						}
						calls.Store(0)
						if err := mxCompute(t, b, node); err != nil {
							t.Fatal(err)
						}
						want, got := int64(m/4*n), calls.Load()
						if i == 0 && got != want {
							t.Fatalf("weights in the window: %d calls of the gemvLLC kernel, want %d", got, want)
						} else if i == 1 && got != 0 {
							t.Fatalf("weights past the window: %d calls of the gemvLLC kernel, want none", got)
						}
						outs[i] = append([]float32(nil), f32s(mem(node), 0, node.NumElements())...)
					}
					for o := range outs[0] {
						if !sameFloat(outs[0][o], outs[1][o]) {
							t.Fatalf("out[%d]: %g in the window, %g past it", o, outs[0][o], outs[1][o])
						}
					}
					b.llcBytes = a.Bytes()
					if f32w := mxLeaf(t, b, rng, "w", quant.F32, k, m); b.kern.gemvLLC[quant.F32] == nil && ptr(b.gemvKernel(f32w)) != ptr(b.kern.gemv[quant.F32]) {
						t.Error("f32 weights in the window did not take the tier's gemv kernel")
					}
				})
			}
		}
	}
	if !ran {
		t.Skip("no tier this CPU runs has kernels for weights about the LLC's size")
	}
}
