package simt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// The known-answer tests of the emulator's implementations of ldmatrix,
// cp.async and the m16n8k32 s8 and m16n8k8 tf32 tensor-core products
// (kbsimt_cuda.h), against the PTX ISA's fragment layouts written out
// here (g = lane/4, t = lane%4).

func i32Buf(t *testing.T, v []int32) *Buffer {
	b := alloc(t, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b.Bytes()[4*i:], uint32(x))
	}
	return b
}

func u32Buf(t *testing.T, v []uint32) *Buffer {
	b := alloc(t, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b.Bytes()[4*i:], x)
	}
	return b
}

func TestCUDALdmatrix(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "ldmatrix_all")
		in := alloc(t, 2*256)
		tile := func(i, r, c int) uint32 { return uint32(0x1000*i + 0x10*r + c + 1) }
		for i := 0; i < 4; i++ {
			for r := 0; r < 8; r++ {
				for c := 0; c < 8; c++ {
					binary.LittleEndian.PutUint16(in.Bytes()[2*(64*i+8*r+c):], uint16(tile(i, r, c)))
				}
			}
		}
		out := alloc(t, 4*6*32*4)
		st := launch(t, k, Launch{Grid: d1(1), Block: d1(32), Args: []any{in, out}})
		got := u32s(out)
		// Lane (i, j) gave row 7-j of matrix i: matrix i as read.
		mat := func(i, r, c int) uint32 { return tile(i, 7-r, c) }
		for v, n := range []int{1, 2, 4} {
			for trans := 0; trans < 2; trans++ {
				for l := 0; l < 32; l++ {
					for i := 0; i < 4; i++ {
						var want uint32
						if i < n {
							r, c := l/4, 2*(l%4)
							if trans == 0 {
								want = mat(i, r, c) | mat(i, r, c+1)<<16
							} else {
								want = mat(i, c, r) | mat(i, c+1, r)<<16
							}
						}
						if g := got[((2*v+trans)*32+l)*4+i]; g != want {
							t.Errorf("ldmatrix x%d trans=%d lane %d register %d: %#08x, want %#08x", n, trans, l, i, g, want)
						}
					}
				}
			}
		}
		if st.Races != 0 {
			t.Errorf("%d races reported", st.Races)
		}
	})
}

func TestCUDACpAsyncGroups(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "cp_async_groups")
		src := make([]int32, 448)
		for i := range src {
			src[i] = int32(0x01020304 * (i + 1))
		}
		out := alloc(t, 4*448)
		st := launch(t, k, Launch{Grid: d1(1), Block: d1(64), Args: []any{i32Buf(t, src), out}})
		got := i32s(out)
		for i := 0; i < 256; i++ {
			if want := src[255-i]; got[i] != want {
				t.Errorf("16-byte copies: out[%d] = %#x, want %#x", i, got[i], want)
			}
		}
		for i := 0; i < 128; i++ {
			if want := src[256+127-i]; got[256+i] != want {
				t.Errorf("8-byte copies: out[%d] = %#x, want %#x", 256+i, got[256+i], want)
			}
		}
		for th := 0; th < 64; th++ {
			// Thread 63-th's copy read (63-th)%5 bytes of its word.
			c := 63 - th
			want := uint32(src[384+c])
			if nb := c % 5; nb < 4 {
				want &= 1<<(8*nb) - 1
			}
			if got[384+th] != int32(want) {
				t.Errorf("4-byte copy of thread %d (zero-filled past %d bytes): %#x, want %#x", c, c%5, uint32(got[384+th]), want)
			}
		}
		if st.Races != 0 {
			t.Errorf("waited-for copies read after a barrier: %d races reported", st.Races)
		}
	})
}

// s8Frags packs A (16x32), B (32x8) and C (16x8) into each lane's
// m16n8k32 fragments.
func s8Frags(a [16][32]int8, b [32][8]int8, c [16][8]int32) (fa, fb, fc []int32) {
	pack := func(x [4]int8) int32 {
		return int32(uint32(uint8(x[0])) | uint32(uint8(x[1]))<<8 | uint32(uint8(x[2]))<<16 | uint32(uint8(x[3]))<<24)
	}
	for l := 0; l < 32; l++ {
		g, t := l/4, l%4
		var q [6][4]int8
		for i := 0; i < 4; i++ {
			q[0][i], q[1][i] = a[g][4*t+i], a[g+8][4*t+i]
			q[2][i], q[3][i] = a[g][16+4*t+i], a[g+8][16+4*t+i]
			q[4][i], q[5][i] = b[4*t+i][g], b[16+4*t+i][g]
		}
		fa = append(fa, pack(q[0]), pack(q[1]), pack(q[2]), pack(q[3]))
		fb = append(fb, pack(q[4]), pack(q[5]))
		for e := 0; e < 4; e++ {
			fc = append(fc, c[g+8*(e>>1)][2*t+e&1])
		}
	}
	return fa, fb, fc
}

