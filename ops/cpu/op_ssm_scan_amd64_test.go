//go:build amd64 && !purego

package cpu

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu/internal/simd/simdtest"
	"github.com/kernbench/kernbench/ops/cpu/internal/ssm"
	"github.com/kernbench/kernbench/ops/tuning"
)

// TestSSMTile512Off checks SSMTile512 = 0: an avx512 or vnni backend
// opened with it runs AVX2's tiled SSM_SCAN kernel and the tier's other
// scan and conv kernels, the tier's table untouched; one opened with 1 or
// the defaults the zmm one; and a Mamba-2 scan over several tokens (the
// tiled path) gives the same bytes either way.
func TestSSMTile512Off(t *testing.T) {
	simdtest.NeedAVX512(t)
	ptr := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	tiers := map[string]*kernelSet{"avx512": avx512Kernels}
	if simdtest.HasVNNI() {
		tiers["vnni"] = vnniKernels
	}
	for tier, table := range tiers {
		bOff := openTuned(t, tier, tuning.Values{SSMTile512.Name: 0})
		bOn := openTuned(t, tier, tuning.Values{SSMTile512.Name: 1})
		def := openTuned(t, tier, tuning.Values{})
		if ptr(bOff.kern.ssm.scanSTile) != ptr(ssm.ScanSTileAVX2) {
			t.Errorf("%s, tile_512 0: the tiled scan is not AVX2's", tier)
		}
		for _, b := range []*Backend{bOn, def} {
			if ptr(b.kern.ssm.scanSTile) != ptr(ssm.ScanSTileAVX512) {
				t.Errorf("%s, tile_512 %d: the tiled scan is not the zmm one", tier, b.tuned.values.Get(SSMTile512))
			}
		}
		if ptr(table.ssm.scanSTile) != ptr(ssm.ScanSTileAVX512) {
			t.Errorf("%s: tile_512 0 changed the tier's table", tier)
		}
		rest := func(s *ssmKernels) string {
			c := *s
			c.scanSTile = nil
			return fmt.Sprint(c)
		}
		if rest(bOff.kern.ssm) != rest(def.kern.ssm) || fmt.Sprint(bOff.kern.gemv, bOff.kern.gemm) != fmt.Sprint(def.kern.gemv, def.kern.gemm) {
			t.Errorf("%s: tile_512 0 changed more than the tiled scan", tier)
		}

		e := newRowOpEnv(t)
		node := e.scan(scanShape{dState: 32, headDim: 8, nHead: 4, nGroup: 2, nTok: 7, nSeqs: 1, nRS: 1, mamba2: true, ids: []float64{0}}, nil)
		if err := ops.AllocTensor(e.alloc, node, 64); err != nil {
			t.Fatal(err)
		}
		buf, off := node.Storage()
		mem := buf.(*ops.HostBuffer).Bytes()
		mark := footprint(node, off, len(mem))
		var outs [2][]byte
		for i, b := range []*Backend{bOff, bOn} {
			for j := range mem {
				if mark[j] {
					mem[j] = 0xff
				}
			}
			if err := b.Compute(node); err != nil {
				t.Fatal(err)
			}
			for j := range mem {
				if mark[j] {
					outs[i] = append(outs[i], mem[j])
				}
			}
		}
		if bytes.Count(outs[1], []byte{0xff, 0xff, 0xff, 0xff}) > len(outs[1])/64 {
			t.Fatalf("%s: the scan left its result unwritten", tier)
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("%s: SSM_SCAN with tile_512 0 and 1 differ", tier)
		}
	}
}
