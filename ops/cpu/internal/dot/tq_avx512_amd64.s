//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 dot product of TQ2_0 with q8_K (iq.go's TQ2_0), as the AVX2
// kernel (tq_amd64.s) with two of its 32-byte steps in one zmm: each
// half of the super-block's 64 code bytes is broadcast to both halves of
// a zmm and shifted by 0 and 2 (or 4 and 6) bits per half (VPSRLVW), so
// that a masked result's 64 codes meet 64 consecutive q8_K codes. The
// int16 lanes add four VPMADDUBSW pairs each (at most 4*768) before the
// halves are added and the bsums subtracted, so nothing saturates, and
// the float32 step is the AVX2 kernel's: the kernel equals TQ2_0 bit for
// bit on q8_K rows whose bsums are the sums of their codes.

// tqShift01, tqShift23: the VPSRLVW counts 0 and 2, 4 and 6 (low and
// high half).
DATA tqShift01<>+0x00(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x08(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x10(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x18(SB)/8, $0x0000000000000000
DATA tqShift01<>+0x20(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x28(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x30(SB)/8, $0x0002000200020002
DATA tqShift01<>+0x38(SB)/8, $0x0002000200020002
GLOBL tqShift01<>(SB), RODATA|NOPTR, $64
DATA tqShift23<>+0x00(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x08(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x10(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x18(SB)/8, $0x0004000400040004
DATA tqShift23<>+0x20(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x28(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x30(SB)/8, $0x0006000600060006
DATA tqShift23<>+0x38(SB)/8, $0x0006000600060006
GLOBL tqShift23<>(SB), RODATA|NOPTR, $64

// TQ2PAIR adds to Z0 the products of the codes of src shifted by the
// counts in cnt (two 2-bit fields of each byte, one per half) with the
// 64 q8_K codes at yoff(DI). Z24 = bytes 3. Clobbers Z4.
#define TQ2PAIR(src, cnt, yoff) \
	VPSRLVW cnt, src, Z4; \
	VPANDQ Z24, Z4, Z4; \
	VPMADDUBSW yoff(DI), Z4, Z4; \
	VPADDW Z4, Z0, Z0

// func dotTQ2_0Q8_KAVX512(x, y *byte, nb int) float32
TEXT ·dotTQ2_0Q8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VPTERNLOGD $0xff, Z24, Z24, Z24
	VPSRLW $15, Y24, Y15 // words 1
	VPABSB Z24, Z24 // bytes 1
	VPADDB Z24, Z24, Z25
	VPADDB Z25, Z24, Z24 // bytes 3
	VMOVDQU64 tqShift01<>(SB), Z26
	VMOVDQU64 tqShift23<>(SB), Z27
	VXORPS X8, X8, X8
	TESTQ CX, CX
	JEQ   tq2done

tq2loop:
	VBROADCASTI64X4 (SI), Z2
	VBROADCASTI64X4 32(SI), Z3
	VPXORQ Z0, Z0, Z0
	TQ2PAIR(Z2, Z26, 4)
	TQ2PAIR(Z2, Z27, 68)
	TQ2PAIR(Z3, Z26, 132)
	TQ2PAIR(Z3, Z27, 196)
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDW Y1, Y0, Y0
	VPSUBW 260(DI), Y0, Y0
	VPMADDWD Y15, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VCVTDQ2PS X0, X0
	VPBROADCASTW 64(SI), X1
	VCVTPH2PS X1, X1
	VMULSS (DI), X1, X1
	VMULSS X1, X0, X0
	VADDSS X0, X8, X8
	ADDQ $66, SI
	ADDQ $292, DI
	DECQ CX
	JNE  tq2loop

tq2done:
	VZEROUPPER
	MOVSS X8, ret+24(FP)
	RET
