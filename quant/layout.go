package quant

// Block sizes shared by several formats.
const (
	// QK is the number of elements in a block of the legacy formats
	// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1).
	QK = 32
	// QKK is the number of elements in a super-block of the K formats
	// (Q2_K ... Q8_K).
	QKK = 256
)

// Element types, numbered as ggml's enum ggml_type and GGUF number them.
//
// Every comment below gives the byte layout of one block as [start:end)
// offsets. All multi-byte fields are little-endian; "f16" is an IEEE
// binary16 value (see FP16ToFP32). Element indices count from the start of
// the block. "q" is the stored unsigned code of an element, read as
// described; "sub-block" is a run of consecutive elements sharing a scale.
const (
	// F32 is IEEE binary32: 4 bytes per element.
	F32 Type = 0

	// F16 is IEEE binary16: 2 bytes per element.
	F16 Type = 1

	// Q4_0 blocks hold 32 elements in 18 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:18)  qs  16 bytes of 4-bit codes
	//
	// Element j (0..15) is the low nibble of qs[j]; element j+16 is the
	// high nibble of qs[j]. Value = (q - 8) * d.
	Q4_0 Type = 2

	// Q4_1 blocks hold 32 elements in 20 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:4)   m   f16 offset (the block minimum)
	//	[4:20)  qs  16 bytes of 4-bit codes, arranged as in Q4_0
	//
	// Value = q*d + m.
	Q4_1 Type = 3

	// Q5_0 blocks hold 32 elements in 22 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:6)   qh  uint32: bit j is bit 4 (the fifth bit) of element j
	//	[6:22)  qs  16 bytes of low 4 bits, arranged as in Q4_0
	//
	// Value = (q - 16) * d, q in 0..31.
	Q5_0 Type = 6

	// Q5_1 blocks hold 32 elements in 24 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:4)   m   f16 offset
	//	[4:8)   qh  uint32 fifth bits, as in Q5_0
	//	[8:24)  qs  16 bytes of low 4 bits, arranged as in Q4_0
	//
	// Value = q*d + m, q in 0..31.
	Q5_1 Type = 7

	// Q8_0 blocks hold 32 elements in 34 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:34)  qs  32 int8 codes, element j in qs[j]
	//
	// Value = qs[j] * d.
	Q8_0 Type = 8

	// Q8_1 blocks hold 32 elements in 36 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:4)   s   f16, d * (sum of the 32 codes)
	//	[4:36)  qs  32 int8 codes
	//
	// Value = qs[j] * d; s is a precomputed term for dot products.
	Q8_1 Type = 9

	// Q2_K super-blocks hold 256 elements in 84 bytes, as 16 sub-blocks of
	// 16 elements:
	//
	//	[0:16)   scales  byte j: low nibble = scale code of sub-block j,
	//	                 high nibble = min code of sub-block j
	//	[16:80)  qs      64 bytes of 2-bit codes
	//	[80:82)  d       f16 super-block scale for the scale codes
	//	[82:84)  dmin    f16 super-block scale for the min codes
	//
	// Element e: h = e/128, r = e%128; q = (qs[32h + r%32] >> (2*(r/32))) & 3.
	// With j = e/16, value = d*(scales[j]&15)*q - dmin*(scales[j]>>4).
	Q2_K Type = 10

	// Q3_K super-blocks hold 256 elements in 110 bytes, as 16 sub-blocks of
	// 16 elements:
	//
	//	[0:32)    hmask   high bits: bit e/32 of hmask[e%32] belongs to element e
	//	[32:96)   qs      64 bytes of low 2-bit codes, arranged as in Q2_K
	//	[96:108)  scales  sixteen 6-bit signed scale codes, packed
	//	[108:110) d       f16 super-block scale
	//
	// Element e: lo = 2-bit code read as in Q2_K; q = lo - 4 when its hmask
	// bit is clear, lo when set (q in -4..3). Scale code of sub-block j:
	// low 4 bits = scales[j]&15 for j < 8, scales[j-8]>>4 for j >= 8; high 2
	// bits = (scales[8+j%4] >> (2*(j/4))) & 3; sc = code - 32.
	// Value = d * sc * q with j = e/16.
	Q3_K Type = 11

	// Q4_K super-blocks hold 256 elements in 144 bytes, as 8 sub-blocks of
	// 32 elements:
	//
	//	[0:2)     d       f16 super-block scale for the scale codes
	//	[2:4)     dmin    f16 super-block scale for the min codes
	//	[4:16)    scales  eight 6-bit scale codes and eight 6-bit min codes
	//	[16:144)  qs      128 bytes of 4-bit codes
	//
	// Scale sc and min m of sub-block j, with s = scales: for j < 4,
	// sc = s[j]&63, m = s[j+4]&63; for j >= 4, sc = (s[j+4]&15) | (s[j-4]>>6)<<4,
	// m = (s[j+4]>>4) | (s[j]>>6)<<4.
	// Element e: c = e/64; q is the low nibble of qs[32c + e%32] when
	// e%64 < 32, the high nibble otherwise. Value = d*sc*q - dmin*m, j = e/32.
	Q4_K Type = 12

	// Q5_K super-blocks hold 256 elements in 176 bytes, as 8 sub-blocks of
	// 32 elements:
	//
	//	[0:2)     d       f16 super-block scale for the scale codes
	//	[2:4)     dmin    f16 super-block scale for the min codes
	//	[4:16)    scales  6-bit scale and min codes, packed as in Q4_K
	//	[16:48)   qh      fifth bits: bit e/32 of qh[e%32] belongs to element e
	//	[48:176)  qs      128 bytes of low 4 bits, arranged as in Q4_K
	//
	// q = low 4 bits + 16*fifth bit; value = d*sc*q - dmin*m, j = e/32.
	Q5_K Type = 13

	// Q6_K super-blocks hold 256 elements in 210 bytes, as 16 sub-blocks of
	// 16 elements:
	//
	//	[0:128)    ql      low 4 bits
	//	[128:192)  qh      high 2 bits
	//	[192:208)  scales  16 int8 sub-block scales
	//	[208:210)  d       f16 super-block scale
	//
	// Element e: h = e/128, r = e%128, l = r%32, g = r/32. The low bits are
	// the low nibble of ql[64h + l + 32*(g%2)] for g < 2, its high nibble for
	// g >= 2; the high bits are (qh[32h + l] >> (2g)) & 3.
	// q = (low | high<<4) - 32 (q in -32..31); value = d * scales[e/16] * q.
	Q6_K Type = 14

	// Q8_K super-blocks hold 256 elements in 292 bytes:
	//
	//	[0:4)      d      float32 scale
	//	[4:260)    qs     256 int8 codes
	//	[260:292)  bsums  16 int16: bsums[j] is the sum of qs[16j:16j+16]
	//
	// Value = d * qs[e]. ggml uses Q8_K only for activations in dot
	// products with the other K formats.
	Q8_K Type = 15

	// I8 is a signed 8-bit integer: 1 byte per element.
	I8 Type = 24

	// I16 is a signed 16-bit integer: 2 bytes per element.
	I16 Type = 25

	// I32 is a signed 32-bit integer: 4 bytes per element.
	I32 Type = 26

	// IQ2_XXS super-blocks hold 256 elements in 66 bytes, as 8 sub-blocks
	// of 32 elements, each of four groups of 8:
	//
	//	[0:2)   d   f16 super-block scale
	//	[2:66)  qs  8 bytes per sub-block j: bytes 0..3 index IQ2XXSGrid
	//	            for groups 0..3; bytes 4..7, as a uint32 w, hold group
	//	            l's 7-bit sign code in bits 7l..7l+6 and the sub-block's
	//	            4-bit scale code ls in bits 28..31
	//
	// Element 8l+i of sub-block j: g = byte i of IQ2XXSGrid[index],
	// s = KSignsIQ2XS[code] bit i; value = d * (0.5 + ls) / 4 * g, negated
	// when s is set.
	IQ2_XXS Type = 16

	// IQ2_XS super-blocks hold 256 elements in 74 bytes:
	//
	//	[0:2)    d       f16 super-block scale
	//	[2:66)   qs      32 uint16, one per group of 8 (4 per sub-block):
	//	                 bits 0..8 index IQ2XSGrid, bits 9..15 are the
	//	                 group's 7-bit sign code (KSignsIQ2XS)
	//	[66:74)  scales  a byte per sub-block j of 32: the low nibble ls is
	//	                 the scale code of its groups 0, 1, the high nibble
	//	                 that of groups 2, 3
	//
	// Value = d * (0.5 + ls) / 4 * g, negated by the sign bit, as IQ2_XXS.
	IQ2_XS Type = 17

	// IQ3_XXS super-blocks hold 256 elements in 98 bytes:
	//
	//	[0:2)    d   f16 super-block scale
	//	[2:66)   qs  one byte per group of 4 elements, indexing IQ3XXSGrid
	//	[66:98)  ss  a uint32 w per sub-block of 32: group of 8 l's 7-bit
	//	             sign code in bits 7l..7l+6 (KSignsIQ2XS), the 4-bit
	//	             scale code ls in bits 28..31
	//
	// Value = d * (0.5 + ls) / 2 * g, negated by the sign bit.
	IQ3_XXS Type = 18

	// IQ1_S super-blocks hold 256 elements in 50 bytes:
	//
	//	[0:2)    d   f16 super-block scale
	//	[2:34)   qs  low 8 bits of the IQ1SGrid index of each group of 8
	//	[34:50)  qh  a uint16 per sub-block of 32: bits 3l..3l+2 are the
	//	             high 3 bits of group l's index, bits 12..14 the scale
	//	             code ls, bit 15 the sign of the shift delta
	//
	// Value = d * (2*ls + 1) * (g + delta), g the grid's int8 (-1, 0, 1),
	// delta = -0.125 when bit 15 is set, else +0.125.
	IQ1_S Type = 19

	// IQ4_NL blocks hold 32 elements in 18 bytes:
	//
	//	[0:2)   d   f16 scale
	//	[2:18)  qs  16 bytes of 4-bit codes, arranged as in Q4_0
	//
	// Value = d * IQ4NLValues[q]: the codes index a non-linear table.
	IQ4_NL Type = 20

	// IQ4_XS super-blocks hold 256 elements in 136 bytes, as 8 sub-blocks
	// of 32 elements:
	//
	//	[0:2)    d         f16 super-block scale
	//	[2:4)    scales_h  uint16: bits 2j, 2j+1 are the high 2 bits of
	//	                   sub-block j's 6-bit scale code
	//	[4:8)    scales_l  low 4 bits of the scale codes: the low nibble of
	//	                   scales_l[j/2] for even j, the high nibble for odd j
	//	[8:136)  qs        128 bytes of 4-bit codes, 16 per sub-block, each
	//	                   sub-block arranged as a Q4_0 block
	//
	// With ls the 6-bit scale code of sub-block j = e/32, value =
	// d * (ls - 32) * IQ4NLValues[q].
	IQ4_XS Type = 23

	// IQ3_S super-blocks hold 256 elements in 110 bytes:
	//
	//	[0:2)     d       f16 super-block scale
	//	[2:66)    qs      low 8 bits of the IQ3SGrid index of each group of 4
	//	[66:74)   qh      a byte per sub-block of 32: bit k is bit 8 of
	//	                  the index of its group of 4 k
	//	[74:106)  signs   a byte per group of 8: bit i negates element i
	//	[106:110) scales  a nibble ls per sub-block j (the low nibble of
	//	                  scales[j/2] for even j)
	//
	// Value = d * (1 + 2*ls) * g, negated by the sign bit.
	IQ3_S Type = 21

	// IQ2_S super-blocks hold 256 elements in 82 bytes:
	//
	//	[0:2)    d       f16 super-block scale
	//	[2:34)   qs      low 8 bits of the IQ2SGrid index of each group of 8
	//	[34:66)  signs   a byte per group of 8: bit i negates element i
	//	[66:74)  qh      a byte per sub-block of 32: bits 2l, 2l+1 are bits
	//	                 8, 9 of group l's index
	//	[74:82)  scales  as in IQ2_XS
	//
	// Value = d * (0.5 + ls) / 4 * g, negated by the sign bit.
	IQ2_S Type = 22

	// BF16 is bfloat16, the top 16 bits of an IEEE binary32: 2 bytes per
	// element.
	BF16 Type = 30

	// TQ1_0 super-blocks hold 256 ternary elements in 54 bytes:
	//
	//	[0:48)   qs  base-3 codes, five elements a byte
	//	[48:52)  qh  base-3 codes, four elements a byte
	//	[52:54)  d   f16 scale
	//
	// A byte holds trits t0..t4 (t0 the most significant) as
	// ceil((t0*81 + t1*27 + t2*9 + t3*3 + t4) * 256 / 243); trit n is
	// read back as ((uint8(byte * 3^n)) * 3) >> 8. Elements 32n + m
	// (n < 5, m < 32) are trit n of qs[m]; elements 160 + 16n + m (m < 16)
	// trit n of qs[32+m]; elements 240 + 4n + j (n, j < 4) trit n of qh[j],
	// whose fifth trit is zero. Value = (trit - 1) * d.
	TQ1_0 Type = 34

	// TQ2_0 super-blocks hold 256 ternary elements in 66 bytes:
	//
	//	[0:64)   qs  2-bit codes, arranged as in Q2_K
	//	[64:66)  d   f16 scale
	//
	// Element e: h = e/128, r = e%128; q = (qs[32h + r%32] >> (2*(r/32))) & 3.
	// Value = (q - 1) * d (q = 3 does not occur in ggml's output but
	// decodes to 2d).
	TQ2_0 Type = 35

	// IQ1_M super-blocks hold 256 elements in 56 bytes, with no separate
	// scale field:
	//
	//	[0:32)   qs      low 8 bits of the IQ1SGrid index of each group of 8
	//	[32:48)  qh      a byte per pair of groups: bits 0..2 are the high
	//	                 bits of the first group's index, bit 3 its delta's
	//	                 sign, bits 4..6 and 7 the same for the second
	//	[48:56)  scales  four uint16 s0..s3: bits 0..11 of s(j/2) hold 3-bit
	//	                 scale codes, for sub-block j's groups 0, 1 at bit
	//	                 6*(j%2) and for groups 2, 3 at bit 6*(j%2)+3; bits
	//	                 12..15 of s0..s3 are bits 0..3, 4..7, 8..11, 12..15
	//	                 of the f16 super-block scale d
	//
	// Value = d * (2*ls + 1) * (g + delta) as in IQ1_S.
	IQ1_M Type = 29

	// MXFP4 blocks hold 32 elements in 17 bytes (the OCP microscaling
	// format with E2M1 elements):
	//
	//	[0:1)   e   E8M0 scale: 2^(e-127), 2^-127 for e = 0
	//	[1:17)  qs  16 bytes of 4-bit E2M1 codes, arranged as in Q4_0
	//
	// Value = 2^(e-128) * MXFP4Values[q] (the table holds the E2M1
	// values doubled, so the scale is halved). e = 255 is not NaN here:
	// it decodes as 2^127, as ggml's CPU decoder does.
	MXFP4 Type = 39
)

