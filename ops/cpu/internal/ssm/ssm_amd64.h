// Macros shared by ssm_scan_amd64.s and ssm_tile_amd64.s (Go assembly
// macros are per file).

// HSUM8(y, x): x (the low half of y) = the sum of y's lanes as hsum8;
// X1 is clobbered.
#define HSUM8(y, x) \
	VEXTRACTF128 $1, y, X1; \
	VADDPS X1, x, x; \
	VMOVHLPS x, x, X1; \
	VADDPS X1, x, x; \
	VMOVSHDUP x, X1; \
	VADDSS X1, x, x
