//go:build amd64 && !purego

package cpu

import (
	"github.com/kernbench/kernbench/ops/cpu/internal/qgemm"
	"github.com/kernbench/kernbench/quant"
)

// avx2KTiles are the AVX2 K-format panel kernels (kgemm.go).
var avx2KTiles = map[quant.Type]*kTile{
	quant.Q4_K: {block: qgemm.PanelQ4_K, minN: 4, repack: qgemm.RepackQ4_K8, kernel: qgemm.GemmQ4_K8x4AVX2},
	quant.Q6_K: {block: qgemm.PanelQ6_K, minN: 4, repack: qgemm.RepackQ6_K8, kernel: qgemm.GemmQ6_K8x4AVX2},
}

// withKTile attaches the AVX2 panel kernel of weight type t to the
// K-format kernel g and returns g.
func withKTile(g *gemmKernel, t quant.Type) *gemmKernel {
	kTiles[g] = avx2KTiles[t]
	return g
}
