// The table shared by the AVX-512 score kernels (flashattn_qk*_avx512 and
// flashattn_q8*_avx512): each file that includes this header gets its own
// file-local copy (Go assembly symbols named <> are per file).

// faLaneIdx: VPERMPS's index that gathers element 0 of each of the four
// 128-bit lanes, then element 1, 2 and 3 (the reduction's sums of four
// key pairs, s0..s3 then s4..s7).
DATA faLaneIdx<>+0(SB)/4, $0
DATA faLaneIdx<>+4(SB)/4, $4
DATA faLaneIdx<>+8(SB)/4, $8
DATA faLaneIdx<>+12(SB)/4, $12
DATA faLaneIdx<>+16(SB)/4, $1
DATA faLaneIdx<>+20(SB)/4, $5
DATA faLaneIdx<>+24(SB)/4, $9
DATA faLaneIdx<>+28(SB)/4, $13
DATA faLaneIdx<>+32(SB)/4, $2
DATA faLaneIdx<>+36(SB)/4, $6
DATA faLaneIdx<>+40(SB)/4, $10
DATA faLaneIdx<>+44(SB)/4, $14
DATA faLaneIdx<>+48(SB)/4, $3
DATA faLaneIdx<>+52(SB)/4, $7
DATA faLaneIdx<>+56(SB)/4, $11
DATA faLaneIdx<>+60(SB)/4, $15
GLOBL faLaneIdx<>(SB), RODATA|NOPTR, $64
