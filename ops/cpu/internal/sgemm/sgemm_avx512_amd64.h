// Macros shared by the 6x32 micro-kernels of sgemm_avx512_amd64.s and
// sgemm_bf16_amd64.s (Go assembly macros are per file).

// SG6ZSTORE(r0, r1) adds the accumulators of one row to c at DX.
#define SG6ZSTORE(r0, r1) \
	VADDPS  (DX), r0, r0; \
	VMOVUPS r0, (DX); \
	VADDPS  64(DX), r1, r1; \
	VMOVUPS r1, 64(DX)
