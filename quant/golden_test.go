package quant

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestGolden pins QuantizeRow and DequantizeRow to ggml's reference
// output for a fixed input covering every distribution in dists: any
// change of a single byte or float bit fails it.
func TestGolden(t *testing.T) {
	x := goldenInput()
	for _, typ := range quantTypes {
		t.Run(typ.String(), func(t *testing.T) {
			want, ok := goldenDigests[typ]
			if !ok {
				t.Fatalf("no golden digest for %v", typ)
			}
			q, y := roundTrip(t, typ, x)
			if got := digest(q); got != want.quant {
				t.Errorf("QuantizeRow digest = %s, want %s", got, want.quant)
			}
			var yb []byte
			for _, v := range y {
				yb = append(yb, f32bytes(v)...)
			}
			if got := digest(yb); got != want.dequant {
				t.Errorf("DequantizeRow digest = %s, want %s", got, want.dequant)
			}
		})
	}
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// goldenInput is the fixed input of TestGolden: every distribution in
// dists, four rows of 512 elements each, from one seeded generator.
func goldenInput() []float32 {
	r := &rng{s: 20240601}
	row := make([]float32, 512)
	var x []float32
	for _, d := range dists {
		for range 4 {
			d.gen(r, row)
			x = append(x, row...)
		}
	}
	return x
}

// goldenDigests holds, per type, the SHA-256 of the bytes ggml's
// reference quantizer produces from goldenInput() and of the float32
// values (little-endian) its dequantizer decodes from those bytes. They
// were computed outside this repository by a C rendering of ggml's
// quantize_row_*_ref and dequantize_row_* functions (ggml-org/llama.cpp,
// ggml/src/ggml-quants.c, 2025 sources) and of its portable FP16/BF16
// converters, compiled with gcc -O2 for x86-64 (no FMA contraction).
// Q8_K differs from ggml in one respect: for an all-zero super-block ggml
// leaves bsums unwritten, the C program (like this package) zeroes them.
var goldenDigests = map[Type]struct{ quant, dequant string }{
	F32:  {"84b027708c3cb17b670b610c190b5809398b696e60769308afcf3c9b35259a20", "84b027708c3cb17b670b610c190b5809398b696e60769308afcf3c9b35259a20"},
	F16:  {"9b18a354615b3833a9b269dd839bdf4871d911739aa2179f898677f1474cc199", "29433854a995110c0303f692ad6e5a03bba66fd783a1332a04dd69ab8ae9eec5"},
	BF16: {"f69799ce83a285e9c72de1e81e52e349b84225030779ae1894f4bc374d466609", "9a52519732ed442f9525bf5e97533687d11e18efc0ab5515978dacc3bc08ef7f"},
	Q4_0: {"b2cc8cff919b47698342b14aa902bc339ec602626c7c36123b973fbd38400f69", "71fadd719bae6c98539a84585ab1de3fc2d13cfcb9e638c58f8bcd66c5bb2576"},
	Q4_1: {"b970da7f59452cd2329a483f55d87c2a367940f20a5c2be69103c6a62558022d", "0b79cbcd9e3d0f005208efb5d793b4d5d5f44c1e5518c738b1e6c091a4764072"},
	Q5_0: {"8b07e76cb08d368a917cecbdd54b61dce720a9a0f2f78e5fd5c329ac124233fd", "9c1d532cb7ffce7bf4db4677a7d3f22ee00df70ccb0a340021063508d383abe0"},
	Q5_1: {"a667e873bb63937b1b168396dca7c1a43262134d0dc35f549278e96537e59f53", "4382f090d35d1336b3d13a14dd1b109fc4fb9d9174801addf622ed4fd348774f"},
	Q8_0: {"be776225fb7566c04f2487687022de89e06ee9fc60b6b7ab86ae8f654bc26643", "859320ca555c0ed346bacc01bdf15c0e1e4f6938700bc3117ace32346164b0f2"},
	Q8_1: {"8dd1374cd01a2227b7780322383d91e6fc278b6d79cb48aca0db45e447ca43c8", "859320ca555c0ed346bacc01bdf15c0e1e4f6938700bc3117ace32346164b0f2"},
	Q2_K: {"3c659d7f4b1532d5d4cf7e134c3872fd5136faf44d32cb553e265b4e118d17d9", "abb649884707a3cbaaf5955a6003fe70e57383c394069131502d1729257b9741"},
	Q3_K: {"c68c68ccd361af8abc85143243380b127add38f13444d8a8b11996b358c9536e", "578b8d8f48527bb600f3a8337e2efa3c6f631783d6674398a9c69578e66651e6"},
	Q4_K: {"75dce98a7b86ceb77ec878febd7fbc485767cecb9e9977e7d950dbc6eb6f00f1", "2d8a4b9572598db42b4c79f900aff8b8b4b0cd77686d79c516dff27d6b0fb3f4"},
	Q5_K: {"63ee5717854882a97e554a01753c84aeb010cb1529502fc4aa87f51435192512", "a575c26d66a049020543f712a94bcca2db23238c85683828f763836beeec8b81"},
	Q6_K: {"aaf4c592aac18e71f6f3579ad57557b36a96feab219abbcbc711fd43d29e7841", "0b804fda000e77b20ac136db7f6b37fe7318c22e50871a05a8658e76411bf583"},
	Q8_K: {"28f0941cb37bee63a0ee939c70a516532f72fa40e083870912e5ed45c95421fd", "0ae8c971867b88f5c80f398680299d34f9127555016d07b05aaf638ec8887b66"},

	// These five come from ggml itself: a C program calling
	// quantize_row_{iq4_nl,iq4_xs,tq1_0,tq2_0,mxfp4}_ref and their
	// dequantize_row_* in libggml-base.so (llama.cpp built with gcc -O3
	// for x86-64, no FMA) on goldenInput() in one call.
	IQ4_NL: {"a1b1fca39e6fa617fc9ab93228cd23a614a3560eb387b6305192d44fe0504914", "9c6a9d0d438721b9adb4c892108bd19169d6559afb836c0cf986f37ba5b2c54e"},
	IQ4_XS: {"59f02cc032394420acc998d1bed1b5bbdbffe22068daf794490173796b87c246", "2a26cc2d73fbfae704213f4ae8df7da29be5e361c6fd908002b8fa61715a2478"},
	TQ1_0:  {"82b51187af0c40de189705a87db800208309bd0751016bdc8a90514b1bf5a856", "91c4c4ce6c86d1b183979fb91ded413af16dfb6098bb755662df049de49cbda2"},
	TQ2_0:  {"3c63cde0a3bce31c8ee5badbc9c81a097cd15655f50d4f086914aa34482c0c05", "91c4c4ce6c86d1b183979fb91ded413af16dfb6098bb755662df049de49cbda2"},
	MXFP4:  {"b9e568688bf857be9a771cea8247652ca8ddc8a7a78d32c7666fbabcceef4dcf", "03c2108df530da505b88e6a162c9f9244deaa2a19d745512085190891ca787fa"},
}

// TestGoldenIQ4_NLSearch pins the IQ4_NL quantizer llama-quantize runs
// (ggml's quantize_iq4_nl without weights: 15 scales tried per block),
// row by row of 512 as it is called per tensor row, to the SHA-256 of
// ggml's bytes from the same C program.
func TestGoldenIQ4_NLSearch(t *testing.T) {
	x := goldenInput()
	var q []byte
	for r := 0; r < len(x); r += 512 {
		b := make([]byte, 16*sizeIQ4_NL)
		quantizeIQ4_NLWith(x[r:r+512], b, nil, 7)
		q = append(q, b...)
	}
	if got, want := digest(q), "6ed417153dfa46c7d96b13975bf98c679251c0b4cfb0dbf5f0a5d4e0f6289e62"; got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
}

// TestGoldenGrid pins the codebook formats' decoders, which have no
// quantizer here yet, to ggml's: RandomBlocks gives 64 blocks of each
// (seed 1000 + the type's number), and ggml's dequantize_row_iq* in
// libggml-base.so (llama.cpp built with gcc -O3 for x86-64) decoded the
// same bytes, generated by a C copy of RandomBlocks, to the float32
// values whose SHA-256 is pinned beside the blocks'.
func TestGoldenGrid(t *testing.T) {
	for _, tc := range []struct {
		typ             Type
		blocks, dequant string
	}{
		{IQ2_XXS, "3315083849e608f87c274900235521f26e942b1d651e109dbdbfdd82840fd439", "0f55a2066e9bb71983e439b9288585b568e506493def319b64e7ce55d685581f"},
		{IQ2_XS, "b9cebacf36d4a87fe687ef78f40d09f11c189ce619ef042a1d1d33ef30c430ff", "f0d8eca0756773b80c53bfa9d440d637d272a65b76805dba6c455e1c27677523"},
		{IQ2_S, "f97a794142d674880adb69affae84d7b8c9f07d5e55673f815c28624e565fd69", "3ec550639071c7d3aeb4430b2b502d7843b9a3e1db24f76f4d95b8a8ef4fe2aa"},
		{IQ3_XXS, "21c868aaf65168297db01aeb09eecdcb13b91783444a576b3e1499f06ee67dbd", "51cf8be3661d10e38dccb2a8858f0e6e11d53528b5ef9b8d1a01faae89c5796e"},
		{IQ3_S, "5f3e3df01df04cb31640b37201f70bec37a5942eb944aff13b2272b6e78339a7", "6f74d030afff60a1c0ff7a59b266abfe4d684393b6ce88b87a2273e4f7289512"},
		{IQ1_S, "bb94000bd10a1510fd4f3b99a8ef6c01e5c5b5d34562c537716c8958a9199c47", "830dd488222751a150278f10fe48995b765085fb00c41cd0fa312e87a2290344"},
		{IQ1_M, "9ee74c4ff88ad59a4735baa4e699dc808bad0e64b3dcd9c82dd678c3739cbbe2", "4a5c1ab67ed42806f9508aba3d5df6d35acf9feb3e6457dcfaab0d828672c1af"},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			b := make([]byte, 64*tc.typ.TypeSize())
			if err := RandomBlocks(tc.typ, b, 1000+uint64(tc.typ)); err != nil {
				t.Fatal(err)
			}
			if got := digest(b); got != tc.blocks {
				t.Errorf("RandomBlocks digest = %s, want %s", got, tc.blocks)
			}
			y := make([]float32, 64*QKK)
			if err := DequantizeRow(tc.typ, b, y); err != nil {
				t.Fatal(err)
			}
			var yb []byte
			for _, v := range y {
				yb = append(yb, f32bytes(v)...)
			}
			if got := digest(yb); got != tc.dequant {
				t.Errorf("DequantizeRow digest = %s, want %s", got, tc.dequant)
			}
		})
	}
}
