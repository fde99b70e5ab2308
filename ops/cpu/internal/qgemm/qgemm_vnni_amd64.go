//go:build amd64 && !purego

package qgemm

import "github.com/kernbench/kernbench/ops/cpu/internal/dot"

// VNNI panel kernels (qgemm_vnni_amd64.s): the AVX2 kernels' inputs and
// outputs, bit for bit, with VPDPBUSD on zmm registers for the int8 dot
// products. They need AVX-512 F/BW and AVX512_VNNI (the vnni tier).

// qgemmQ4_0VNNI is qgemmQ4_0AVX2 with VPDPBUSD; it also runs q5_0 panels
// (the same layout, whose int32 sums VPDPBUSD keeps exact as well).
//
//go:noescape
func qgemmQ4_0VNNI(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ8_0VNNI is qgemmQ8_0AVX2 with VPDPBUSD (by the q4_0 kernel's
// bias trick for blocks whose activation codes hold no -128).
//
//go:noescape
func qgemmQ8_0VNNI(panel, grp *byte, nb int, out *[32]float32)

// qgemmQ4_1VNNI is qgemmQ4_1AVX2 with VPDPBUSD; it also runs q5_1
// panels.
//
//go:noescape
func qgemmQ4_1VNNI(panel, grp *byte, nb int, out *[32]float32)

// Q4_0VNNI runs qgemmQ4_0VNNI on a q4_0 panel (as Q4_0AVX2; twin: Twin).
func Q4_0VNNI(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_0VNNI, PanelBlock, dot.PackQ8Block, nb, panel, grp, out)
}

// Q5_0VNNI runs qgemmQ4_0VNNI on a q5_0 panel (as Q5_0AVX2; twin: Twin).
func Q5_0VNNI(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_0VNNI, PanelBlock, dot.PackQ8Block, nb, panel, grp, out)
}

// Q8_0VNNI runs qgemmQ8_0VNNI (as Q8_0AVX2; twin: Twin).
func Q8_0VNNI(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ8_0VNNI, PanelBlock8, dot.PackQ8Block, nb, panel, grp, out)
}

// Q4_1VNNI runs qgemmQ4_1VNNI on a q4_1 panel with a packed q8_1 group
// (as Q4_1AVX2; twin: Twin).
func Q4_1VNNI(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_1VNNI, PanelBlock, dot.PackQ81Block, nb, panel, grp, out)
}

// Q5_1VNNI runs qgemmQ4_1VNNI on a q5_1 panel (as Q5_1AVX2; twin: Twin).
func Q5_1VNNI(nb int, panel, grp []byte, out *[32]float32) {
	kernel(qgemmQ4_1VNNI, PanelBlock, dot.PackQ81Block, nb, panel, grp, out)
}
