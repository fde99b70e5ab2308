package cuda

import (
	"slices"

	"github.com/kernbench/kernbench/quant"
)

// The formats of issue 26 (MXFP4, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 and the
// IQ1/IQ2/IQ3 codebook formats): kernels/mul_mat_iq.cu, with GET_ROWS
// decoding eight elements at a time (quants_iq.cuh's kb_iq8; the grids
// in iq_grids.cuh, generated from package quant's tables). GET_ROWS
// takes them in launchGetRows, MUL_MAT and MUL_MAT_ID in their launch
// functions, on the integer paths of the legacy and K formats
// (q8Acts): the activations quantized once per node to q8a blocks
// (kb_quantize_q8a), every 32-element chunk of weights decoded to int8
// codes with a scale (and offset) per 16 or 32 elements by quants_iq.cuh's
// kb_decode<T> (the 4-bit tables' int8 values, the ternary codes less
// one, the codebooks' signed grid entries; IQ1_S's delta as an offset
// per 32, IQ1_M's, which changes every 8, folded into 8*value +- 1), and
// dotted in int32:
//
//   - up to mmvMaxCols columns (pairs): kb_mmvq_* (kb_mmvq1_* for one),
//     mmv.cuh's matrix-vector kernel, through kernelFor and mmvGeometry
//     like the legacy and K formats;
//   - more: kb_mmq_* (kb_mmq128_*, kb_mmq_dp4a_*), the tiled kernels:
//     mmq32.cuh's 64x32 warp tiles (mmq.cuh's 32x32 for IQ2_XS, IQ2_S
//     and IQ1_M in the 64-row kb_mmq_*), one m16n8k32 s8
//     product per chunk and 16x8 tile, but two m16n8k16 for IQ2_XS, IQ2_S
//     and IQ1_M (a scale per 16); tileFor picks the tile and the k splits
//     as for the K formats.
//
// The emulated counters of one node, before (f32 mat-vec kb_mmvi_*, and
// above 8 columns the whole matrix decoded to f16 in scratch memory on
// every call for the f16 tiles) and after, are in docs/architecture.md.
// Like the legacy and K formats' kernels, these read 2-byte fields with
// 16-bit loads: checkAligned refuses rows that are not 2-byte aligned,
// but for MXFP4 (17-byte blocks, read a byte at a time).

// iqTypes are the types of kernels/mul_mat_iq.cu (quants_iq.cuh's KB_FOR_IQ_TYPES).
var iqTypes = []quant.Type{quant.MXFP4, quant.IQ4_NL, quant.IQ4_XS, quant.TQ1_0, quant.TQ2_0,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M}

func isIQType(t quant.Type) bool { return slices.Contains(iqTypes, t) }
