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

// The zmm float kernels (gemv_float_avx512_amd64.s, gemv_bf16dp_amd64.s)
// keep one 16-lane accumulator per row, Z0-Z3. The f16 and widening bf16
// ones prefetch ahead in the rows they stream rather than into the next
// four: each asks, once per 64-byte line of each row, for the line
// GVZ_AHEAD bytes further along (GVZ_PF4), so that four demand streams
// run ahead of the hardware prefetchers (without it they measured slower
// on a Zen 5, f16 4096x4096 and 4096x14336). The next-rows prefetch of
// GV2_PFN measured slower on a Zen 5 for rows streamed from DRAM (bf16
// 4096x14336). The f32 and pair bf16 kernels, which load a whole line
// of each row a step, prefetch nothing (GVZ_PF4 made them slower) or,
// in their PF forms (cpu.mulmat.gemv_prefetch, faster on a Zen 4), ask
// for the next four rows as GV2_PFN does.
#define GVZ_AHEAD 2048

// GVZ_NOPF is an empty prefetch step, for a kernel macro's form without
// one.
#define GVZ_NOPF

// GVZ_PAIRS(PF, PAIR, ODD, loop, odd, done) is the body of the zmm
// kernels that take CX runs of 16 elements of two bytes (f16, bf16) two
// at a time: PF (a prefetch macro, or GVZ_NOPF) then PAIR (two runs, a
// 64-byte line of each row) a step, then ODD for a last odd run, then
// the four rows' sums stored.
#define GVZ_PAIRS(PF, PAIR, ODD, loop, odd, done) \
	GVZ_ARGS; \
	GVZ_ZERO4; \
	MOVQ  CX, BX; \
	SHRQ  $1, CX; \
	JEQ   odd; \
loop: \
	PF; \
	PAIR; \
	ADDQ  $64, SI; \
	ADDQ  $64, DI; \
	DECQ  CX; \
	JNE   loop; \
odd: \
	TESTQ $1, BX; \
	JEQ   done; \
	ODD; \
done: \
	GVZ_STORE; \
	VZEROUPPER; \
	RET

// GVZ_PF4 prefetches the line GVZ_AHEAD bytes ahead in each of the four
// rows at SI (strides R8, 2*R8, R9 = 3*R8).
#define GVZ_PF4 \
	PREFETCHT0 GVZ_AHEAD(SI); \
	PREFETCHT0 GVZ_AHEAD(SI)(R8*1); \
	PREFETCHT0 GVZ_AHEAD(SI)(R8*2); \
	PREFETCHT0 GVZ_AHEAD(SI)(R9*1)

// GVZ_ZERO4 clears the four rows' accumulators.
#define GVZ_ZERO4 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3

// GVZ_ARGS loads the kernels' arguments: rows SI (stride R8, R9 = 3*R8),
// activation DI, count CX, out DX.
#define GVZ_ARGS \
	MOVQ x+0(FP), SI; \
	MOVQ ldx+8(FP), R8; \
	MOVQ y+16(FP), DI; \
	MOVQ nb+24(FP), CX; \
	MOVQ out+32(FP), DX; \
	LEAQ (R8)(R8*2), R9

// GVZ_HSUM16(Z, Y, X, TY, TX) leaves in the low lane of X the sum of Z's
// 16 lanes: lane l plus lane l+8 (as the AVX2 kernels add their two
// 8-lane accumulators), then GV2_HSUM8. TY and TX are the halves of one
// scratch register.
#define GVZ_HSUM16(Z, Y, X, TY, TX) \
	VEXTRACTF64X4 $1, Z, TY; \
	VADDPS        TY, Y, Y; \
	GV2_HSUM8(Y, X, TX)

// GVZ_STORE stores the four rows' sums from Z0-Z3 to (DX).
#define GVZ_STORE \
	GVZ_HSUM16(Z0, Y0, X0, Y9, X9); \
	VMOVSS X0, (DX); \
	GVZ_HSUM16(Z1, Y1, X1, Y9, X9); \
	VMOVSS X1, 4(DX); \
	GVZ_HSUM16(Z2, Y2, X2, Y9, X9); \
	VMOVSS X2, 8(DX); \
	GVZ_HSUM16(Z3, Y3, X3, Y9, X9); \
	VMOVSS X3, 12(DX)
