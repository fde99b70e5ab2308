//go:build amd64 && !purego

#include "textflag.h"

// FLASH_ATTN_EXT block kernels (see flashattn_amd64.go and the twins in
// twin.go): the mask, the logits and the
// f16 rounding of the softmax step.

// func faMaskF16AVX2(sc *float32, m *uint16, n int, slope float32) uint64
//
// sc[t] = slope * m[t] (f16 widened) for t < n, n a multiple of 8 and at
// most 64; bit t of the result is set where sc[t] is -Inf.
TEXT ·faMaskF16AVX2(SB), NOSPLIT, $0-40
	MOVQ sc+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ n+16(FP), BX
	PREFETCHT0 128(SI)    // the next tile's mask values (the row goes on)
	PREFETCHT0 192(SI)
	PREFETCHT0 255(SI)
	VBROADCASTSS slope+24(FP), Y1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Y2   // -Inf
	XORQ AX, AX           // AX: the bits
	XORQ CX, CX           // CX: t

mask_loop:
	CMPQ CX, BX
	JGE  mask_done
	VCVTPH2PS (SI)(CX*2), Y0
	VMULPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)(CX*4)
	VCMPPS $0, Y2, Y0, Y3 // EQ_OQ: == -Inf
	VMOVMSKPS Y3, DX
	SHLQ CX, DX
	ORQ  DX, AX
	ADDQ $8, CX
	JMP  mask_loop

mask_done:
	MOVQ AX, ret+32(FP)
	VZEROUPPER
	RET

// func faLogitsAVX2(sc, dots *float32, n int, scale float32) (mx float32, nan bool)
//
// For t < n (a positive multiple of 8): sc[t] holds a key's mask value
// mv; unless mv is -Inf (a masked key, left as it is), sc[t] becomes
// dots[t]*scale + mv (two roundings, as faLogit without softcap). mx is
// the lane-wise VMAXPS maximum of the new sc (masked keys are -Inf) and
// nan reports a NaN among them.
TEXT ·faLogitsAVX2(SB), NOSPLIT, $0-37
	MOVQ sc+0(FP), DI
	MOVQ dots+8(FP), SI
	MOVQ n+16(FP), BX
	VBROADCASTSS scale+24(FP), Y1
	MOVL $0xff800000, AX
	VMOVD AX, X2
	VBROADCASTSS X2, Y2   // -Inf
	VMOVAPS Y2, Y4        // Y4: running maximum
	VXORPS Y5, Y5, Y5     // Y5: NaN lanes seen
	XORQ CX, CX

logit_loop:
	CMPQ CX, BX
	JGE  logit_done
	VMOVUPS (DI)(CX*4), Y0
	VMULPS (SI)(CX*4), Y1, Y3
	VADDPS Y0, Y3, Y3
	VCMPPS $0, Y2, Y0, Y6
	VBLENDVPS Y6, Y0, Y3, Y3
	VMOVUPS Y3, (DI)(CX*4)
	VCMPPS $3, Y3, Y3, Y6 // UNORD_Q: NaN
	VORPS Y6, Y5, Y5
	VMAXPS Y3, Y4, Y4
	ADDQ $8, CX
	JMP  logit_loop

logit_done:
	VEXTRACTF128 $1, Y4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0x4E, X4, X0
	VMAXPS X0, X4, X4
	VPERMILPS $0xB1, X4, X0
	VMAXPS X0, X4, X4
	VMOVSS X4, mx+32(FP)
	VMOVMSKPS Y5, AX
	TESTL AX, AX
	SETNE nan+36(FP)
	VZEROUPPER
	RET

// func faRoundF16AVX2(dst, src *float32, n int)
//
// dst[i] = src[i] rounded to binary16 (to nearest, ties to even, as
// quant.FP32ToFP16) and widened back, for i < n (a multiple of 8).
TEXT ·faRoundF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

round_loop:
	CMPQ AX, CX
	JGE  round_done
	VMOVUPS (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP  round_loop

round_done:
	VZEROUPPER
	RET

