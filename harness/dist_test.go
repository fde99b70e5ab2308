package harness

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernbench/kernbench/quant"
)

func TestDistValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ne := [4]int64{6, 4, 2, 1}
	n := 48

	u := Uniform(-2, 3).values(r, ne)
	if len(u) != n || slices.Min(u) < -2 || slices.Max(u) >= 3 {
		t.Errorf("uniform: %v", u)
	}

	ids := DistinctInts(0, 6).values(r, ne)
	for row := 0; row < n/6; row++ {
		x := slices.Clone(ids[row*6 : row*6+6])
		slices.Sort(x)
		if !slices.Equal(x, []float64{0, 1, 2, 3, 4, 5}) {
			t.Errorf("distinct ids row %d: %v", row, ids[row*6:row*6+6])
		}
	}

	pos := Positions(100000).values(r, [4]int64{3, 1, 1, 1})
	if !slices.Equal(pos, []float64{100000, 100001, 100002}) {
		t.Errorf("positions: %v", pos)
	}

	// causal [n_kv=6, n_q=4]: query q sees keys j <= q + 2.
	m := Causal().values(r, ne)
	for i, v := range m {
		j, q := int64(i)%6, int64(i)/6%4
		if masked := math.IsInf(v, -1); masked != (j > q+2) || !masked && v != 0 {
			t.Errorf("causal (%d,%d) = %v", j, q, v)
		}
	}

	rows := Uniform(0, 1).WithMaskedRows(1, 3).values(r, ne)
	for i, v := range rows {
		row := int64(i) / 6 % 4
		if (row == 1 || row == 3) != math.IsInf(v, -1) {
			t.Errorf("masked rows: element %d (row %d) = %v", i, row, v)
		}
	}

	mk := Mask(1, 0, 0).values(r, ne)
	for _, v := range mk {
		if !math.IsInf(v, -1) {
			t.Fatalf("mask p=1: %v", v)
		}
	}
}

func TestDistCheck(t *testing.T) {
	ne := [4]int64{4, 2, 1, 1}
	tests := []struct {
		d  Dist
		ok bool
	}{
		{Uniform(-1, 1), true},
		{Uniform(1, -1), false},
		{Uniform(math.Inf(-1), 0), false},
		{Normal(0, -1), false},
		{Ints(0, 4), true},
		{Ints(3, 3), false},
		{Dist{Kind: DistInts, Lo: 0.5, Hi: 3}, false},
		{DistinctInts(0, 4), true},
		{DistinctInts(0, 3), false},
		{Mask(1.5, 0, 1), false},
		{Causal().WithMaskedRows(1), true},
		{Causal().WithMaskedRows(2), false},
		{Dist{Kind: DistKind(99)}, false},
	}
	for _, tt := range tests {
		if err := tt.d.check(ne); (err == nil) != tt.ok {
			t.Errorf("%v: check = %v, want ok=%v", tt.d, err, tt.ok)
		}
	}
}

func TestEncodeInts(t *testing.T) {
	if _, err := encode(quant.I8, 2, []float64{1, 200}); err == nil {
		t.Error("i8 200: want an error")
	}
	if _, err := encode(quant.I32, 2, []float64{1, 0.5}); err == nil {
		t.Error("i32 0.5: want an error")
	}
	b, err := encode(quant.I32, 2, []float64{-1, 7})
	if err != nil || !slices.Equal(b, []byte{0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0}) {
		t.Errorf("i32: %v %v", b, err)
	}
}
