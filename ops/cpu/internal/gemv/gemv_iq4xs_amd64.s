//go:build amd64 && !purego

#include "textflag.h"
#include "gemv_amd64.h"

// Four-row kernel of IQ4_XS against a q8_K row (see gemv_amd64.go; twin:
// internal/dot's IQ4_XSTwin, which it equals bit for bit, as it does
// internal/dot's IQ4_XSAVX2). Per super-block each row's eight sub-block
// scales ls_j-32 are decoded as words into a stack slot (16 bytes per
// row, BX); per sub-block the 32 activation codes are loaded once and
// their magnitudes |y| (read unsigned) taken once for the four rows, and
// each row's 16 index bytes are split into nibbles as q4_0's kernel
// splits them, looked up in IQ4NLValues (VPSHUFB), given y's signs and
// multiplied with |y| by VPMADDUBSW; VPMADDWD by the sub-block's scale
// word (VPBROADCASTW from the slot) and VPADDD build the row's eight
// exact int32 lanes (see internal/dot's iq4xs_amd64.s: below 2^24), which
// are converted once per super-block and FMA'd with d = d_x*d_y into one
// accumulator per row.
//
// Registers: SI walks row 0 of x (rows r at SI + r*R8, R9 = 3*R8), DI
// walks y, CX counts super-blocks, DX = out, BX = the scale slots, R14 =
// &halfTable; Y0-Y3 the rows' float32 lanes, Y4-Y7 their int32 lanes,
// Y8 = y, Y9 = |y|, Y12 = gx4shift, Y13 = the value table in both
// halves, Y14 = 0x0f bytes.

DATA gx4shift<>+0(SB)/8, $0
DATA gx4shift<>+8(SB)/8, $0
DATA gx4shift<>+16(SB)/8, $0x0000000400000004
DATA gx4shift<>+24(SB)/8, $0x0000000400000004
GLOBL gx4shift<>(SB), RODATA|NOPTR, $32

DATA gx4nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL gx4nib<>(SB), RODATA|NOPTR, $8

// gx4shl: the dword shifts that bring nibble j of scales_l to the bottom
// of dword j; gx4shh: those that bring bits 2j..2j+1 of scales_h there;
// then the dwords 0x0f, 0x30 and 32, eight of each.
DATA gx4shl<>+0x00(SB)/8, $0x0000000400000000
DATA gx4shl<>+0x08(SB)/8, $0x0000000c00000008
DATA gx4shl<>+0x10(SB)/8, $0x0000001400000010
DATA gx4shl<>+0x18(SB)/8, $0x0000001c00000018
GLOBL gx4shl<>(SB), RODATA|NOPTR, $32

DATA gx4shh<>+0x00(SB)/8, $0x0000000200000000
DATA gx4shh<>+0x08(SB)/8, $0x0000000600000004
DATA gx4shh<>+0x10(SB)/8, $0x0000000a00000008
DATA gx4shh<>+0x18(SB)/8, $0x0000000e0000000c
GLOBL gx4shh<>(SB), RODATA|NOPTR, $32

DATA gx4c0f<>+0x00(SB)/8, $0x0000000f0000000f
DATA gx4c0f<>+0x08(SB)/8, $0x0000000f0000000f
DATA gx4c0f<>+0x10(SB)/8, $0x0000000f0000000f
DATA gx4c0f<>+0x18(SB)/8, $0x0000000f0000000f
GLOBL gx4c0f<>(SB), RODATA|NOPTR, $32

DATA gx4c30<>+0x00(SB)/8, $0x0000003000000030
DATA gx4c30<>+0x08(SB)/8, $0x0000003000000030
DATA gx4c30<>+0x10(SB)/8, $0x0000003000000030
DATA gx4c30<>+0x18(SB)/8, $0x0000003000000030
GLOBL gx4c30<>(SB), RODATA|NOPTR, $32

DATA gx4c32<>+0x00(SB)/8, $0x0000002000000020
DATA gx4c32<>+0x08(SB)/8, $0x0000002000000020
DATA gx4c32<>+0x10(SB)/8, $0x0000002000000020
DATA gx4c32<>+0x18(SB)/8, $0x0000002000000020
GLOBL gx4c32<>(SB), RODATA|NOPTR, $32

// GX4_SCALES(SH, SL, SLOT): the words ls_j-32, j = 0..7, of the
// super-block whose scales_h is at SH and scales_l at SL, into the 16
// bytes at SLOT. Clobbers Y10, Y11.
#define GX4_SCALES(SH, SL, SLOT) \
	VPBROADCASTD SL, Y10; \
	VPSRLVD      gx4shl<>(SB), Y10, Y10; \
	VPAND        gx4c0f<>(SB), Y10, Y10; \
	VPBROADCASTD SH, Y11; \
	VPSRLVD      gx4shh<>(SB), Y11, Y11; \
	VPSLLD       $4, Y11, Y11; \
	VPAND        gx4c30<>(SB), Y11, Y11; \
	VPOR         Y11, Y10, Y10; \
	VPSUBD       gx4c32<>(SB), Y10, Y10; \
	VEXTRACTI128 $1, Y10, X11; \
	VPACKSSDW    X11, X10, X10; \
	VMOVDQU      X10, SLOT