// IQ4NLValues is the non-linear code table of IQ4_NL and IQ4_XS (ggml's
// kvalues_iq4nl).
var IQ4NLValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// MXFP4Values are the E2M1 values of MXFP4's 4-bit codes, doubled so that
// they are integers (ggml's kvalues_mxfp4): codes 0..7 are 0, 0.5, 1,
// 1.5, 2, 3, 4, 6 and codes 8..15 their negatives (code 8 is 0, not
// -0, as in ggml's table).
var MXFP4Values = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// Block sizes in bytes (the Type constants' TypeSize).
const (
	sizeQ4_0 = 2 + QK/2
	sizeQ4_1 = 4 + QK/2
	sizeQ5_0 = 2 + 4 + QK/2
	sizeQ5_1 = 4 + 4 + QK/2
	sizeQ8_0 = 2 + QK
	sizeQ8_1 = 4 + QK
	sizeQ2_K = QKK/16 + QKK/4 + 4
	sizeQ3_K = QKK/8 + QKK/4 + 12 + 2
	sizeQ4_K = 4 + 12 + QKK/2
	sizeQ5_K = 4 + 12 + QKK/8 + QKK/2
	sizeQ6_K = QKK/2 + QKK/4 + QKK/16 + 2
	sizeQ8_K = 4 + QKK + 2*QKK/16

	sizeIQ2_XXS = 2 + QKK/4
	sizeIQ2_XS  = 2 + QKK/4 + QKK/32
	sizeIQ2_S   = 2 + QKK/4 + QKK/16
	sizeIQ3_XXS = 2 + 3*QKK/8
	sizeIQ3_S   = 2 + 13*QKK/32 + QKK/64
	sizeIQ1_S   = 2 + QKK/8 + QKK/16
	sizeIQ1_M   = QKK/8 + QKK/16 + QKK/32

	sizeIQ4_NL = 2 + QK/2
	sizeIQ4_XS = 2 + 2 + QKK/64 + QKK/2
	sizeTQ1_0  = (QKK-4*QKK/64)/5 + QKK/64 + 2
	sizeTQ2_0  = QKK/4 + 2
	sizeMXFP4  = 1 + QK/2
)
