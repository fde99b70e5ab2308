//go:build amd64 && !purego

package qgemm

import (
	"unsafe"

	"github.com/kernbench/kernbench/ops/cpu/internal/simd"
)

// VNNI K-format panel kernels (kpanel_vnni_amd64.s): the AVX2 kernels'
// inputs and outputs, bit for bit, with VPDPBUSD on zmm registers. They
// need AVX-512 F/BW and AVX512_VNNI (the vnni tier).

// q4KVNNI is the q4_K and q5_K panel kernel with VPDPBUSD (twins:
// TwinQ4_K, TwinQ5_K).
//
//go:noescape
func q4KVNNI(nb int, panel, y *byte, ldy int, out *[32]float32)

// q6KVNNI is the q6_K panel kernel with VPDPBUSD (twin: TwinQ6_K).
//
//go:noescape
func q6KVNNI(nb int, panel, y *byte, ldy int, out *[32]float32)

// Q4_KVNNI is Q4_KAVX2 with VPDPBUSD. The caller checks the CPU has
// AVX512_VNNI.
func Q4_KVNNI(nb int, panel, y []byte, ldy int, out *[32]float32) {
	kpanel(q4KVNNI, PanelQ4_K, nb, panel, y, ldy, out)
}

// Q5_KVNNI is Q5_KAVX2 with VPDPBUSD (the q4_K kernel, which q5_K's
// 5-bit codes need no change of).
func Q5_KVNNI(nb int, panel, y []byte, ldy int, out *[32]float32) {
	kpanel(q4KVNNI, PanelQ4_K, nb, panel, y, ldy, out)
}

// Q6_KVNNI is Q6_KAVX2 with VPDPBUSD.
func Q6_KVNNI(nb int, panel, y []byte, ldy int, out *[32]float32) {
	kpanel(q6KVNNI, PanelQ6_K, nb, panel, y, ldy, out)
}

// kpanel checks the bounds the assembly relies on (ps panel bytes per
// super-block, four q8_K rows ldy bytes apart) and runs f.
func kpanel(f func(nb int, panel, y *byte, ldy int, out *[32]float32), ps, nb int, panel, y []byte, ldy int, out *[32]float32) {
	if nb <= 0 {
		return
	}
	_, _ = panel[nb*ps-1], y[3*ldy+nb*simd.BytesQ8_K-1]
	f(nb, unsafe.SliceData(panel), unsafe.SliceData(y), ldy, out)
}