// GX4_ROW(QS, SC, ACC): ACC += the int32 lanes of the row's sub-block
// with index bytes at QS times the scale word at SC. Clobbers Y10, Y11.
#define GX4_ROW(QS, SC, ACC) \
	VBROADCASTI128 QS, Y10; \
	VPSRLVD        Y12, Y10, Y10; \
	VPAND          Y14, Y10, Y10; \
	VPSHUFB        Y10, Y13, Y10; \
	VPSIGNB        Y8, Y10, Y10; \
	VPMADDUBSW     Y10, Y9, Y10; \
	VPBROADCASTW   SC, Y11; \
	VPMADDWD       Y11, Y10, Y10; \
	VPADDD         Y10, ACC, ACC

// GX4_SUB(QO, YO, J2): sub-block j of the four rows (index bytes at
// QO, activation codes at YO(DI), scale words at J2 = 2j in each slot).
#define GX4_SUB(QO, YO, J2) \
	VMOVDQU YO(DI), Y8; \
	VPSIGNB Y8, Y8, Y9; \
	GX4_ROW(QO(SI), J2(BX), Y4); \
	GX4_ROW(QO(SI)(R8*1), J2+16(BX), Y5); \
	GX4_ROW(QO(SI)(R8*2), J2+32(BX), Y6); \
	GX4_ROW(QO(SI)(R9*1), J2+48(BX), Y7)

// GX4_FMA(XD, I, ACC): ACC += float32(I) * (f16(d_x) * d_y), d_x's bits
// in XD, d_y in Y15. Clobbers Y10.
#define GX4_FMA(XD, I, ACC) \
	VBROADCASTSS (R14)(XD*4), Y10; \
	VMULPS       Y15, Y10, Y10; \
	VCVTDQ2PS    I, I; \
	VFMADD231PS  Y10, I, ACC

// GX4_PF prefetches the three lines at the current super-block of each
// of the next four rows (R13 = SI + 4*ldx). Clobbers R13.
#define GX4_PF \
	LEAQ       (SI)(R8*4), R13; \
	PREFETCHT1 (R13); \
	PREFETCHT1 64(R13); \
	PREFETCHT1 128(R13); \
	PREFETCHT1 (R13)(R8*1); \
	PREFETCHT1 64(R13)(R8*1); \
	PREFETCHT1 128(R13)(R8*1); \
	PREFETCHT1 (R13)(R8*2); \
	PREFETCHT1 64(R13)(R8*2); \
	PREFETCHT1 128(R13)(R8*2); \
	PREFETCHT1 (R13)(R9*1); \
	PREFETCHT1 64(R13)(R9*1); \
	PREFETCHT1 128(R13)(R9*1)

// func iq4_xsx4AVX2(x *byte, ldx int, y *byte, nb int, out *[4]float32)
//
// Twin: internal/dot's IQ4_XSTwin.
TEXT ·iq4_xsx4AVX2(SB), NOSPLIT, $64-40
	MOVQ           x+0(FP), SI
	MOVQ           ldx+8(FP), R8
	MOVQ           y+16(FP), DI
	MOVQ           nb+24(FP), CX
	MOVQ           out+32(FP), DX
	LEAQ           (R8)(R8*2), R9
	LEAQ           s-64(SP), BX
	VMOVDQU        gx4shift<>(SB), Y12
	VBROADCASTI128 ·iq4nlValues(SB), Y13
	VPBROADCASTQ   gx4nib<>(SB), Y14
	VXORPS         Y0, Y0, Y0
	VXORPS         Y1, Y1, Y1
	VXORPS         Y2, Y2, Y2
	VXORPS         Y3, Y3, Y3
	TESTQ          CX, CX
	JEQ            gx4done
	MOVQ           ·halfTable(SB), R14

gx4loop:
	GX4_PF
	GX4_SCALES(2(SI), 4(SI), (BX))
	GX4_SCALES(2(SI)(R8*1), 4(SI)(R8*1), 16(BX))
	GX4_SCALES(2(SI)(R8*2), 4(SI)(R8*2), 32(BX))
	GX4_SCALES(2(SI)(R9*1), 4(SI)(R9*1), 48(BX))
	VPXOR          Y4, Y4, Y4
	VPXOR          Y5, Y5, Y5
	VPXOR          Y6, Y6, Y6
	VPXOR          Y7, Y7, Y7
	GX4_SUB(8, 4, 0)
	GX4_SUB(24, 36, 2)
	GX4_SUB(40, 68, 4)
	GX4_SUB(56, 100, 6)
	GX4_SUB(72, 132, 8)
	GX4_SUB(88, 164, 10)
	GX4_SUB(104, 196, 12)
	GX4_SUB(120, 228, 14)
	VBROADCASTSS   (DI), Y15
	MOVWLZX        (SI), AX
	MOVWLZX        (SI)(R8*1), R10
	MOVWLZX        (SI)(R8*2), R11
	MOVWLZX        (SI)(R9*1), R12
	GX4_FMA(AX, Y4, Y0)
	GX4_FMA(R10, Y5, Y1)
	GX4_FMA(R11, Y6, Y2)
	GX4_FMA(R12, Y7, Y3)
	ADDQ           $136, SI
	ADDQ           $292, DI
	DECQ           CX
	JNE            gx4loop

gx4done:
	GV2_HSUM8(Y0, X0, X10)
	GV2_HSUM8(Y1, X1, X10)
	GV2_HSUM8(Y2, X2, X10)
	GV2_HSUM8(Y3, X3, X10)
	VMOVSS         X0, (DX)
	VMOVSS         X1, 4(DX)
	VMOVSS         X2, 8(DX)
	VMOVSS         X3, 12(DX)
	VZEROUPPER
	RET
