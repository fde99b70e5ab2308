// The macros shared by the AVX-512 q8_0 key-score kernels
// (flashattn_q8_avx512_amd64.s, flashattn_q8_1_avx512_amd64.s). DX is
// the byte offset of the current block in every key row.

// Q8_KEYS(RA, RB): the current q8_0 block of the key pair whose rows
// start at RA (low 256 bits) and RB (high): their codes in Z6, |k| in
// Z7, the sign bytes (0xff where k < 0) in Z8 through K1, and the two
// scales widened, each repeated over its half, in Z9; uses Y14, Y15.
#define Q8_KEYS(RA, RB) \
	VMOVDQU 2(RA)(DX*1), Y6; \
	VINSERTI64X4 $1, 2(RB)(DX*1), Z6, Z6; \
	VPABSB Z6, Z7; \
	VPMOVB2M Z6, K1; \
	VPMOVM2B K1, Z8; \
	VPBROADCASTW (RA)(DX*1), X15; \
	VPBROADCASTW (RB)(DX*1), X14; \
	VINSERTI128 $1, X14, Y15, Y15; \
	VCVTPH2PS Y15, Z9

// Q8_ROW(Q, D, ACC): ACC += (int32 lane sums of a key pair's codes
// times the query codes Q, as VPSIGNB would sign them) * (the keys' scales
// Z9 times the query scales D), as faQ8QK3x2AVX2 does per row: |k| in Z7,
// the keys' sign bytes in Z8, Z31 words of 1; uses Z10 and Z11.
#define Q8_ROW(Q, D, ACC) \
	VPXORQ Q, Z8, Z10; \
	VPSUBB Z8, Z10, Z10; \
	VPMADDUBSW Z10, Z7, Z10; \
	VPMADDWD Z31, Z10, Z10; \
	VCVTDQ2PS Z10, Z10; \
	VMULPS D, Z9, Z11; \
	VFMADD231PS Z11, Z10, ACC
