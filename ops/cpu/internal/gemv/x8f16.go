package gemv

// The f16 x8 layout (bf16 weights take it too: any 2-byte elements): a
// group of eight binary16 weight rows (nb runs of F16Run = 16 elements
// each: any row whose length is a multiple of 16) is stored as two
// halves of four rows, rows 0-3 then 4-7, each half run by run: run j
// (elements 16j..16j+15, 32 bytes) of its four rows together, row r at
// byte 32r of the 128 bytes of run j. A group so takes the bytes of its
// eight plain rows, and a half is one contiguous stream where the plain
// layout's four-row kernel reads four streams a row apart; the
// activations stay a plain binary16 row, with no side data. Each row
// keeps the plain four-row kernel's loads, FMAs and final sum (F16Twin),
// so a product gives the same bits in either layout.

// X8BytesF16 is the bytes of one f16 x8 run: eight rows by F16Run
// elements.
const X8BytesF16 = 8 * 2 * F16Run

// X8SlotsF16 is the f16 x8 kernel's side data per run: none.
const X8SlotsF16 = 0

// RepackX8F16 writes the x8 form of the eight binary16 rows in src (nb
// runs of 16 elements each, rows contiguous) into dst.
func RepackX8F16(dst, src []byte, nb int) {
	x8F16Move(dst, src, nb, true)
}

// UnpackX8F16 undoes RepackX8F16: it writes the eight plain rows of the
// x8 group src into dst.
func UnpackX8F16(dst, src []byte, nb int) {
	x8F16Move(dst, src, nb, false)
}

// x8F16Move copies the 32-byte runs of eight rows of nb runs between
// the plain layout and the x8 layout (pack: plain src to x8 dst).
func x8F16Move(dst, src []byte, nb int, pack bool) {
	if nb <= 0 {
		return
	}
	row := 32 * nb
	_, _ = dst[8*row-1], src[8*row-1]
	for h := range 2 {
		half := 4 * row * h
		for j := range nb {
			for r := range 4 {
				x8 := half + 128*j + 32*r
				plain := (4*h+r)*row + 32*j
				// Array copies: no memmove call per 32 bytes.
				if pack {
					*(*[32]byte)(dst[x8:]) = *(*[32]byte)(src[plain:])
				} else {
					*(*[32]byte)(dst[plain:]) = *(*[32]byte)(src[x8:])
				}
			}
		}
	}
}

// GatherX8F16Row writes runs j0 .. j0+nj-1 (16 elements, 32 bytes
// each) of row r (0-7) of the f16 x8 group x (nb runs a row) into dst,
// as they are in the plain row: the readers of a plain row (the float
// gemm's widening) take rows from the copy through it.
func GatherX8F16Row(dst, x []byte, nb, r, j0, nj int) {
	base := (r/4)*4*32*nb + 32*(r%4) + 128*j0
	_, _ = dst[32*nj-1], x[base+128*(nj-1)+31]
	for j := range nj {
		*(*[32]byte)(dst[32*j:]) = *(*[32]byte)(x[base+128*j:])
	}
}

// X8F16Prep is the f16 x8 kernel's side data preparation: there is
// none.
func X8F16Prep([]byte, int, []float32) {}

// X8F16Twin is the f16 x8 kernel in Go, the AVX2 kernel's twin bit for
// bit: each row as F16Twin computes it, y a binary16 row of nb runs of
// 16. It takes no side data.
func X8F16Twin(nb, ng int, x, y []byte, _ []float32, out []float32, _ int) {
	x8HalfTwin(nb, ng, x, y, out, F16Twin)
}

// X8BF16Twin is X8F16Twin for bfloat16 weights and activations (each row
// as BF16Twin computes it).
func X8BF16Twin(nb, ng int, x, y []byte, _ []float32, out []float32, _ int) {
	x8HalfTwin(nb, ng, x, y, out, BF16Twin)
}

// X8BF16PairTwin is X8BF16Twin with each row as BF16PairTwin computes
// it (the VDPBF16PS kernels').
func X8BF16PairTwin(nb, ng int, x, y []byte, _ []float32, out []float32, _ int) {
	x8HalfTwin(nb, ng, x, y, out, BF16PairTwin)
}

// x8HalfTwin computes every row of ng groups of the 2-byte x8 layout with
// the plain row's twin.
func x8HalfTwin(nb, ng int, x, y []byte, out []float32, twin func(n int, x, y []byte) float32) {
	rows := make([]byte, X8BytesF16*nb)
	for g := range ng {
		UnpackX8F16(rows, x[g*nb*X8BytesF16:(g+1)*nb*X8BytesF16], nb)
		for r := range 8 {
			out[8*g+r] = twin(16*nb, rows[r*32*nb:(r+1)*32*nb], y)
		}
	}
}

// x8F16Check panics unless the slices hold what the f16 x8 kernel reads:
// ng groups of nb runs, a binary16 row of nb runs and 8*ng outputs.
func x8F16Check(nb, ng int, x, y []byte, out []float32) {
	_, _, _ = x[ng*nb*X8BytesF16-1], y[nb*32-1], out[8*ng-1]
}
