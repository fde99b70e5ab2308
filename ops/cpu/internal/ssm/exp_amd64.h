// Constants and the EXP8 macro of the AVX2 vector exp, included by the
// assembly files that take exponentials (internal/vec's vec_amd64.s and
// elementwise_amd64.s, internal/ssm's ssm_scan_amd64.s).
// Go assembly includes only from its own directory, so ops/cpu/internal/vec
// and ops/cpu/internal/ssm each hold this file: keep the two identical.
// The constants are file-local symbols (name<>), so each file including
// this one gets its own copy.

// C8 defines a 32-byte constant holding eight copies of the uint32 bits.
#define C8(name, bits) \
	DATA name<>+0(SB)/4, $bits; \
	DATA name<>+4(SB)/4, $bits; \
	DATA name<>+8(SB)/4, $bits; \
	DATA name<>+12(SB)/4, $bits; \
	DATA name<>+16(SB)/4, $bits; \
	DATA name<>+20(SB)/4, $bits; \
	DATA name<>+24(SB)/4, $bits; \
	DATA name<>+28(SB)/4, $bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

C8(explog2e, 0x3fb8aa3b)
C8(expnc1, 0xbf318000)
C8(expnc2, 0x395e8083)
C8(expp0, 0x39506967)
C8(expp1, 0x3ab743ce)
C8(expp2, 0x3c088908)
C8(expp3, 0x3d2aa9c1)
C8(expp4, 0x3e2aaaaa)
C8(expp5, 0x3f000000)
C8(expone, 0x3f800000)
C8(explo, 0xc2b00000)
C8(exphi, 0x42b00000)
C8(expbias, 0x0000007f)
C8(neginf, 0xff800000)

// EXP8: Y0 = exp(Y0) lane by lane, as expTwin. Y8 must hold explo and Y9
// exphi; Y1-Y4 are clobbered. x is the second source of VMAXPS/VMINPS so
// that a NaN passes through.
#define EXP8 \
	VMAXPS Y0, Y8, Y0; \
	VMINPS Y0, Y9, Y0; \
	VMULPS explog2e<>(SB), Y0, Y1; \
	VROUNDPS $0, Y1, Y1; \
	VMOVAPS Y0, Y2; \
	VFMADD231PS expnc1<>(SB), Y1, Y2; \
	VFMADD231PS expnc2<>(SB), Y1, Y2; \
	VMOVUPS expp0<>(SB), Y3; \
	VFMADD213PS expp1<>(SB), Y2, Y3; \
	VFMADD213PS expp2<>(SB), Y2, Y3; \
	VFMADD213PS expp3<>(SB), Y2, Y3; \
	VFMADD213PS expp4<>(SB), Y2, Y3; \
	VFMADD213PS expp5<>(SB), Y2, Y3; \
	VMULPS Y2, Y2, Y4; \
	VFMADD213PS Y2, Y4, Y3; \
	VADDPS expone<>(SB), Y3, Y3; \
	VCVTPS2DQ Y1, Y1; \
	VPADDD expbias<>(SB), Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y1, Y3, Y0
