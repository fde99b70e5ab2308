//go:build amd64 && !purego

package qgemm

import "unsafe"

// gemmQ4_K8x4AVX2 is the q4_K panel kernel (twin: GemmQ4_K8x4Twin):
// out[8c+r] += the dot product of panel row r with the q8_K row at
// y + c*ldy, over nb super-blocks.
//
//go:noescape
func gemmQ4_K8x4AVX2(nb int, panel, y *byte, ldy int, out *[32]float32)

// GemmQ4_K8x4AVX2 is the AVX2 q4_K panel kernel on slices: panel holds
// nb*PanelQ4_K bytes and y four q8_K rows of nb super-blocks, ldy bytes
// apart. The caller checks the CPU has AVX2.
func GemmQ4_K8x4AVX2(nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*PanelQ4_K-1], y[3*ldy+nb*bytesQ8_K-1]
	gemmQ4_K8x4AVX2(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}

// gemmQ6_K8x4AVX2 is the q6_K panel kernel (twin: GemmQ6_K8x4Twin).
//
//go:noescape
func gemmQ6_K8x4AVX2(nb int, panel, y *byte, ldy int, out *[32]float32)

// GemmQ6_K8x4AVX2 is the AVX2 q6_K panel kernel on slices, as
// GemmQ4_K8x4AVX2.
func GemmQ6_K8x4AVX2(nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*PanelQ6_K-1], y[3*ldy+nb*bytesQ8_K-1]
	gemmQ6_K8x4AVX2(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}
