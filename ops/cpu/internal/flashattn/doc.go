// Package flashattn holds FLASH_ATTN_EXT's block kernels on AVX2+FMA+F16C
// (flashattn_*_amd64.s): the scores of three, four or one query rows against
// a tile of f16 or q8_0 keys, the accumulation of f16 or float32 value
// rows weighted by the probabilities, the mask and logits of a tile, the
// f16 rounding of the probabilities; the small-head kernels (head sizes up
// to 16, keys in lanes: flashattn_small_amd64.s); their pure-Go twins
// (twin.go, small.go); and Logit, the logit of one key, which the
// backend's row path (package cpu, op_flash_attn_ext.go) shares with
// them. The backend's avx2 table installs the kernels.
package flashattn
