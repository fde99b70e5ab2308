// Macros shared by the four-row kernels of gemv_q_amd64.s,
// gemv_float_amd64.s and gemv_x8f16_amd64.s (Go assembly macros are per
// file, so they live in this header).

// HSUM8 leaves in the low lane of X (the low half of Y) the sum of Y's
// eight float32 lanes v0..v7 as ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)),
// as internal/dot's HSUM8. T is a scratch register.
#define GV2_HSUM8(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS T, X, X; \
	VMOVHLPS X, X, T; \
	VADDPS T, X, X; \
	VMOVSHDUP X, T; \
	VADDSS T, X, X

// Prefetch. MUL_MAT's four-row steps walk the weight rows four at a
// time, each row from start to end, and the next step's four rows start
// cold: the hardware prefetchers need several misses to pick up a new
// stream, and four streams restarting every few microseconds left the
// four-row kernels slower than the one-row dot product (which streams
// one contiguous run) once the weights come from L3 or memory. So each
// kernel asks, as it goes, for the same bytes of the NEXT four rows
// (4*ldx ahead) into L2: when the caller moves on to them (the next step
// of its tile, or of the next tile) they are there. Prefetches never
// fault, so reaching past the last row is harmless.

// GV2_PFN prefetches the line at the current block of each of the next
// four rows (R13 = SI + 4*ldx). Clobbers R13.
#define GV2_PFN \
	LEAQ       (SI)(R8*4), R13; \
	PREFETCHT1 (R13); \
	PREFETCHT1 (R13)(R8*1); \
	PREFETCHT1 (R13)(R8*2); \
	PREFETCHT1 (R13)(R9*1)

// GV2_FLOAT_STORE stores the four rows' sums of the float kernels: row r's
// two accumulators Y(2r), Y(2r+1) added lane by lane, then HSUM8.
#define GV2_FLOAT_STORE \
	VADDPS Y1, Y0, Y0; \
	GV2_HSUM8(Y0, X0, X1); \
	VMOVSS X0, (DX); \
	VADDPS Y3, Y2, Y2; \
	GV2_HSUM8(Y2, X2, X3); \
	VMOVSS X2, 4(DX); \
	VADDPS Y5, Y4, Y4; \
	GV2_HSUM8(Y4, X4, X5); \
	VMOVSS X4, 8(DX); \
	VADDPS Y7, Y6, Y6; \
	GV2_HSUM8(Y6, X6, X7); \
	VMOVSS X6, 12(DX)
