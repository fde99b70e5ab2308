//go:build amd64 && !purego

package dot

// K-format dot products (dotk_amd64.s, gemmk_amd64.s). Each equals its
// generic function in k.go bit for bit, given activations whose bsums are
// the sums of their codes.

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
