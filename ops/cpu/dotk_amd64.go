//go:build amd64 && !purego

package cpu

import "github.com/kernbench/kernbench/quant"

// K-format dot products (dotk_amd64.s). Each equals its generic function
// in vecdot_k.go bit for bit, given activations whose bsums are the sums
// of their codes.

//go:noescape
func dotQ2_KQ8_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ3_KQ8_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ4_KQ8_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ5_KQ8_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ6_KQ8_KAVX2(x, y *byte, nb int) float32

// avx2KTwin names a K-format dot product whose assembly equals the
// generic function bit for bit.
type avx2KTwin struct{ wt quant.Type }

// avx2KTwins lists the K formats registerAVX2K installs.
var avx2KTwins = []avx2KTwin{{quant.Q2_K}, {quant.Q3_K}, {quant.Q4_K}, {quant.Q5_K}, {quant.Q6_K}}

// registerAVX2K installs the K-format dot products in ks.
func registerAVX2K(ks *kernelSet) {
	for t, f := range map[quant.Type]func(x, y *byte, nb int) float32{
		quant.Q2_K: dotQ2_KQ8_KAVX2,
		quant.Q3_K: dotQ3_KQ8_KAVX2,
		quant.Q4_K: dotQ4_KQ8_KAVX2,
		quant.Q5_K: dotQ5_KQ8_KAVX2,
		quant.Q6_K: dotQ6_KQ8_KAVX2,
	} {
		ks.dots[t] = dotKernel{dot: blockDot(f, int(t.TypeSize()), bytesQ8_K, quant.QKK), actType: quant.Q8_K}
	}
}
