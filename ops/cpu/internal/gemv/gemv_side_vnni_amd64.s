//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// The vnni tier's q4_0 side kernel: sideQ4_0x4AVX2 (gemv_q_amd64.s) with
// the four rows in one zmm register (row r's four lanes in 128-bit lane
// r, where the AVX2 kernel keeps rows 0|1 and 2|3 in two ymm registers)
// and VPDPBUSD: lane l of a row is VPDPBUSD's sum of the low nibbles of
// bytes 4l..4l+3 times y 4l..4l+3, then of the high nibbles times y
// 16+4l..16+4l+3, the same exact integer as the AVX2 kernel's VPMADDUBSW
// pairs, VPADDW (|sum| < 2^14) and VPMADDWD; less the same 8*y lanes,
// converted, and added by FMA with the same d = f16(d_x)*d_y per row
// lane for lane, then the AVX2 kernel's VHADDPS sums. So it equals
// sideQ4_0x4AVX2 bit for bit. AVX-512 F/BW/VL and AVX512_VNNI (no DQ).

DATA gvsnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gvsnib<>(SB), RODATA|NOPTR, $8

// KVS_Q4BLK(XO, YO, DO): the q4_0 block at XO(SI) of the four rows, with
// the q8_0 block at YO(DI) and its prepared block at DO(BX): Z0 += rows
// 0|1|2|3 (128-bit lane r: row r). K1-K3 = 128-bit lanes 1, 2, 3 (as
// dword masks), Z14 = 0x0f, R14 = &halfTable. Clobbers AX, R11-R13,
// Z2-Z8, Z12.
#define KVS_Q4BLK(XO, YO, DO) \
	MOVWLZX         XO(SI), AX; \
	MOVWLZX         XO(SI)(R8*1), R11; \
	MOVWLZX         XO(SI)(R8*2), R12; \
	MOVWLZX         XO(SI)(R9*1), R13; \
	VBROADCASTI32X4 2+YO(DI), Z4; \
	VBROADCASTI32X4 18+YO(DI), Z5; \
	VBROADCASTI32X4 2+XO(SI), Z6; \
	VBROADCASTI32X4 2+XO(SI)(R8*1), K1, Z6; \
	VBROADCASTI32X4 2+XO(SI)(R8*2), K2, Z6; \
	VBROADCASTI32X4 2+XO(SI)(R9*1), K3, Z6; \
	VPSRLW          $4, Z6, Z7; \
	VPANDD          Z14, Z6, Z6; \
	VPANDD          Z14, Z7, Z7; \
	VPXORD          Z3, Z3, Z3; \
	VPDPBUSD        Z4, Z6, Z3; \
	VPDPBUSD        Z5, Z7, Z3; \
	VBROADCASTSS    (R14)(AX*4), Z8; \
	VBROADCASTSS    (R14)(R11*4), K1, Z8; \
	VBROADCASTSS    (R14)(R12*4), K2, Z8; \
	VBROADCASTSS    (R14)(R13*4), K3, Z8; \
	VBROADCASTSS    32+DO(BX), Z2; \
	VMULPS          Z2, Z8, Z8; \
	VBROADCASTI64X4 DO(BX), Z12; \
	VPSUBD          Z12, Z3, Z3; \
	VCVTDQ2PS       Z3, Z3; \
	VFMADD231PS     Z8, Z3, Z0

// func sideQ4_0x4VNNI(x *byte, ldx int, y *byte, side *float32, nb int, out *[4]float32)
//
// Twin: SideQ4_0Twin (equal to sideQ4_0x4AVX2 bit for bit).
TEXT ·sideQ4_0x4VNNI(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         ldx+8(FP), R8
	MOVQ         y+16(FP), DI
	MOVQ         side+24(FP), BX
	MOVQ         nb+32(FP), CX
	MOVQ         out+40(FP), DX
	LEAQ         (R8)(R8*2), R9
	MOVL         $0x00f0, AX
	KMOVW        AX, K1
	MOVL         $0x0f00, AX
	KMOVW        AX, K2
	MOVL         $0xf000, AX
	KMOVW        AX, K3
	VPBROADCASTQ gvsnib<>(SB), Z14
	MOVQ         ·halfTable(SB), R14
	VPXORD       Z0, Z0, Z0
	MOVQ         CX, R10
	SHRQ         $1, R10
	JEQ          gvsq40tail

gvsq40loop:
	GV2_PFN
	KVS_Q4BLK(0, 0, 0)
	KVS_Q4BLK(18, 34, 36)
	ADDQ $36, SI
	ADDQ $68, DI
	ADDQ $72, BX
	DECQ R10
	JNE  gvsq40loop

gvsq40tail:
	TESTQ $1, CX
	JEQ   gvsq40done
	GV2_PFN
	KVS_Q4BLK(0, 0, 0)

gvsq40done:
	VEXTRACTF64X4 $1, Z0, Y1
	VEXTRACTF128  $1, Y0, X2
	VEXTRACTF128  $1, Y1, X3
	VHADDPS       X2, X0, X4
	VHADDPS       X3, X1, X5
	VHADDPS       X5, X4, X4
	VMOVUPS       X4, (DX)
	VZEROUPPER
	RET
