// Macros shared by the K-format four-row kernels of gemv_k_amd64.s and
// gemv_q2k_q3k_amd64.s (Go assembly macros are per file).

// K2_ACCUM(Q, YOFF, PAT, SC): Y6 += VPMADDWD(VPMADDUBSW(Q, y codes at
// YOFF(DI)), the words of SC picked by the VPSHUFB pattern at PAT).
// Clobbers Q and Y11.
#define K2_ACCUM(Q, YOFF, PAT, SC) \
	VPMADDUBSW YOFF(DI), Q, Q; \
	VPSHUFB PAT, SC, Y11; \
	VPMADDWD Y11, Q, Q; \
	VPADDD Q, Y6, Y6

// K2_GV_FOLD(B): X6 = [p0+p1, p2+p3, b0+b1, b2+b3] + the same of the high
// lanes, for Y6 = p and B = b. Clobbers Y7.
#define K2_GV_FOLD(B) \
	VPHADDD B, Y6, Y6; \
	VEXTRACTI128 $1, Y6, X7; \
	VPADDD X7, X6, X6

// K2_GV_COMBINE: X4 = the four rows' totals of Y6, X5 those of B, from the
// folds parked in Y0 and Y12. Clobbers X1-X3.
#define K2_GV_COMBINE \
	VPHADDD Y12, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPUNPCKLDQ X1, X0, X2; \
	VPUNPCKHDQ X1, X0, X3; \
	VPUNPCKLQDQ X3, X2, X4; \
	VPUNPCKHQDQ X3, X2, X5

// K2_PFN2, K2_PFN3, K2_PFN4 prefetch the two, three or four lines of the
// current super-block in the row 4*ldx (R11) ahead: the same row of the
// next four-row step.
#define K2_PFN2 \
	PREFETCHT1 (SI)(R11*4); \
	PREFETCHT1 64(SI)(R11*4)
#define K2_PFN3 \
	K2_PFN2; \
	PREFETCHT1 128(SI)(R11*4)
#define K2_PFN4 \
	K2_PFN3; \
	PREFETCHT1 192(SI)(R11*4)

// Bit moves, passed by name to the K-format kernels' chunk and pair
// macros: DST = the words of SRC shifted left (BITS_SLL) or right
// (BITS_SRL) by S bits and masked by M, or SRC masked by M alone
// (BITS_AND, S unused: for bits already in place, where a shift by 0
// would be a vector op for nothing). q2_K's codes (qs >> 2G) & 3 take
// BITS_SRL by 2G (BITS_AND for G = 0); q3_K's high bits and q5_K's fifth
// bits are moved to bit 2 or 4 from wherever their sub-block keeps them.
// The BITS_ forms are VEX (ymm, AVX2); the ZBITS_ forms EVEX (zmm). The
// dot package's K kernels have the same (dotk_amd64.h).
#define BITS_SLL(S, SRC, M, DST) \
	VPSLLW $S, SRC, DST; \
	VPAND M, DST, DST
#define BITS_SRL(S, SRC, M, DST) \
	VPSRLW $S, SRC, DST; \
	VPAND M, DST, DST
#define BITS_AND(S, SRC, M, DST) \
	VPAND M, SRC, DST
#define ZBITS_SLL(S, SRC, M, DST) \
	VPSLLW $S, SRC, DST; \
	VPANDD M, DST, DST
#define ZBITS_SRL(S, SRC, M, DST) \
	VPSRLW $S, SRC, DST; \
	VPANDD M, DST, DST
#define ZBITS_AND(S, SRC, M, DST) \
	VPANDD M, SRC, DST
