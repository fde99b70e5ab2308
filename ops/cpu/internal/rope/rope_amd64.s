//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels of ROPE (package cpu's op_rope.go drives them): the
// per-token cache of cosines and sines, computed in float64 four pairs at
// a time, and the rotation of every head of a token in one call.
// Twins: AnglesTwin (twin.go), normRow and neoXRow (rope.go).

// D4 defines a 32-byte constant holding four copies of the uint64 bits.
#define D4(name, bits) \
	DATA name<>+0(SB)/8, $bits; \
	DATA name<>+8(SB)/8, $bits; \
	DATA name<>+16(SB)/8, $bits; \
	DATA name<>+24(SB)/8, $bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

D4(ropemagic, 0x4338000000000000)
D4(ropetwoopi, 0x3fe45f306dc9c883)
D4(ropepio2hi, 0x3ff921fb54442d18)
D4(ropepio2lo, 0x3c91a62633145c07)
D4(ropes1, 0xbfc5555555555549)
D4(ropes2, 0x3f8111111110f8a6)
D4(ropes3, 0xbf2a01a019c161d5)
D4(ropes4, 0x3ec71de357b1fe7d)
D4(ropes5, 0xbe5ae5e68a2b9ceb)
D4(ropes6, 0x3de5d93a5acfd57c)
D4(ropec1, 0x3fa555555555554c)
D4(ropec2, 0xbf56c16c16c15177)
D4(ropec3, 0x3efa01a019cb1590)
D4(ropec4, 0xbe927e4f809c52ad)
D4(ropec5, 0x3e21ee9ebdb4b1c4)
D4(ropec6, 0xbda8fae9be8838d4)
D4(ropehalf, 0x3fe0000000000000)
D4(ropeone, 0x3ff0000000000000)
D4(ropeq1, 0x0000000000000001)
D4(ropeq2, 0x0000000000000002)

DATA ropesign32<>+0(SB)/4, $0x80000000
DATA ropesign32<>+4(SB)/4, $0x80000000
DATA ropesign32<>+8(SB)/4, $0x80000000
DATA ropesign32<>+12(SB)/4, $0x80000000
GLOBL ropesign32<>(SB), RODATA|NOPTR, $16

// func ropeAnglesAVX2(c, s *float32, w *float64, n int, pos, mscale float64, dup int)
// For n (a multiple of 4) pairs, θ = pos*w[i]: c[i] = float32(cos θ *
// mscale), s[i] = float32(sin θ * mscale); with dup != 0, c[2i] = c[2i+1]
// = the cosine and s[2i] = -sine, s[2i+1] = sine. Each lane follows
// ropeSinCos step for step (twin: ropeAnglesTwin); |θ| must be at most
// ropeFastAngle.
TEXT ·ropeAnglesAVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ s+8(FP), R8
	MOVQ w+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD pos+32(FP), Y15
	VBROADCASTSD mscale+40(FP), Y14
	MOVQ dup+48(FP), DX

angles_loop:
	CMPQ CX, $4
	JL   angles_done
	// θ, k = round(θ·2/π) (Y2) with the quadrant in Y1's low bits, r (Y0).
	VMULPD (SI), Y15, Y0
	VMOVUPD ropemagic<>(SB), Y1
	VFMADD231PD ropetwoopi<>(SB), Y0, Y1
	VSUBPD ropemagic<>(SB), Y1, Y2
	VFNMADD231PD ropepio2hi<>(SB), Y2, Y0
	VFNMADD231PD ropepio2lo<>(SB), Y2, Y0
	VMULPD Y0, Y0, Y3

	// sin r = r + (r·z)·S(z) (Y4).
	VMOVUPD ropes6<>(SB), Y4
	VFMADD213PD ropes5<>(SB), Y3, Y4
	VFMADD213PD ropes4<>(SB), Y3, Y4
	VFMADD213PD ropes3<>(SB), Y3, Y4
	VFMADD213PD ropes2<>(SB), Y3, Y4
	VFMADD213PD ropes1<>(SB), Y3, Y4
	VMULPD Y3, Y0, Y5
	VFMADD213PD Y0, Y5, Y4

	// cos r = (1 - z/2) + z²·C(z) (Y6).
	VMOVUPD ropec6<>(SB), Y6
	VFMADD213PD ropec5<>(SB), Y3, Y6
	VFMADD213PD ropec4<>(SB), Y3, Y6
	VFMADD213PD ropec3<>(SB), Y3, Y6
	VFMADD213PD ropec2<>(SB), Y3, Y6
	VFMADD213PD ropec1<>(SB), Y3, Y6
	VMULPD ropehalf<>(SB), Y3, Y7
	VMOVUPD ropeone<>(SB), Y8
	VSUBPD Y7, Y8, Y8
	VMULPD Y3, Y3, Y9
	VFMADD213PD Y8, Y9, Y6

	// Quadrant: swap when k is odd, negate sin when k&2, cos when
	// (k+1)&2.
	VPAND ropeq1<>(SB), Y1, Y10
	VPCMPEQQ ropeq1<>(SB), Y10, Y10
	VBLENDVPD Y10, Y6, Y4, Y11
	VBLENDVPD Y10, Y4, Y6, Y12
	VPAND ropeq2<>(SB), Y1, Y13
	VPSLLQ $62, Y13, Y13
	VXORPD Y13, Y11, Y11
	VPADDQ ropeq1<>(SB), Y1, Y13
	VPAND ropeq2<>(SB), Y13, Y13
	VPSLLQ $62, Y13, Y13
	VXORPD Y13, Y12, Y12

	// Scale, round to float32 (X11 sines, X12 cosines) and store.
	VMULPD Y14, Y11, Y11
	VMULPD Y14, Y12, Y12
	VCVTPD2PSY Y11, X11
	VCVTPD2PSY Y12, X12
	TESTQ DX, DX
	JNZ   angles_dup
	VMOVUPS X12, (DI)
	VMOVUPS X11, (R8)
	ADDQ $16, DI
	ADDQ $16, R8
	JMP  angles_next

