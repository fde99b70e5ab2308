package quant

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"testing"
)

// TestIQTables pins the generated code tables to the SHA-256 of ggml's
// own (a C program including ggml-common.h wrote each table's bytes,
// little-endian as in memory on x86-64) and checks what the formats need
// of them: the magnitudes each grid may hold, entries distinct, and the
// sign table's even parity.
func TestIQTables(t *testing.T) {
	le64 := func(v []uint64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, x)
		}
		return b
	}
	le32 := func(v []uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		bytes  []byte
		digest string
		width  int     // bytes per entry
		values []uint8 // the bytes an entry may hold
	}{
		{"iq2xxs_grid", le64(IQ2XXSGrid[:]), "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54", 8, []uint8{8, 25, 43}},
		{"iq2xs_grid", le64(IQ2XSGrid[:]), "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de", 8, []uint8{8, 25, 43}},
		{"iq2s_grid", le64(IQ2SGrid[:]), "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88", 8, []uint8{8, 25, 43}},
		{"iq3xxs_grid", le32(IQ3XXSGrid[:]), "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d", 4, []uint8{4, 12, 20, 28, 36, 44, 52, 62}},
		{"iq3s_grid", le32(IQ3SGrid[:]), "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f", 4, []uint8{1, 3, 5, 7, 9, 11, 13, 15}},
		{"iq1s_grid", le64(IQ1SGrid[:]), "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a", 8, []uint8{0xff, 0, 1}},
		{"ksigns_iq2xs", KSignsIQ2XS[:], "a76742a603f8beca5212ecce0f1f02f11a4887fd2f7c8b15aca0ea3eb3380c31", 1, nil},
	} {
		if got := digest(tc.bytes); got != tc.digest {
			t.Errorf("%s: SHA-256 %s, want %s", tc.name, got, tc.digest)
		}
		if tc.values == nil {
			continue
		}
		seen := map[string]bool{}
		for i := 0; i < len(tc.bytes); i += tc.width {
			e := tc.bytes[i : i+tc.width]
			for _, v := range e {
				if !slices.Contains(tc.values, v) {
					t.Errorf("%s entry %d: byte %d not one of %v", tc.name, i/tc.width, v, tc.values)
				}
			}
			if seen[string(e)] {
				t.Errorf("%s entry %d repeats an earlier one", tc.name, i/tc.width)
			}
			seen[string(e)] = true
		}
	}
	for i, s := range KSignsIQ2XS {
		if int(s&127) != i || bits.OnesCount8(s)%2 != 0 {
			t.Errorf("KSignsIQ2XS[%d] = %#02x: want the code in bits 0..6 and even parity", i, s)
		}
	}
	// Known entries, read off ggml-common.h.
	if IQ2XXSGrid[1] != 0x080808080808082b || IQ2SGrid[1023] != 0x2b2b2b2b2b2b2b2b ||
		IQ3XXSGrid[0] != 0x04040404 || IQ1SGrid[0] != 0xffffffffffffffff || IQ1SGrid[2047] != 0x0101010101010101 {
		t.Errorf("known entries differ: %#x %#x %#x %#x %#x", IQ2XXSGrid[1], IQ2SGrid[1023], IQ3XXSGrid[0], IQ1SGrid[0], IQ1SGrid[2047])
	}
}

// TestRandomBlocksRefuses checks RandomBlocks' errors: a type it does not
// make, a length that is not whole blocks.
func TestRandomBlocksRefuses(t *testing.T) {
	if err := RandomBlocks(Q4_K, make([]byte, sizeQ4_K), 1); err == nil {
		t.Error("RandomBlocks(q4_K): no error")
	}
	if err := RandomBlocks(IQ2_XXS, make([]byte, sizeIQ2_XXS+1), 1); err == nil {
		t.Error("RandomBlocks(iq2_xxs, 67 bytes): no error")
	}
	// Every block decodes to finite values.
	for _, typ := range gridTypes {
		b := make([]byte, 32*typ.TypeSize())
		if err := RandomBlocks(typ, b, 7); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, 32*QKK)
		if err := DequantizeRow(typ, b, y); err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%v: element %d = %g", typ, i, v)
			}
		}
	}
}

