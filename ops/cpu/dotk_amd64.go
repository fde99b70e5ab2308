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

// avx2KTwins lists the K formats whose avx2 dot products are assembly.
var avx2KTwins = []avx2KTwin{{quant.Q2_K}, {quant.Q3_K}, {quant.Q4_K}, {quant.Q5_K}, {quant.Q6_K}}