angles_dup:
	VUNPCKLPS X12, X12, X0
	VUNPCKHPS X12, X12, X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	VXORPS ropesign32<>(SB), X11, X2
	VUNPCKLPS X11, X2, X0
	VUNPCKHPS X11, X2, X1
	VMOVUPS X0, (R8)
	VMOVUPS X1, 16(R8)
	ADDQ $32, DI
	ADDQ $32, R8

angles_next:
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  angles_loop

angles_done:
	VZEROUPPER
	RET

// func ropeNormHeadsAVX2(out, x *float32, ostr, xstr, nh, n int, cc, ss *float32)
// For nh heads, head h at out+h*ostr and x+h*xstr (byte strides): the
// first n (a multiple of 8) elements out = x*cc + swap(x)*ss, swap
// exchanging adjacent pairs, each product rounded (twin: ropeNormGeneric
// per head). out may be x.
TEXT ·ropeNormHeadsAVX2(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ ostr+16(FP), R12
	MOVQ xstr+24(FP), R13
	MOVQ nh+32(FP), DX
	MOVQ n+40(FP), BX
	MOVQ cc+48(FP), R10
	MOVQ ss+56(FP), R11

normh_head:
	TESTQ DX, DX
	JLE   normh_done
	XORQ AX, AX

normh_loop16:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JG   normh_loop8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y4
	VPERMILPS $0xb1, Y0, Y1
	VPERMILPS $0xb1, Y4, Y5
	VMULPS (R10)(AX*4), Y0, Y2
	VMULPS 32(R10)(AX*4), Y4, Y6
	VMULPS (R11)(AX*4), Y1, Y3
	VMULPS 32(R11)(AX*4), Y5, Y7
	VADDPS Y3, Y2, Y2
	VADDPS Y7, Y6, Y6
	VMOVUPS Y2, (DI)(AX*4)
	VMOVUPS Y6, 32(DI)(AX*4)
	MOVQ CX, AX
	JMP  normh_loop16

normh_loop8:
	CMPQ AX, BX
	JGE  normh_next
	VMOVUPS (SI)(AX*4), Y0
	VPERMILPS $0xb1, Y0, Y1
	VMULPS (R10)(AX*4), Y0, Y2
	VMULPS (R11)(AX*4), Y1, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	JMP  normh_loop8

normh_next:
	ADDQ R12, DI
	ADDQ R13, SI
	DECQ DX
	JMP  normh_head

normh_done:
	VZEROUPPER
	RET

// func ropeNeoXHeadsAVX2(out, x *float32, ostr, xstr, nh, n, half int, cos, sin *float32)
// For nh heads, head h at out+h*ostr and x+h*xstr (byte strides): the
// pairs (x[i], x[i+half]) for i < n (a multiple of 8) become x[i]*c -
// x[i+half]*s and x[i]*s + x[i+half]*c, each product rounded (twin:
// ropeNeoXGeneric per head). out may be x.
TEXT ·ropeNeoXHeadsAVX2(SB), NOSPLIT, $0-72
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ ostr+16(FP), R12
	MOVQ xstr+24(FP), R13
	MOVQ nh+32(FP), DX
	MOVQ n+40(FP), BX
	MOVQ half+48(FP), R14
	SHLQ $2, R14
	MOVQ cos+56(FP), R10
	MOVQ sin+64(FP), R11

neoxh_head:
	TESTQ DX, DX
	JLE   neoxh_done
	XORQ AX, AX
	LEAQ (SI)(R14*1), R8
	LEAQ (DI)(R14*1), R9

neoxh_loop:
	CMPQ AX, BX
	JGE  neoxh_next
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS (R8)(AX*4), Y1
	VMOVUPS (R10)(AX*4), Y2
	VMOVUPS (R11)(AX*4), Y3
	VMULPS Y2, Y0, Y4
	VMULPS Y3, Y1, Y5
	VSUBPS Y5, Y4, Y4
	VMULPS Y3, Y0, Y5
	VMULPS Y2, Y1, Y6
	VADDPS Y6, Y5, Y5
	VMOVUPS Y4, (DI)(AX*4)
	VMOVUPS Y5, (R9)(AX*4)
	ADDQ $8, AX
	JMP  neoxh_loop

neoxh_next:
	ADDQ R12, DI
	ADDQ R13, SI
	DECQ DX
	JMP  neoxh_head

neoxh_done:
	VZEROUPPER
	RET