// weightedGrid are the codebook quantizers that take importance weights,
// with the per-super-block RMS bound (relative to amax) each keeps on the
// test distributions with unit weights.
var weightedGrid = []struct {
	typ      Type
	quantize func(x []float32, y []byte, qw []float32)
	rmsFrac  float64
}{
	// 256 grid entries: a constant group of 8 lands on a mix of levels
	// (amax/3.06 RMS on "constant").
	{IQ2_XXS, quantizeIQ2_XXSWith, 0.35},
	{IQ2_XS, quantizeIQ2_XSWith, 1.0 / 4},
	// Three values a sub-block (amax/3.6 RMS on "steps" for both).
	{IQ1_S, quantizeIQ1_SWith, 0.32},
	{IQ1_M, quantizeIQ1_MWith, 0.32},
	{IQ2_S, quantizeIQ2_SWith, 1.0 / 4},
	{IQ3_XXS, quantizeIQ3_XXSWith, 1.0 / 5},
	{IQ3_S, quantizeIQ3_SWith, 1.0 / 5},
}

// TestWeightedRoundTrip bounds the round-trip error of the weighted
// codebook quantizers with unit weights (the bounds of TestRoundTripNew;
// IQ2_XS as IQ2_S).
func TestWeightedRoundTrip(t *testing.T) {
	for _, wq := range weightedGrid {
		for di, d := range dists {
			r := &rng{s: uint64(31*di + 2)}
			x := make([]float32, 2*QKK)
			d.gen(r, x)
			qw := make([]float32, len(x))
			for i := range qw {
				qw[i] = 1
			}
			y := make([]byte, 2*wq.typ.TypeSize())
			wq.quantize(x, y, qw)
			got := make([]float32, len(x))
			if err := DequantizeRow(wq.typ, y, got); err != nil {
				t.Fatal(err)
			}
			for b := range 2 {
				var amax, se float64
				for i := QKK * b; i < QKK*(b+1); i++ {
					amax = math.Max(amax, math.Abs(float64(x[i])))
					e := float64(x[i] - got[i])
					se += e * e
				}
				if rmse := math.Sqrt(se / QKK); rmse > amax*wq.rmsFrac {
					t.Errorf("%v %s block %d: RMS error %g > %g", wq.typ, d.name, b, rmse, amax*wq.rmsFrac)
				}
			}
		}
	}
}

// FuzzQuantizeWeighted runs the weighted codebook quantizers on arbitrary
// values and weights (NaN, infinities, negative weights among them):
// they must not panic, and the blocks must decode.
func FuzzQuantizeWeighted(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0xbf}, 50), uint8(0), int8(1))
	f.Add(bytes.Repeat([]byte{0x12, 0x34, 0x56, 0x3f}, 300), uint8(1), int8(-1))
	f.Fuzz(func(t *testing.T, data []byte, ti uint8, w int8) {
		wq := weightedGrid[int(ti)%len(weightedGrid)]
		x := make([]float32, QKK)
		for i := range x {
			if 4*i+4 <= len(data) {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			}
		}
		qw := make([]float32, QKK)
		for i := range qw {
			qw[i] = float32(w) * float32(1+i%3)
		}
		y := make([]byte, wq.typ.TypeSize())
		wq.quantize(x, y, qw)
		if err := DequantizeRow(wq.typ, y, x); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSortPairs checks the merge order IQ1_S and IQ1_M take from glibc's
// qsort: ascending by value, equal values in their original order (a
// stable sort), on inputs with many ties.
func TestSortPairs(t *testing.T) {
	r := &rng{s: 17}
	for _, n := range []int{16, 32} {
		for range 50 {
			xb := make([]float32, n)
			for i := range xb {
				xb[i] = float32(r.next()%5) - 2
			}
			idx, tmp := make([]int, n), make([]int, n)
			sortPairs(xb, idx, tmp)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(xb[a], xb[b]) })
			if !slices.Equal(idx, want) {
				t.Fatalf("sortPairs(%v) = %v, want %v", xb, idx, want)
			}
		}
	}
}
