package quant

import (
	"strings"
	"testing"
)

// goldenImportance returns the importance weights of TestGoldenWeighted:
// one per column of goldenInput's 512-wide rows, like an imatrix's mean
// squares, with some columns at zero (a column no activation reached).
func goldenImportance() []float32 {
	r := &rng{s: 77}
	w := make([]float32, 512)
	for i := range w {
		if i%37 == 5 {
			continue
		}
		g := r.gauss()
		w[i] = g*g + float32(i%16)/64
	}
	return w
}

// weightedDigests holds, per type, the SHA-256 of the bytes ggml's
// ggml_quantize_chunk gives for goldenInput() as rows of 512 with
// goldenImportance() as the imatrix. They come from a throwaway C program
// calling ggml_quantize_chunk in libggml-base.so (llama.cpp built with gcc
// -O3 for x86-64, no FMA).
var weightedDigests = map[Type]string{
	Q4_0:   "1601df858429b1d654495491bb903c243f6fe057db8a51e6b673dfddfd9be791",
	Q4_1:   "2f0975f54f3c907a540a58f1a98ec93b41c7200ca8a4b929cf47ca753cea5c0c",
	Q5_0:   "df8c719ad1a06ec822fca62ed272ee233c5938aeac5d53c5a6bdab27d1dfd1f3",
	Q5_1:   "e20998e60dd02541e4f4eada4d2d34519628d0cb4e2928b9d899ae678bd90da1",
	Q2_K:   "81bd4330d3d24a7e895646ade2eeac6512ab3640afea6bb532c91ee9a3c94669",
	Q3_K:   "03a7eed9872f81ade3d89771a0b989bfce15b4c74c51c3d7a5201124c9fefc48",
	Q4_K:   "a843089ca3b1f54e00a91b4ef8fea44cf010f4ca5f06d9fb38637cc799300721",
	Q5_K:   "d77b46927046a4c948552edd18ac5107758e318eab1905abce9c04e431ac8395",
	Q6_K:   "4b40e29623ec4c0fa162a1f66342dadba62d728d22dd0a3b077ef93b51095fc5",
	IQ4_NL: "2bb3dd9f5329821806cf55d4185ac7924df9435572e4ccab251547c871759f5d",
	IQ4_XS: "f6227927c7cbce374256a7a51ef3daffb4ef2ff67fed050153e94ef0e4bf9fdb",
}

// gridWeighted lists the codebook formats among weightedCodecs: their
// digests are TestGoldenGridWeighted's (other weights), not
// TestGoldenWeighted's.
var gridWeighted = map[Type]bool{IQ2_XXS: true, IQ2_XS: true, IQ2_S: true, IQ3_XXS: true, IQ3_S: true, IQ1_S: true, IQ1_M: true}

// TestGoldenWeighted pins QuantizeRowWeighted to ggml's weighted
// quantizers, row by row of 512 as llama-quantize calls them.
func TestGoldenWeighted(t *testing.T) {
	x := goldenInput()
	w := goldenImportance()
	for typ := range weightedCodecs {
		if gridWeighted[typ] {
			continue // pinned by TestGoldenGridWeighted
		}
		t.Run(typ.String(), func(t *testing.T) {
			want, ok := weightedDigests[typ]
			if !ok {
				t.Fatalf("no golden digest for %v", typ)
			}
			rs, _ := typ.RowSize(512)
			var q []byte
			for r := 0; r < len(x); r += 512 {
				b := make([]byte, rs)
				if err := QuantizeRowWeighted(typ, x[r:r+512], b, w); err != nil {
					t.Fatal(err)
				}
				q = append(q, b...)
			}
			if got := digest(q); got != want {
				t.Errorf("digest = %s, want %s", got, want)
			}
		})
	}
}

// TestWeightedMatters checks that the weights change the bytes (a
// quantizer that ignored them would pass for a uniform imatrix) and that
// weighting a column more lowers its error.
func TestWeightedMatters(t *testing.T) {
	x := goldenInput()[:512]
	uniform := make([]float32, 512)
	heavy := make([]float32, 512)
	for i := range uniform {
		uniform[i] = 1
		heavy[i] = 1
		if i%8 == 0 {
			heavy[i] = 1000
		}
	}
	for typ := range weightedCodecs {
		rs, _ := typ.RowSize(512)
		a, b := make([]byte, rs), make([]byte, rs)
		if err := QuantizeRowWeighted(typ, x, a, uniform); err != nil {
			t.Fatal(err)
		}
		if err := QuantizeRowWeighted(typ, x, b, heavy); err != nil {
			t.Fatal(err)
		}
		ya, yb := make([]float32, 512), make([]float32, 512)
		DequantizeRow(typ, a, ya)
		DequantizeRow(typ, b, yb)
		var ea, eb float64
		for i := 0; i < 512; i += 8 {
			da, db := float64(ya[i]-x[i]), float64(yb[i]-x[i])
			ea += da * da
			eb += db * db
		}
		if !(eb < ea) {
			t.Errorf("%v: squared error of the heavy columns %g with their weight raised, %g without", typ, eb, ea)
		}
	}
}

func TestQuantizeRowWeightedErrors(t *testing.T) {
	x := make([]float32, 256)
	y := make([]byte, 256*4)
	if err := QuantizeRowWeighted(Q4_K, x, y[:144], make([]float32, 255)); err == nil || !strings.Contains(err.Error(), "255 importance weights") {
		t.Errorf("short weights: %v", err)
	}
	if err := QuantizeRowWeighted(Q4_K, x, y[:100], make([]float32, 256)); err == nil {
		t.Error("short destination: no error")
	}
	// Types that ignore weights give QuantizeRow's bytes.
	for _, typ := range []Type{Q8_0, F16, MXFP4, TQ2_0} {
		rs, _ := typ.RowSize(256)
		a, b := make([]byte, rs), make([]byte, rs)
		xr := goldenInput()[:256]
		QuantizeRow(typ, xr, a)
		if err := QuantizeRowWeighted(typ, xr, b, make([]float32, 256)); err != nil || string(a) != string(b) {
			t.Errorf("%v with weights: %v, bytes equal %v", typ, err, string(a) == string(b))
		}
	}
}
