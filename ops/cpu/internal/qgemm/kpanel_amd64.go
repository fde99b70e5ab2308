//go:build amd64 && !purego

package qgemm

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// q4KAVX2 is the q4_K panel kernel (twin: TwinQ4_K):
// out[8c+r] += the dot product of panel row r with the q8_K row at
// y + c*ldy, over nb super-blocks.
//
//go:noescape
func q4KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)

// Q4_KAVX2 is the AVX2 q4_K panel kernel on slices: panel holds
// nb*PanelQ4_K bytes and y four q8_K rows of nb super-blocks, ldy bytes
// apart. The caller checks the CPU has AVX2.
func Q4_KAVX2(nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*PanelQ4_K-1], y[3*ldy+nb*simd.BytesQ8_K-1]
	q4KAVX2(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}

// q6KAVX2 is the q6_K panel kernel (twin: TwinQ6_K).
//
//go:noescape
func q6KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)

// Q6_KAVX2 is the AVX2 q6_K panel kernel on slices, as
// Q4_KAVX2.
func Q6_KAVX2(nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*PanelQ6_K-1], y[3*ldy+nb*simd.BytesQ8_K-1]
	q6KAVX2(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}

// q5KAVX2 is the q5_K panel kernel (twin: TwinQ5_K).
//
//go:noescape
func q5KAVX2(nb int, panel, y *byte, ldy int, out *[32]float32)

// Q5_KAVX2 is the AVX2 q5_K panel kernel on slices (panels in the q4_K
// layout, PanelQ4_K bytes per super-block), as Q4_KAVX2.
func Q5_KAVX2(nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*PanelQ4_K-1], y[3*ldy+nb*simd.BytesQ8_K-1]
	q5KAVX2(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}
