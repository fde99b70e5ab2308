// The zmm form of exp_amd64.h's EXP8 (the same float32 operations in the
// same order, lane by lane, so ExpTwin is its twin too), included by the
// avx512 tier's assembly files of this package. The constants are
// file-local symbols (name<>) of one float32 each, broadcast into Z16-Z28
// by EXP16_CONSTS; a file including this one must leave Z16-Z28 alone.

#define C1(name, bits) \
	DATA name<>+0(SB)/4, $bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $4

C1(e5log2e, 0x3fb8aa3b)
C1(e5nc1, 0xbf318000)
C1(e5nc2, 0x395e8083)
C1(e5p0, 0x39506967)
C1(e5p1, 0x3ab743ce)
C1(e5p2, 0x3c088908)
C1(e5p3, 0x3d2aa9c1)
C1(e5p4, 0x3e2aaaaa)
C1(e5p5, 0x3f000000)
C1(e5one, 0x3f800000)
C1(e5bias, 0x0000007f)
C1(e5lo, 0xc2b00000)
C1(e5hi, 0x42b00000)

// EXP16_CONSTS broadcasts the exp constants: Z16 log2(e), Z17-Z18 the
// two parts of -ln(2), Z19-Z24 the polynomial, Z25 1.0, Z26 the int32
// exponent bias, Z27-Z28 the input clamp.
#define EXP16_CONSTS \
	VBROADCASTSS e5log2e<>(SB), Z16; \
	VBROADCASTSS e5nc1<>(SB), Z17; \
	VBROADCASTSS e5nc2<>(SB), Z18; \
	VBROADCASTSS e5p0<>(SB), Z19; \
	VBROADCASTSS e5p1<>(SB), Z20; \
	VBROADCASTSS e5p2<>(SB), Z21; \
	VBROADCASTSS e5p3<>(SB), Z22; \
	VBROADCASTSS e5p4<>(SB), Z23; \
	VBROADCASTSS e5p5<>(SB), Z24; \
	VBROADCASTSS e5one<>(SB), Z25; \
	VPBROADCASTD e5bias<>(SB), Z26; \
	VBROADCASTSS e5lo<>(SB), Z27; \
	VBROADCASTSS e5hi<>(SB), Z28

// EXP16(X, T1, T2, T3, T4): X = exp(X) lane by lane, as EXP8 (and
// ExpTwin); T1-T4 are clobbered. x is the second source of VMAXPS and
// VMINPS so that a NaN passes through. VRNDSCALEPS $0 rounds to nearest
// even as EXP8's VROUNDPS $0.
#define EXP16(X, T1, T2, T3, T4) \
	VMAXPS X, Z27, X; \
	VMINPS X, Z28, X; \
	VMULPS Z16, X, T1; \
	VRNDSCALEPS $0, T1, T1; \
	VMOVAPS X, T2; \
	VFMADD231PS Z17, T1, T2; \
	VFMADD231PS Z18, T1, T2; \
	VMOVAPS Z19, T3; \
	VFMADD213PS Z20, T2, T3; \
	VFMADD213PS Z21, T2, T3; \
	VFMADD213PS Z22, T2, T3; \
	VFMADD213PS Z23, T2, T3; \
	VFMADD213PS Z24, T2, T3; \
	VMULPS T2, T2, T4; \
	VFMADD213PS T2, T4, T3; \
	VADDPS Z25, T3, T3; \
	VCVTPS2DQ T1, T1; \
	VPADDD Z26, T1, T1; \
	VPSLLD $23, T1, T1; \
	VMULPS T1, T3, X

// TAILMASK sets K1 to the low CX bits (0 < CX < 16). Clobbers AX.
#define TAILMASK \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1
