//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT block kernels on AVX-512 F (see flashattn_avx512_amd64.go
// and the twins in twin.go): the mask, the logits, the f16 rounding of
// the query rows and the q8_0 widening of value tiles, 16 elements to a
// zmm register, each element as in the AVX2 kernels
// (flashattn_logits_amd64.s, flashattn_q8_amd64.s).

// func faMaskF16AVX512(sc *float32, m *uint16, n int, slope float32) uint64
//
// faMaskF16AVX2 16 keys at a time: sc[t] = slope * m[t] (f16 widened)
// for t < n, n a multiple of 16 and at most 64; bit t of the result is
// set where sc[t] is -Inf.
TEXT ·faMaskF16AVX512(SB), NOSPLIT, $0-40
	MOVQ sc+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ n+16(FP), BX
	PREFETCHT0 128(SI)    // the next tile's mask values (the row goes on)
	PREFETCHT0 192(SI)
	PREFETCHT0 255(SI)
	VBROADCASTSS slope+24(FP), Z1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Z2   // -Inf
	XORQ AX, AX           // AX: the bits
	XORQ CX, CX           // CX: t

maskz_loop:
	CMPQ CX, BX
	JGE  maskz_done
	VCVTPH2PS (SI)(CX*2), Z0
	VMULPS Z1, Z0, Z0
	VMOVUPS Z0, (DI)(CX*4)
	VCMPPS $0, Z2, Z0, K1 // EQ_OQ: == -Inf
	KMOVW K1, DX
	SHLQ CX, DX
	ORQ  DX, AX
	ADDQ $16, CX
	JMP  maskz_loop

maskz_done:
	MOVQ AX, ret+32(FP)
	VZEROUPPER
	RET

// func faLogitsAVX512(sc, dots *float32, n int, scale float32) (mx float32, nan bool)
//
// faLogitsAVX2 16 keys at a time (n a positive multiple of 16): unless
// sc[t] (the mask value mv) is -Inf, sc[t] becomes dots[t]*scale + mv
// (two roundings); mx is the lane-wise VMAXPS maximum of the new sc, nan
// reports a NaN among them.
TEXT ·faLogitsAVX512(SB), NOSPLIT, $0-37
	MOVQ sc+0(FP), DI
	MOVQ dots+8(FP), SI
	MOVQ n+16(FP), BX
	VBROADCASTSS scale+24(FP), Z1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Z2   // -Inf
	VMOVAPS Z2, Z4        // Z4: running maximum
	KXORW K3, K3, K3      // K3: NaN lanes seen
	XORQ CX, CX

logitz_loop:
	CMPQ CX, BX
	JGE  logitz_done
	VMOVUPS (DI)(CX*4), Z0
	VMULPS (SI)(CX*4), Z1, Z3
	VADDPS Z0, Z3, Z3
	VCMPPS $0, Z2, Z0, K1
	VMOVAPS Z0, K1, Z3    // masked keys keep their -Inf
	VMOVUPS Z3, (DI)(CX*4)
	VCMPPS $3, Z3, Z3, K2 // UNORD_Q: NaN
	KORW K2, K3, K3
	VMAXPS Z3, Z4, Z4
	ADDQ $16, CX
	JMP  logitz_loop

logitz_done:
	VEXTRACTF64X4 $1, Z4, Y0
	VMAXPS Y0, Y4, Y4
	VEXTRACTF128 $1, Y4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0x4E, X4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0xB1, X4, X0
	VMAXPS X0, X4, X4
	VMOVSS X4, mx+32(FP)
	KMOVW K3, AX
	TESTL AX, AX
	SETNE nan+36(FP)
	VZEROUPPER
	RET

// func faRoundF16AVX512(dst, src *float32, n int)
//
// faRoundF16AVX2 16 values at a time: dst[i] = src[i] rounded to binary16
// (to nearest, ties to even) and widened back, for i < n (a multiple of
// 16).
TEXT ·faRoundF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

roundz_loop:
	CMPQ AX, CX
	JGE  roundz_done
	VMOVUPS (SI)(AX*4), Z0
	VCVTPS2PH $0, Z0, Y1
	VCVTPH2PS Y1, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ $16, AX
	JMP  roundz_loop

roundz_done:
	VZEROUPPER
	RET

// func faDequantQ8AVX512(dst *float32, src *byte, nb int)
//
// faDequantQ8AVX2 in zmm: dst = the nb q8_0 blocks at src widened,
// element j of a block float32(code) * d, 16 codes to a register.
TEXT ·faDequantQ8AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX

dq8z_loop:
	TESTQ CX, CX
	JLE   dq8z_done
	VPBROADCASTW (SI), Y0
	VCVTPH2PS Y0, Z0
	VPMOVSXBD 2(SI), Z1
	VCVTDQ2PS Z1, Z1
	VMULPS Z0, Z1, Z1
	VMOVUPS Z1, (DI)
	VPMOVSXBD 18(SI), Z2
	VCVTDQ2PS Z2, Z2
	VMULPS Z0, Z2, Z2
	VMOVUPS Z2, 64(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JMP  dq8z_loop

dq8z_done:
	VZEROUPPER
	RET