func TestCUDAMmaM16N8K32S8(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "mma_k32_s8")
		r := rand.New(rand.NewPCG(5, 6))
		var a [16][32]int8
		var b [32][8]int8
		var c [16][8]int32
		for i := range a {
			for j := range a[i] {
				a[i][j] = int8(r.IntN(256) - 128)
			}
		}
		for i := range b {
			for j := range b[i] {
				b[i][j] = int8(r.IntN(256) - 128)
			}
		}
		// Extremes: a row and a column of -128 give 32*16384.
		for j := 0; j < 32; j++ {
			a[3][j], b[j][5] = -128, -128
		}
		for i := range c {
			for j := range c[i] {
				c[i][j] = int32(r.IntN(2000) - 1000)
			}
		}
		c[0][0] = math.MaxInt32 // wraps: the product adds to it in int32
		fa, fb, fc := s8Frags(a, b, c)
		fd := alloc(t, 4*128)
		launch(t, k, Launch{Grid: d1(1), Block: d1(32), Args: []any{i32Buf(t, fa), i32Buf(t, fb), i32Buf(t, fc), fd}})
		got := i32s(fd)
		for l := 0; l < 32; l++ {
			g, tt := l/4, l%4
			for e := 0; e < 4; e++ {
				row, col := g+8*(e>>1), 2*tt+e&1
				want := c[row][col]
				for kk := 0; kk < 32; kk++ {
					want += int32(a[row][kk]) * int32(b[kk][col])
				}
				if got[4*l+e] != want {
					t.Errorf("D[%d][%d] (lane %d register %d) = %d, want %d", row, col, l, e, got[4*l+e], want)
				}
			}
		}
	})
}

func TestCUDAMmaM16N8K8TF32(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "mma_k8_tf32")
		r := rand.New(rand.NewPCG(7, 8))
		// Multiples of 1/4 up to 8 in A and B, of 1/16 in C: every product
		// and sum is exact in float32, so the order does not matter.
		var a [16][8]float32
		var b [8][8]float32
		var c [16][8]float32
		for i := range a {
			for j := range a[i] {
				a[i][j] = float32(r.IntN(65)-32) / 4
			}
		}
		for i := range b {
			for j := range b[i] {
				b[i][j] = float32(r.IntN(65)-32) / 4
			}
		}
		for i := range c {
			for j := range c[i] {
				c[i][j] = float32(r.IntN(1025)-512) / 16
			}
		}
		var fa, fb []uint32
		var fc []float32
		bits := math.Float32bits
		for l := 0; l < 32; l++ {
			g, tt := l/4, l%4
			fa = append(fa, bits(a[g][tt]), bits(a[g+8][tt]), bits(a[g][tt+4]), bits(a[g+8][tt+4]))
			fb = append(fb, bits(b[tt][g]), bits(b[tt+4][g]))
			for e := 0; e < 4; e++ {
				fc = append(fc, c[g+8*(e>>1)][2*tt+e&1])
			}
		}
		fd := alloc(t, 4*128)
		launch(t, k, Launch{Grid: d1(1), Block: d1(32), Args: []any{u32Buf(t, fa), u32Buf(t, fb), f32Buf(t, fc), fd}})
		got := f32s(fd)
		for l := 0; l < 32; l++ {
			g, tt := l/4, l%4
			for e := 0; e < 4; e++ {
				row, col := g+8*(e>>1), 2*tt+e&1
				want := float64(c[row][col])
				for kk := 0; kk < 8; kk++ {
					want += float64(a[row][kk]) * float64(b[kk][col])
				}
				if float64(got[4*l+e]) != want {
					t.Errorf("D[%d][%d] (lane %d register %d) = %v, want %v", row, col, l, e, got[4*l+e], want)
				}
			}
		}
	})
}

func TestCUDACvtTF32(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		k := kernel(t, load(t, "conformance.cu", m), "cvt_tf32")
		for _, tc := range []struct{ in, want uint32 }{
			{0x3f800000, 0x3f800000}, // 1
			{0x3f800fff, 0x3f800000}, // below the half-way point
			{0x3f801000, 0x3f802000}, // a tie rounds away from zero
			{0xbf801000, 0xbf802000},
			{0x3f803000, 0x3f804000},
			{0x3f802fff, 0x3f802000},
			{0x7f800000, 0x7f800000}, // Inf stays
			{0xff800000, 0xff800000},
			{0x00000001, 0x00000000}, // a tiny subnormal rounds to zero
		} {
			out := alloc(t, 4)
			launch(t, k, Launch{Grid: d1(1), Block: d1(1), Args: []any{u32Buf(t, []uint32{tc.in}), out, int32(1)}})
			if g := u32s(out)[0]; g != tc.want {
				t.Errorf("cvt.rna.tf32(%#08x) = %#08x, want %#08x", tc.in, g, tc.want)
			}
		}
		out := alloc(t, 4)
		launch(t, k, Launch{Grid: d1(1), Block: d1(1), Args: []any{u32Buf(t, []uint32{0x7fc00123}), out, int32(1)}})
		if g := u32s(out)[0]; g&0x7f800000 != 0x7f800000 || g&0x7fffff == 0 || g&0x1fff != 0 {
			t.Errorf("cvt.rna.tf32(NaN) = %#08x, want a NaN with the low 13 bits clear", g)
		}
	})
}
