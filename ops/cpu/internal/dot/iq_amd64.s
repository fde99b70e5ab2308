//go:build amd64 && !purego

#include "textflag.h"

// AVX2 integer sums of the table-coded formats (iq.go's tableDot, block
// by block). The float32 scaling stays in Go (iq_amd64.go), so the
// kernels built on these equal the generic ones bit for bit.

DATA tnib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL tnib<>(SB), RODATA|NOPTR, $8

// func tableSumsAVX2(table *[16]int8, x *byte, xstride int, y *byte, ystride int, nb int, out *int32)
//
// For b < nb: out[b] = sum over j < 16 of table[x_b[j]&15]*y_b[j] +
// table[x_b[j]>>4]*y_b[j+16], x_b = x + b*xstride (16 bytes of codes),
// y_b = y + b*ystride (32 int8 codes). |table| <= 127, so every pair of
// products VPMADDUBSW adds fits in int16 (2*128*127).
TEXT ·tableSumsAVX2(SB), NOSPLIT, $0-56
	MOVQ table+0(FP), AX
	MOVQ x+8(FP), SI
	MOVQ xstride+16(FP), R8
	MOVQ y+24(FP), DI
	MOVQ ystride+32(FP), R9
	MOVQ nb+40(FP), CX
	MOVQ out+48(FP), DX
	VBROADCASTI128 (AX), Y10
	VPBROADCASTQ tnib<>(SB), Y14
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15

loop:
	TESTQ CX, CX
	JZ    done
	// Y2: the 32 codes, elements 0..15 from the low nibbles, 16..31 from
	// the high ones, then their table values.
	VMOVDQU (SI), X2
	VPSRLW $4, X2, X3
	VINSERTI128 $1, X3, Y2, Y2
	VPAND Y14, Y2, Y2
	VPSHUFB Y2, Y10, Y2
	// |y| (unsigned) times x*sign(y): y = -128 reads as 128.
	VMOVDQU (DI), Y4
	VPSIGNB Y4, Y4, Y3
	VPSIGNB Y4, Y2, Y2
	VPMADDUBSW Y2, Y3, Y2
	VPMADDWD Y15, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPADDD X3, X2, X2
	VPSHUFD $0x4e, X2, X3
	VPADDD X3, X2, X2
	VPSHUFD $0xb1, X2, X3
	VPADDD X3, X2, X2
	VMOVD X2, (DX)
	ADDQ R8, SI
	ADDQ R9, DI
	ADDQ $4, DX
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET
