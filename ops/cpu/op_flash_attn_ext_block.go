package cpu

// The kernel table of FLASH_ATTN_EXT's block path (op_flash_attn_ext.go
// describes the path; a tier fills the table in its kernel set).

// faBlockKernels are a tier's kernels for three query rows at a time (or
// one) against f16 or q8_0 keys and values: the per-element operations
// are the same for every row (the block order for f16 keys, the q8_0 dot
// kernel's sums, axpyF16's or axpyQ8_0's FMAs), so a row's result does
// not depend on the block it is in.
type faBlockKernels struct {
	// scores sets out[r][j] to the dot product of the float32 query row
	// q[r] with the f16 key row at k[j*ks:], j < nk (a positive multiple
	// of 4), each summed in the block order (flashattn.DotF16Twin: one 8-lane
	// accumulator over the runs of 8, then hsum8), which scores1 keeps
	// too. The row length is a positive multiple of 8. With pf it also
	// prefetches the same keys of the next tile (for the first group of
	// rows to read a tile; a hint, which never changes a result).
	scores func(q [3][]float32, k []byte, ks, nk int, out [3][]float32, pf bool)
	// values adds, for each of the nk f16 value rows at v[t*vs:] in key
	// order, p[r][t] times the row to acc[r] (one FMA per element, as
	// axpyF16), for r < 3. The row length is a positive multiple of 8.
	values func(acc, p [3][]float32, v []byte, vs, nk int)
	// scores1 and values1 are scores and values for one row, with nk a
	// positive multiple of 3 for scores1.
	scores1 func(q []float32, k []byte, ks, nk int, out []float32, pf bool)
	// scores4 is scores for four rows (GQA decode: four heads sharing a
	// K/V head), nk a positive multiple of 2; nil where a tier lacks it.
	scores4 func(q [4][]float32, k []byte, ks, nk int, out [4][]float32, pf bool)
	values1 func(acc, p []float32, v []byte, vs, nk int)
	// scoresQ8 is scores for q8_0 keys against the rows' q8_0 query
	// rows q[r], whose scales dq[r] holds widened, each repeated 8 times;
	// the sums are those of the tier's q8_0 dot kernel, and nk is a
	// positive multiple of 2.
	scoresQ8 func(q [3][]byte, dq [3][]float32, k []byte, ks, nk int, out [3][]float32)
	// scores1Q8 is scoresQ8 for one row, nk a positive multiple of 4.
	scores1Q8 func(q []byte, dq []float32, k []byte, ks, nk int, out []float32)
	// dequantQ8 widens q8_0 rows as quant.DequantizeRow does (the values
	// axpyQ8_0 adds); valuesF32 and values1F32 are values and values1 for
	// float32 value rows (vs counted in floats), so that a q8_0 value
	// tile widened once adds as axpyQ8_0 adds each row.
	dequantQ8  func(dst []float32, src []byte)
	valuesF32  func(acc, p [3][]float32, v []float32, vs, nk int)
	values1F32 func(acc, p []float32, v []float32, vs, nk int)
	// maskF16 sets sc[t] to slope times the f16 mask value m[t]
	// (len(sc) <= 64) and returns the keys whose value is -Inf as bit t,
	// as maskTile's loop does.
	maskF16 func(sc []float32, m []uint16, slope float32) uint64
	// logits replaces each mask value sc[t] that is not -Inf by the
	// key's logit flashattn.Logit(dots[t], scale, 0, sc[t]) and returns the
	// logits' maximum (-Inf when every key is masked, NaN when a logit
	// is NaN), as tile's loop forms them without softcap.
	logits func(sc, dots []float32, scale float32) float32
	// roundF16 sets dst[i] to src[i] rounded to f16 (as the query row's
	// conversion to K's vec-dot type rounds it) and widened back, the
	// f16 block kernels' query row; the length is a multiple of 8.
	roundF16 func(dst, src []float32)
	// small is the small-head kernels (nil where a tier lacks them).
	small *faSmallKernels
}
