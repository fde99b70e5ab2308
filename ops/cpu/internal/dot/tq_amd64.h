// Shared pieces of the ternary formats' dot products (tq_amd64.s and
// tq_avx512_amd64.s): a super-block's end, in the generic kernels'
// float32 order, and its setup.

// TQBLOCK_END(DOFF): X8 += float32(s) * (d_x * d_y), s the sum of the
// int16 lanes of Y0 less the q8_K block's bsums, d_x the f16 at DOFF(SI),
// d_y the float32 at (DI). Clobbers Y0, X1.
#define TQBLOCK_END(DOFF) \
	VPSUBW 260(DI), Y0, Y0; \
	VPMADDWD Y15, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0x4e, X0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0xb1, X0, X1; \
	VPADDD X1, X0, X0; \
	VCVTDQ2PS X0, X0; \
	VPBROADCASTW DOFF(SI), X1; \
	VCVTPH2PS X1, X1; \
	VMULSS (DI), X1, X1; \
	VMULSS X1, X0, X0; \
	VADDSS X0, X8, X8

// TQNEXT(DOFF, BYTES, loop, done) ends a super-block (TQBLOCK_END(DOFF)),
// steps to the next (BYTES of TQ codes, one q8_K block) while CX counts
// down, and at done returns the sum X8.
#define TQNEXT(DOFF, BYTES, loop, done) \
	TQBLOCK_END(DOFF); \
	ADDQ $BYTES, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNE  loop; \
done: \
	VZEROUPPER; \
	MOVSS X8, ret+24(FP); \
	RET

// TQSETUP: Y15 = 0x0001 words, X8 = 0 (the sum).
#define TQSETUP \
	VPCMPEQW Y15, Y15, Y15; \
	VPSRLW $15, Y15, Y15; \
	VXORPS X8, X8, X8
