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

// Q2K_LOW(G), Q2K_LOW0(G): Y10 = (qs >> 2G) & 3 of Y7 (Y14 = 0x03),
// LOW0 for chunk 0 without a shift by 0. Q3K_SLL(S), Q3K_SRL(S),
// Q3K_BIT2(S): Y5 = the high bits of Y13 moved to bit 2 (shifted by S;
// BIT2 where they are there already), masked by Y8 (0x04).
#define Q2K_LOW(G) \
	VPSRLW $(2*G), Y7, Y10; \
	VPAND Y14, Y10, Y10
#define Q2K_LOW0(G) \
	VPAND Y14, Y7, Y10
#define Q3K_SLL(S) \
	VPSLLW $S, Y13, Y5; \
	VPAND Y8, Y5, Y5
#define Q3K_SRL(S) \
	VPSRLW $S, Y13, Y5; \
	VPAND Y8, Y5, Y5
#define Q3K_BIT2(S) \
	VPAND Y8, Y13, Y5
