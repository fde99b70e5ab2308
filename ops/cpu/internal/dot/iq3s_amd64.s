//go:build amd64 && !purego

#include "textflag.h"
#include "iqgrid_amd64.h"

// AVX2 sums of IQ3_S against q8_K (iqgrid.go's IQ3_S, block by block):
// per super-block the integer sum over its eight sub-blocks of
// (2*ls+1) * sum(g*s*y). A sub-block's eight 9-bit grid indices are its
// eight qs bytes with bit k of its qh byte as bit 8, built in scalar
// registers; their 4-byte entries are loaded one by one and inserted
// (VPINSRD; VPGATHERDD is microcoded and slower on AMD Zen 2 and 3); its
// four sign bytes are used as they are (SIGNMASK). Grid magnitudes are
// at most 15, so nothing saturates. The integer sum is stored and scaled
// into a float32 sum as the generic kernel does (FSCALE), so the kernel
// equals it bit for bit.

// IQ3SIDX sets AX to the 9-bit index of element group k: qs byte k
// (at k(R12)) with bit k of the qh byte in R15 as bit 8. Clobbers BX.
#define IQ3SIDX(k) \
	MOVBLZX k(R12), AX; \
	MOVL R15, BX; \
	SHLL $(8-(k)), BX; \
	ANDL $256, BX; \
	ORL BX, AX

// IQ3SHALF sets x to the grid entries of groups k .. k+3. Clobbers AX,
// BX.
#define IQ3SHALF(k, x) \
	IQ3SIDX(k); \
	VMOVD (R8)(AX*4), x; \
	IQ3SIDX(k+1); \
	VPINSRD $1, (R8)(AX*4), x, x; \
	IQ3SIDX(k+2); \
	VPINSRD $2, (R8)(AX*4), x, x; \
	IQ3SIDX(k+3); \
	VPINSRD $3, (R8)(AX*4), x, x

// func iq3sSumsAVX2(grid *[512]uint32, x, y *byte, nb int, out *int32, acc float32) float32
//
// For b < nb: out[b] = the integer sum of the iq3_s block at x + 110b
// with the q8_K block at y + 292b.
// It returns acc plus the blocks' float32 scaling, in the generic
// kernel's order.
TEXT ·iq3sSumsAVX2(SB), NOSPLIT, $0-52
	MOVQ grid+0(FP), R8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DX
	VMOVSS acc+40(FP), X11
	GSETUP

iq3sblock:
	TESTQ CX, CX
	JZ    iq3sdone
	VPXOR Y0, Y0, Y0
	LEAQ  2(SI), R12
	LEAQ  66(SI), R9
	LEAQ  74(SI), R14
	LEAQ  4(DI), R13
	MOVL  106(SI), R11
	MOVQ  $8, R10

iq3ssub:
	// Y2: the eight grid entries' 32 magnitudes.
	MOVBLZX (R9), R15
	IQ3SHALF(0, X2)
	IQ3SHALF(4, X3)
	VINSERTI128 $1, X3, Y2, Y2
	VMOVD (R14), X4
	SIGNMASK
	NEGATE(Y2)
	LOADY((R13))
	// The scale: the next nibble of the scales dword.
	MOVL R11, BX
	ANDL $15, BX
	SHRL $4, R11
	SCALE1(BX)
	GDOT(Y2, Y0)
	ADDQ $8, R12
	INCQ R9
	ADDQ $4, R14
	ADDQ $32, R13
	DECQ R10
	JNZ  iq3ssub

	HSUM(Y0, X0, (DX))
	FSCALE(X0, (SI), X11)
	ADDQ $110, SI
	ADDQ $292, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq3sblock

iq3sdone:
	VMOVSS X11, ret+48(FP)
	VZEROUPPER
	RET
