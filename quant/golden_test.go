package quant

import (
	"crypto/sha256"
	"encoding/binary"
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

	// From ggml the same way: quantize_row_iq3_s_ref after
	// iq3xs_init_impl(512), and dequantize_row_iq3_s.
	IQ3_S: {"6d42963674af61ebe2a5cb6b395e360de6c8b686f4387a4d3b37c9bdf2010634", "12bcc7533d1d8dc2a17f56bc5b7f6874e38d692fbe0e08503fc3b4a71aad6ed8"},
	// quantize_row_iq3_xxs_ref after iq3xs_init_impl(256).
	IQ3_XXS: {"bda8a2e7edd61e189a2de6229bebe032c106bf0c5065f52edde0a42889b7b761", "6a9470824f2aac0631cd76ba2746f5afe7f0d4b5ef766e509e0dcc375eb1d811"},
	// quantize_row_iq2_s_ref after iq2xs_init_impl(GGML_TYPE_IQ2_S).
	IQ2_S: {"cfff41f6a63cd1eb95546254f79cbbfa8ab51a8dcd193b7dbd5bcd1ab1966533", "be3bf23b43fe4e6e1af636030fa3a4738c08dfda1ad8ff632ee04b300b476320"},
}

// TestGoldenGridWeighted pins the quantizers that take importance weights to
// ggml's quantize_iq* on goldenInput() as 48 rows of 512 sharing the
// weights 0.5 + (i%7)/4 for column i (as llama-quantize passes one
// imatrix row for every row of a tensor), from the same C program.
func TestGoldenGridWeighted(t *testing.T) {
	x := goldenInput()
	qw := make([]float32, 512)
	for i := range qw {
		qw[i] = 0.5 + float32(i%7)*0.25
	}
	for _, tc := range []struct {
		typ      Type
		quantize func(x []float32, y []byte, qw []float32)
		want     string
	}{
		{IQ3_S, quantizeIQ3_SWith, "54280a3e566cee120a143e862dba90bc1f5d0033ee89fd6cb9b8c6623d29811a"},
		{IQ3_XXS, quantizeIQ3_XXSWith, "03b390f207bf098c63e9dd5384f505e5097d216a57446533c43f76da6d2294fc"},
		{IQ2_S, quantizeIQ2_SWith, "dfd53a5a1023666ae50d896f8e02a4797e1b2488c73786351560ceef2aa0ae82"},
		// After iq2xs_init_impl(GGML_TYPE_IQ2_XS); ggml requires weights.
		{IQ2_XS, quantizeIQ2_XSWith, "3aafb3722bc2db6e0f2a417d9aeeb99daf97df962bc84c47c90f1f721499940a"},
		{IQ2_XXS, quantizeIQ2_XXSWith, "a3bd2f472b9ad99ce347c91441e79df182a5294cba7222841f930e0a8c895f62"},
		{IQ1_S, quantizeIQ1_SWith, "bac061283368b51b6130fee830332bd44a383aa23933305be1216d59bf1a5adc"},
		{IQ1_M, quantizeIQ1_MWith, "3dc9faa81f7dc58fc06fdfb29b0fe6185bfd9dfe64aae05583f1487d329fc0b6"},
	} {
		var q []byte
		for r := 0; r < len(x); r += 512 {
			b := make([]byte, 2*tc.typ.TypeSize())
			tc.quantize(x[r:r+512], b, qw)
			q = append(q, b...)
		}
		if got := digest(q); got != tc.want {
			t.Errorf("%v: digest = %s, want %s", tc.typ, got, tc.want)
		}
	}
}

