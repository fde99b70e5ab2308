// Macros shared by dot_float_amd64.s and dot_q_amd64.s (Go assembly
// macros are per file).

// HSUM8 leaves in the low lane of X (the low half of Y) the sum of Y's
// eight float32 lanes v0..v7 as ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)).
// T is a scratch register.
#define HSUM8(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS T, X, X; \
	VMOVHLPS X, X, T; \
	VADDPS T, X, X; \
	VMOVSHDUP X, T; \
	VADDSS T, X, X
