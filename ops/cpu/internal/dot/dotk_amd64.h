// Macros shared by dotk_amd64.s and gemmk_amd64.s (Go assembly macros
// are per file).

// KSCALES: X1 = the eight 6-bit scale codes then the eight 6-bit min codes
// of the q4_K/q5_K block at SI (12 packed bytes at 4(SI)). Clobbers AX,
// BX, R8-R10.
#define KSCALES \
	MOVL 4(SI), AX; \
	MOVL 8(SI), BX; \
	MOVL 12(SI), R10; \
	MOVL AX, R8; \
	ANDL $0x3f3f3f3f, R8; \
	VMOVD R8, X1; \
	MOVL AX, R8; \
	SHRL $2, R8; \
	ANDL $0x30303030, R8; \
	MOVL R10, R9; \
	ANDL $0x0f0f0f0f, R9; \
	ORL R9, R8; \
	VPINSRD $1, R8, X1, X1; \
	MOVL BX, R8; \
	ANDL $0x3f3f3f3f, R8; \
	VPINSRD $2, R8, X1, X1; \
	MOVL BX, R8; \
	SHRL $2, R8; \
	ANDL $0x30303030, R8; \
	MOVL R10, R9; \
	SHRL $4, R9; \
	ANDL $0x0f0f0f0f, R9; \
	ORL R9, R8; \
	VPINSRD $3, R8, X1, X1

// Bit moves, passed by name to the K-format kernels' chunk and pair
// macros: DST = the words of SRC shifted left (BITS_SLL) or right
// (BITS_SRL) by S bits and masked by M, or SRC masked by M alone
// (BITS_AND, S unused: for bits already in place, where a shift by 0
// would be a vector op for nothing). q2_K's codes (qs >> 2G) & 3 take
// BITS_SRL by 2G (BITS_AND for G = 0); q3_K's high bits and q5_K's fifth
// bits are moved to bit 2 or 4 from wherever their sub-block keeps them.
// The BITS_ forms are VEX (ymm, AVX2); the ZBITS_ forms EVEX (zmm). The
// gemv package's K kernels have the same (gemv_k_amd64.h).
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