// TestGoldenIQ1_MUnweighted pins IQ1_M without importance weights (ggml's
// quantize_iq1_m takes NULL, weighing elements by x²) to the same C
// program's bytes, 48 rows of 512.
func TestGoldenIQ1_MUnweighted(t *testing.T) {
	x := goldenInput()
	q := make([]byte, len(x)/QKK*sizeIQ1_M)
	for r := 0; r < len(x); r += 512 {
		quantizeIQ1_MWith(x[r:r+512], q[r/QKK*sizeIQ1_M:], nil)
	}
	if got, want := digest(q), "b5c39aafcf303eed1265f9a7fbbce097f39299475e452a1f241e4bb3f7d60c60"; got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
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
// values whose SHA-256 is pinned beside the blocks'. The "wide" set is
// the same blocks with block k's f16 scale set to k*0x1f3 (zero,
// subnormals, up to 0x7acd), decoded by the same C program.
func TestGoldenGrid(t *testing.T) {
	for _, tc := range []struct {
		typ                     Type
		blocks, dequant         string
		wideBlocks, wideDequant string
	}{
		{IQ2_XXS, "3cf81f4cf891b4da6a8c732d5ce7eced718b0fbfcb7ff521b160e33d456a3dc3", "4c1758f96c37b59a93df9932cf6a6d8f0258fa6d38d9591d2a59ed92be6de419",
			"08b44bbe2e0b32aa8c10f68e20117d5129bf9d3edb579a71bf4674dd027ca83b", "fc90b24e557d606d0c1a38b8fea37b403583ff56e724b27da11adddd023b7b28"},
		{IQ2_XS, "e4f5fb7210c80f5fb9abfd7f5bd910f52f5c673161e10477f5586fb49f3e48c6", "ed83f485631bb4def16497b256aab16270800dfe3291f8a4d99467725953aa85",
			"26f31f6aafabac15968ec50012257a9dd5ca859501505e04dd07718b3d8f404e", "1ec28a52e0e6c958c10ed0570347b6761dabef641ae161a473fcd3a7fd0b348e"},
		{IQ2_S, "26c73b3a180a3f7326a259fd7a7e53b719b9b0a5a39a762451159097bf140934", "256a81fc4d288c1a40956706a30579bd5554c0e792f649bc73b35b36ae3866af",
			"8e21d28a6d63a93de93d52dc2e6ba3735b205080251f0de3f091b4f46af0a0f5", "ac8afb7c0ced79aa2039c266f1b5ab76d80f36a005d0315f03025ef6a2db7d75"},
		{IQ3_XXS, "1a3ea9f3f2ec11cde826b4ba938ae559fba7bceec1f88f99b2225f22310f820c", "7a49b40607877dda1741619f51d3eb6f20588508379a6815a49bfdd7706607b9",
			"61389277bd23112d610a12ecb371935a22d533b12fe7267956ccff87966bcb03", "a02ad72230ebb8ee03fd5e1190b7c5398551d025a38f50dd0eb8deddb1b56972"},
		{IQ3_S, "fbb8895528726331d4b8c4ce4a6a7eafb3d4e613ebb871c3672cbd5ece95a239", "3e3dcd6eb6ea1ac5af9f9ec3c5394b7c9fdfe0994c5fb5c6c6fc38c1f93da155",
			"96bc0cad406e4d6b168777d364fe417fbdcbaaad9dbb0cf2e000e062fc34451b", "0e8de6a47d4d94dfd7b3176b57795001209ce840fd2289ff533afda39fedc3f6"},
		{IQ1_S, "7d9e95ec26730c3ba041cc584fa72d1873091ea1c15092267be975de0645f864", "7b5db8fa769c725d11b2aa218cabded17d75a51451158ed7b2776c119018d578",
			"33596506a3d11f41fce749265863d3eaa99224fcb6c3df6069392c25af012022", "46578de5edbbd13a803e2ecdcc18b766176c4bd17aafcd00294b2b789358d57e"},
		{IQ1_M, "ccb84641d7e35558d281822618c80d9a8df3f146a6e7ec58c6fb5aeecd9581f8", "1ee0ada5a84ddf4027d2312c5abe9347803e1afc8b7f778d9a2c9ddc3c46d091",
			"f32d2999fa0cfceeaf8851d2f6776f7c9a1f8d174716fe5dbb27f3d6080f8eb5", "5a02c0a1d0bb38456fd482bfb55a9300a0942c4280aef2df19065ac1a6bb5f15"},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			ts := int(tc.typ.TypeSize())
			b := make([]byte, 64*ts)
			if err := RandomBlocks(tc.typ, b, 1000+uint64(tc.typ)); err != nil {
				t.Fatal(err)
			}
			check := func(set, wantBlocks, wantDequant string) {
				if got := digest(b); got != wantBlocks {
					t.Errorf("%s blocks digest = %s, want %s", set, got, wantBlocks)
				}
				y := make([]float32, 64*QKK)
				if err := DequantizeRow(tc.typ, b, y); err != nil {
					t.Fatal(err)
				}
				var yb []byte
				for _, v := range y {
					yb = append(yb, f32bytes(v)...)
				}
				if got := digest(yb); got != wantDequant {
					t.Errorf("%s DequantizeRow digest = %s, want %s", set, got, wantDequant)
				}
			}
			check("random", tc.blocks, tc.dequant)
			for k := range 64 {
				setGridScale(tc.typ, b[k*ts:(k+1)*ts], uint16(k*0x1f3))
			}
			check("wide", tc.wideBlocks, tc.wideDequant)
		})
	}
}

// setGridScale sets the f16 super-block scale of the codebook block b of
// type t to h: the d field, or IQ1_M's four scale nibbles.
func setGridScale(t Type, b []byte, h uint16) {
	if t != IQ1_M {
		binary.LittleEndian.PutUint16(b, h)
		return
	}
	for j := range 4 {
		off := 48 + 2*j
		w := binary.LittleEndian.Uint16(b[off:])&0x0fff | (h>>(4*j)&15)<<12
		binary.LittleEndian.PutUint16(b[off:], w)
	}
}
