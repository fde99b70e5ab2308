package qgemm

import "github.com/kernbench/kernbench/ops/cpu/internal/simd"

// The q5_K panel kernel is the q4_K one (kq4.go) with 5-bit codes: the
// panel has the q4_K layout (PanelQ4_K bytes per super-block) holding
// codes 0..31, and since a VPMADDUBSW pair then reaches 2*31*128 = 7936,
// the int16 sums run over four vectors (31744) rather than eight before
// VPMADDWD widens them with the sub-block's scales.

// RepackQ5_K writes super-blocks [0, nb) of the eight q5_K weight rows
// w[r*ld:] into panel (nb*PanelQ4_K bytes).
func RepackQ5_K(panel, w []byte, ld, nb int64) {
	repackQ45K(panel, w, ld, nb, simd.BytesQ5_K)
}

// TwinQ5_K is the q5_K kernel's bit-exact twin: TwinQ4_K with int16
// sums over four vectors.
func TwinQ5_K(nb int, panel, y []byte, ldy int, out *[32]float32) {
	twinQ45K(nb, panel, y, ldy, out, 4)
}
