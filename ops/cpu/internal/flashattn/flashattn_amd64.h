// Macros shared by flashattn_qk_amd64.s and flashattn_q8_amd64.s (Go
// assembly macros are per file).

// QK_ZERO: clears the 12 accumulators Y0..Y11.
#define QK_ZERO \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// QK_REDUCE2(A, B, C, D): X14 = the four 8-lane sums A..D, each as
// hsum8: h = lanes 0-3 + lanes 4-7, then (h0+h2)+(h1+h3). Uses Y12..Y15.
#define QK_REDUCE2(A, B, C, D) \
	VPERM2F128 $0x20, B, A, Y12; \
	VPERM2F128 $0x31, B, A, Y13; \
	VADDPS Y13, Y12, Y12; \
	VPERM2F128 $0x20, D, C, Y13; \
	VPERM2F128 $0x31, D, C, Y14; \
	VADDPS Y14, Y13, Y13; \
	VUNPCKLPS Y13, Y12, Y14; \
	VUNPCKHPS Y13, Y12, Y15; \
	VADDPS Y15, Y14, Y14; \
	VPERMILPS $0x4E, Y14, Y15; \
	VADDPS Y15, Y14, Y14; \
	VEXTRACTF128 $1, Y14, X15; \
	VUNPCKLPS X15, X14, X14

// QK_REDUCE(A, B, C, D, OUT): the four sums (keys 0..3 of a row) to
// OUT[0..3] (QK_REDUCE2).
#define QK_REDUCE(A, B, C, D, OUT) \
	QK_REDUCE2(A, B, C, D); \
	VMOVUPS X14, (OUT)
