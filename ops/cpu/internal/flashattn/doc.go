// Package flashattn holds FLASH_ATTN_EXT's block kernels on AVX2+FMA+F16C
// (flashattn_*_amd64.s): the scores of three, four or one query rows against
// a tile of f16 or q8_0 keys, the accumulation of f16 or float32 value
// rows weighted by the probabilities, the mask and logits of a tile, the
// f16 rounding of the probabilities; the small-head kernels (head sizes up
// to 16, keys in lanes: flashattn_small_amd64.s); their pure-Go twins
// (twin.go, small.go); and Logit, the logit of one key, which the
// backend's row path (package cpu, op_flash_attn_ext.go) shares with
// them. The backend's avx2 table installs the kernels.
//
// The *_avx512_amd64.s files hold their AVX-512 F/BW/VL versions, bit for
// bit the AVX2 kernels (the same twins; flashattn_avx512_amd64.go): the
// value sums 16 head elements to a zmm register, the key scores two keys
// to a register (each 256-bit half one key's AVX2 8-lane chain), the
// mask, logits, rounding and q8_0 widening 16 elements to a register, the
// small-head scores 64 keys to a group and value sums 16 elements to a
// pass. The avx512 tier (and vnni after it) installs them; the one-row f16
// scores keep the AVX2 kernel (bound by widening the keys, a zmm version
// measured no faster), as do the small-head key transposition and, at
// head size 8, the small-head value sums (the AVX2 kernel's lanes).
package flashattn
