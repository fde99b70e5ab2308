package ops

// The parameters of each op that has any, as the Params field of its node.
// A node's Params holds the value type (not a pointer) named here.

// SoftMaxParams parameterize SOFT_MAX:
//
//	y[i] = exp(z[i] - M) / (sum_j exp(z[j] - M) + exp(sink - M))
//	z[i] = Scale*x[i] + slope(h)*mask[i]
//
// where M is the maximum over the row's z and the sink, the sink term is
// present only when a sinks tensor is given, and slope(h) is the ALiBi slope
// of head h (dimension 2 of x) for MaxBias > 0, else 1. A row whose logits
// are all -Inf (fully masked) and that has no sink yields zeros: we define
// it so, where ggml's CPU kernel would produce NaN.
type SoftMaxParams struct {
	Scale   float32
	MaxBias float32
}

// FlashAttnParams parameterize FLASH_ATTN_EXT. For each query row q and key
// row k the logit is
//
//	s = Softcap * tanh(Scale * q·k / Softcap) + slope(h)*mask   (Softcap > 0)
//	s = Scale * q·k + slope(h)*mask                              (Softcap == 0)
//
// followed by a softmax over the keys (with an optional per-head sink
// logit in the denominator, as SOFT_MAX) and a weighted sum of value rows.
// A query whose keys are all masked yields zeros (with no sink, or a -Inf
// one). Keys whose mask term is -Inf never contribute, even with NaN in
// their K or V rows; any other NaN (in q, an unmasked K or V row, the
// mask, the sink) or a +Inf sink makes the rows it reaches NaN, as the
// formula gives them (exp(Inf - Inf) for the sink), on every backend.
type FlashAttnParams struct {
	Scale   float32
	MaxBias float32
	Softcap float32
}

// Rope modes, as ggml numbers them.
const (
	RopeNormal = 0 // rotate adjacent pairs (x[2i], x[2i+1])
	RopeNeoX   = 2 // rotate halves (x[i], x[i+NDims/2])
)

// RopeParams parameterize ROPE, with YaRN as ggml implements it. For pair
// index i (0 <= i < NDims/2) at position p:
//
//	theta_extrap = p * FreqBase^(-2i/NDims) / freq_factor[i]
//	theta_interp = FreqScale * theta_extrap
//	theta = theta_interp*(1-r) + theta_extrap*r, r = ramp(i)*ExtFactor
//
// and the pair is rotated by theta with magnitude AttnFactor (times
// 1+0.1*ln(1/FreqScale) when ExtFactor != 0). The ramp is 1 below the low
// correction dimension and 0 above the high one, which come from BetaFast,
// BetaSlow and NCtxOrig. Dimensions NDims and above are copied unchanged.
type RopeParams struct {
	NDims      int
	Mode       int
	NCtxOrig   int
	FreqBase   float32
	FreqScale  float32
	ExtFactor  float32
	AttnFactor float32
	BetaFast   float32
	BetaSlow   float32
}

// DefaultRopeParams returns the parameters of plain RoPE over nDims
// dimensions with base 10000 and no scaling.
func DefaultRopeParams(nDims, mode int) RopeParams {
	return RopeParams{
		NDims: nDims, Mode: mode, NCtxOrig: 0,
		FreqBase: 10000, FreqScale: 1, ExtFactor: 0, AttnFactor: 1,
		BetaFast: 32, BetaSlow: 1,
	}
}

// NormParams parameterize RMS_NORM: y = x / sqrt(mean(x^2) + Eps) per row.
type NormParams struct {
	Eps float32
}

// ScaleParams parameterize SCALE: y = Scale*x + Bias.
type ScaleParams struct {
	Scale float32
	Bias  float32
}

// SortOrder is the order of ARGSORT.
type SortOrder int

// Sort orders.
const (
	SortAsc SortOrder = iota
	SortDesc
)

// String returns "asc" or "desc".
func (o SortOrder) String() string {
	if o == SortDesc {
		return "desc"
	}
	return "asc"
}

// ArgsortParams parameterize ARGSORT. Ties keep their original order
// (the sort is stable), so the result is fully defined.
type ArgsortParams struct {
	Order SortOrder
}

// GLUParams parameterize SWIGLU: y = silu(g) * u. With one source the row is
// split in halves, g the first and u the second (swapped when Swapped is
// set); with two sources g is the first and u the second, and Swapped has
// no effect (as in ggml).
type GLUParams struct {
	Swapped bool
}

// GLUOAIParams parameterize SWIGLU_OAI, gpt-oss's clamped SwiGLU (ggml's
// GGML_GLU_OP_SWIGLU_OAI):
//
//	x = min(g, Limit)
//	y = clamp(u, -Limit, Limit)
//	out = x * sigmoid(Alpha*x) * (y + 1)
//
// gpt-oss uses Alpha = 1.702 and Limit = 7.
type GLUOAIParams struct {
	Alpha float32
	Limit float32
}

// PermuteParams record the axes of a PERMUTE node: source dimension i
// becomes dimension Axes[i] of the result.
type PermuteParams struct {
	Axes [4]int
}
