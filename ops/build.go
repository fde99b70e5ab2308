package ops

import (
	"fmt"

	"math"

	"github.com/kernbench/kernbench/quant"
)

// Source positions of the ops with more than two operands.
const (
	// FLASH_ATTN_EXT: Src = {q, k, v, mask, sinks}.
	FAQ, FAK, FAV, FAMask, FASinks = 0, 1, 2, 3, 4
	// SOFT_MAX: Src = {a, mask, sinks}.
	SMInput, SMMask, SMSinks = 0, 1, 2
	// SSM_SCAN: Src = {s, x, dt, A, B, C, ids}.
	ScanState, ScanX, ScanDt, ScanA, ScanB, ScanC, ScanIDs = 0, 1, 2, 3, 4, 5, 6
	// ROPE: Src = {a, positions, freq_factors}.
	RopeInput, RopePos, RopeFreqFactors = 0, 1, 2
	// MUL_MAT_ID: Src = {experts, b, ids}.
	MMIDExperts, MMIDInput, MMIDIDs = 0, 1, 2
)

func need(op Op, t *Tensor, what string) error {
	if t == nil {
		return shapeErr(op, "%s is nil", what)
	}
	return nil
}

func wantType(op Op, t *Tensor, what string, ok ...quant.Type) error {
	for _, k := range ok {
		if t.Type == k {
			return nil
		}
	}
	return shapeErr(op, "%s %s has type %v, want one of %v", what, t.Label(), t.Type, ok)
}

// matmulWeightTypes are the element types MUL_MAT and MUL_MAT_ID accept
// for their weights: every float and block-quantized type.
func matmulWeightType(t quant.Type) bool {
	return t.IsFloat() || t.IsQuantized()
}

// MulMat returns a·bᵀ as ggml_mul_mat does: a is [k, m, a2, a3] (weights, any
// float or quantized type, rows packed), b is [k, n, b2, b3] (f32, f16 or
// bf16, any strides), the result is f32 [m, n, b2, b3], and a broadcasts
// over dimensions 2 and 3 (b2 % a2 == 0, b3 % a3 == 0):
//
//	dst[i, j, i2, i3] = sum_l a[l, i, i2/(b2/a2), i3/(b3/a3)] * b[l, j, i2, i3]
func MulMat(a, b *Tensor) (*Tensor, error) {
	const op = OpMulMat
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := need(op, b, "b"); err != nil {
		return nil, err
	}
	if !matmulWeightType(a.Type) {
		return nil, shapeErr(op, "a %s has type %v, want a float or quantized type", a.Label(), a.Type)
	}
	if err := wantType(op, b, "b", quant.F32, quant.F16, quant.BF16); err != nil {
		return nil, err
	}
	if !a.HasContiguousRows() {
		return nil, shapeErr(op, "a %s rows are not packed (nb[0]=%d); make it contiguous first", a.Label(), a.Nb[0])
	}
	if a.Ne[0] != b.Ne[0] {
		return nil, shapeErr(op, "inner dimensions differ: a %v, b %v", a.Ne, b.Ne)
	}
	if a.Ne[2] == 0 || a.Ne[3] == 0 || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 {
		return nil, shapeErr(op, "b %v cannot broadcast a %v in dims 2-3", b.Ne, a.Ne)
	}
	return newNode(op, quant.F32, [MaxDims]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}, nil, a, b), nil
}

// MulMatID is the MoE indirect matmul (ggml_mul_mat_id). experts is
// [k, m, n_expert] (any MUL_MAT weight type), ids is i32 [n_used, n_tokens],
// b is [k, b1, n_tokens] with b1 == 1 or b1 == n_used, and the result is f32
// [m, n_used, n_tokens]:
//
//	dst[:, e, t] = experts[:, :, ids[e, t]] · b[:, e % b1, t]
//
// An id outside [0, n_expert) is an error at compute time.
func MulMatID(experts, b, ids *Tensor) (*Tensor, error) {
	const op = OpMulMatID
	for _, x := range []struct {
		t    *Tensor
		name string
	}{{experts, "experts"}, {b, "b"}, {ids, "ids"}} {
		if err := need(op, x.t, x.name); err != nil {
			return nil, err
		}
	}
	if !matmulWeightType(experts.Type) {
		return nil, shapeErr(op, "experts %s have type %v, want a float or quantized type", experts.Label(), experts.Type)
	}
	if err := wantType(op, b, "b", quant.F32, quant.F16, quant.BF16); err != nil {
		return nil, err
	}
	if err := wantType(op, ids, "ids", quant.I32); err != nil {
		return nil, err
	}
	if !experts.HasContiguousRows() {
		return nil, shapeErr(op, "expert rows are not packed")
	}
	if experts.Ne[3] != 1 || b.Ne[3] != 1 || ids.Ne[2] != 1 || ids.Ne[3] != 1 {
		return nil, shapeErr(op, "experts must be 3-D, b 3-D and ids 2-D: experts %v, b %v, ids %v", experts.Ne, b.Ne, ids.Ne)
	}
	if experts.Ne[0] != b.Ne[0] {
		return nil, shapeErr(op, "inner dimensions differ: experts %v, b %v", experts.Ne, b.Ne)
	}
	if ids.Ne[1] != b.Ne[2] {
		return nil, shapeErr(op, "ids has %d tokens, b has %d", ids.Ne[1], b.Ne[2])
	}
	if b.Ne[1] != 1 && b.Ne[1] != ids.Ne[0] {
		return nil, shapeErr(op, "b dimension 1 is %d, want 1 or n_used=%d", b.Ne[1], ids.Ne[0])
	}
	return newNode(op, quant.F32, [MaxDims]int64{experts.Ne[1], ids.Ne[0], b.Ne[2], 1}, nil, experts, b, ids), nil
}

// SoftMax returns the softmax of each row of a (f32) with scale, an
// optional mask (f32 or f16, [ne0, >=ne1, m2, m3] broadcast over dims 2-3),
// ALiBi max_bias and optional per-head sink logits (f32, [a.Ne[2]]). See
// SoftMaxParams for the formula. mask and sinks may be nil.
func SoftMax(a, mask, sinks *Tensor, p SoftMaxParams) (*Tensor, error) {
	const op = OpSoftMax
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32); err != nil {
		return nil, err
	}
	if mask != nil {
		if err := wantType(op, mask, "mask", quant.F32, quant.F16); err != nil {
			return nil, err
		}
		if mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1] {
			return nil, shapeErr(op, "mask %v must cover a %v in dims 0-1", mask.Ne, a.Ne)
		}
		if mask.Ne[2] == 0 || mask.Ne[3] == 0 || a.Ne[2]%mask.Ne[2] != 0 || a.Ne[3]%mask.Ne[3] != 0 {
			return nil, shapeErr(op, "mask %v cannot broadcast to a %v in dims 2-3", mask.Ne, a.Ne)
		}
		if !mask.HasContiguousRows() {
			return nil, shapeErr(op, "mask rows are not packed")
		}
	}
	if sinks != nil {
		if err := wantType(op, sinks, "sinks", quant.F32); err != nil {
			return nil, err
		}
		if sinks.Ne[0] != a.Ne[2] || sinks.NumElements() != a.Ne[2] {
			return nil, shapeErr(op, "sinks %v must hold one logit per head (a.Ne[2]=%d)", sinks.Ne, a.Ne[2])
		}
	}
	if p.MaxBias < 0 || isBad(p.Scale) || isBad(p.MaxBias) {
		return nil, shapeErr(op, "bad parameters %+v", p)
	}
	return newNode(op, quant.F32, a.Ne, p, a, mask, sinks), nil
}

func isBad(f float32) bool {
	return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0)
}

// FlashAttnKVTypes are the K/V element types FLASH_ATTN_EXT accepts.
var FlashAttnKVTypes = []quant.Type{quant.F32, quant.F16, quant.Q8_0, quant.Q4_0}

// FlashAttnExt is fused attention (ggml_flash_attn_ext). q is f32
// [d, n_q, n_head, q3], k is [d, n_kv, n_head_kv, k3] and v is
// [dv, n_kv, n_head_kv, k3] in one of FlashAttnKVTypes, with n_head a
// multiple of n_head_kv (GQA: head h reads kv head h/(n_head/n_head_kv)) and
// q3 a multiple of k3. mask (f16 or f32, [n_kv, >=n_q, m2, m3] broadcast over
// dims 2-3) and sinks (f32 [n_head]) are optional. The result is f32
// [dv, n_head, n_q, q3]: note heads and queries are swapped, as in ggml.
// Keys whose mask term is -Inf are skipped: their K and V rows are never
// read, so garbage (even NaN) in masked-out cache cells cannot leak in.
func FlashAttnExt(q, k, v, mask, sinks *Tensor, p FlashAttnParams) (*Tensor, error) {
	const op = OpFlashAttnExt
	for _, x := range []struct {
		t    *Tensor
		name string
	}{{q, "q"}, {k, "k"}, {v, "v"}} {
		if err := need(op, x.t, x.name); err != nil {
			return nil, err
		}
	}
	if err := wantType(op, q, "q", quant.F32); err != nil {
		return nil, err
	}
	if err := wantType(op, k, "k", FlashAttnKVTypes...); err != nil {
		return nil, err
	}
	if err := wantType(op, v, "v", FlashAttnKVTypes...); err != nil {
		return nil, err
	}
	if !k.HasContiguousRows() || !v.HasContiguousRows() {
		return nil, shapeErr(op, "k and v rows must be packed")
	}
	if q.Ne[0] != k.Ne[0] {
		return nil, shapeErr(op, "q head size %d != k head size %d", q.Ne[0], k.Ne[0])
	}
	if k.Ne[1] != v.Ne[1] || k.Ne[2] != v.Ne[2] || k.Ne[3] != v.Ne[3] {
		return nil, shapeErr(op, "k %v and v %v differ in dims 1-3", k.Ne, v.Ne)
	}
	if k.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 {
		return nil, shapeErr(op, "%d query heads is not a multiple of %d kv heads", q.Ne[2], k.Ne[2])
	}
	if k.Ne[3] == 0 || q.Ne[3]%k.Ne[3] != 0 {
		return nil, shapeErr(op, "q dim 3 (%d) is not a multiple of k dim 3 (%d)", q.Ne[3], k.Ne[3])
	}
	if mask != nil {
		if err := wantType(op, mask, "mask", quant.F16, quant.F32); err != nil {
			return nil, err
		}
		if mask.Ne[0] != k.Ne[1] || mask.Ne[1] < q.Ne[1] {
			return nil, shapeErr(op, "mask %v must be [n_kv=%d, >=n_q=%d]", mask.Ne, k.Ne[1], q.Ne[1])
		}
		if mask.Ne[2] == 0 || mask.Ne[3] == 0 || q.Ne[2]%mask.Ne[2] != 0 || q.Ne[3]%mask.Ne[3] != 0 {
			return nil, shapeErr(op, "mask %v cannot broadcast to q %v in dims 2-3", mask.Ne, q.Ne)
		}
		if !mask.HasContiguousRows() {
			return nil, shapeErr(op, "mask rows are not packed")
		}
	}
	if sinks != nil {
		if err := wantType(op, sinks, "sinks", quant.F32); err != nil {
			return nil, err
		}
		if sinks.NumElements() != q.Ne[2] || sinks.Ne[0] != q.Ne[2] {
			return nil, shapeErr(op, "sinks %v must hold one logit per head (%d)", sinks.Ne, q.Ne[2])
		}
	}
	if p.MaxBias < 0 || p.Softcap < 0 || isBad(p.Scale) || isBad(p.MaxBias) || isBad(p.Softcap) {
		return nil, shapeErr(op, "bad parameters %+v", p)
	}
	return newNode(op, quant.F32, [MaxDims]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, p, q, k, v, mask, sinks), nil
}

// SSMConv is Mamba's causal depthwise convolution (ggml_ssm_conv). sx is
// f32 [d_conv-1+n_t, d_inner, n_s] (the previous conv state followed by the
// new tokens, per channel), c is f32 [d_conv, d_inner], and the result is
// f32 [d_inner, n_t, n_s]:
//
//	dst[i, t, s] = sum_{j<d_conv} sx[t+j, i, s] * c[j, i]
func SSMConv(sx, c *Tensor) (*Tensor, error) {
	const op = OpSSMConv
	if err := need(op, sx, "sx"); err != nil {
		return nil, err
	}
	if err := need(op, c, "c"); err != nil {
		return nil, err
	}
	if err := wantType(op, sx, "sx", quant.F32); err != nil {
		return nil, err
	}
	if err := wantType(op, c, "c", quant.F32); err != nil {
		return nil, err
	}
	if c.Ne[2] != 1 || c.Ne[3] != 1 || sx.Ne[3] != 1 {
		return nil, shapeErr(op, "c must be 2-D and sx 3-D: sx %v, c %v", sx.Ne, c.Ne)
	}
	if sx.Ne[1] != c.Ne[1] {
		return nil, shapeErr(op, "sx has %d channels, c has %d", sx.Ne[1], c.Ne[1])
	}
	if c.Ne[0] < 1 || sx.Ne[0] < c.Ne[0]-1 {
		return nil, shapeErr(op, "sx rows of %d are shorter than d_conv-1 = %d", sx.Ne[0], c.Ne[0]-1)
	}
	nt := sx.Ne[0] - c.Ne[0] + 1
	return newNode(op, quant.F32, [MaxDims]int64{sx.Ne[1], nt, sx.Ne[2], 1}, nil, sx, c), nil
}

// SSMScan is Mamba's selective scan (ggml_ssm_scan), in ggml's general form
// that covers Mamba-1 (head_dim 1, n_head = d_inner, A [d_state, n_head]) and
// Mamba-2 (A [1, n_head], a scalar per head). Operands, all f32 but ids:
//
//	s   [d_state, head_dim, n_head, n_rs]      recurrent states
//	x   [head_dim, n_head, n_seq_tokens, n_seqs]
//	dt  [n_head, n_seq_tokens, n_seqs]
//	A   [d_state, n_head] or [1, n_head]
//	B,C [d_state, n_group, n_seq_tokens, n_seqs], n_head % n_group == 0
//	ids i32 [n_seqs], the state slot (< n_rs) each sequence starts from
//
// Per sequence, head and token: dt' = softplus(dt) (dt itself above 20),
// state = state*exp(dt'*A) + B*x*dt', y = sum over d_state of state*C. Head
// h reads group h/(n_head/n_group) of B and C. Sequence q starts from state
// slot ids[q]. The result is a flat f32 tensor holding y (x's shape)
// followed by the final states [d_state, head_dim, n_head, n_seqs], sequence
// q's at position q (not at slot ids[q]).
func SSMScan(s, x, dt, A, B, C, ids *Tensor) (*Tensor, error) {
	const op = OpSSMScan
	for i, t := range []*Tensor{s, x, dt, A, B, C, ids} {
		if err := need(op, t, ssmScanSrcNames[i]); err != nil {
			return nil, err
		}
		want := quant.F32
		if i == 6 {
			want = quant.I32
		}
		if err := wantType(op, t, ssmScanSrcNames[i], want); err != nil {
			return nil, err
		}
	}
	if err := ssmScanShapes(s, x, dt, A, B, C, ids); err != nil {
		return nil, shapeErr(op, "%v", err)
	}
	n := ssmScanLen(s, x)
	return newNode(op, quant.F32, [MaxDims]int64{n, 1, 1, 1}, nil, s, x, dt, A, B, C, ids), nil
}

// ssmScanShapes checks SSM_SCAN's operand shapes (see SSMScan), for the
// builder and, through CheckSSMScan, for the backends' Supports.
func ssmScanShapes(s, x, dt, A, B, C, ids *Tensor) error {
	dState, headDim, nHead := s.Ne[0], s.Ne[1], s.Ne[2]
	nTok, nSeqs := x.Ne[2], x.Ne[3]
	switch {
	case x.Ne[0] != headDim || x.Ne[1] != nHead:
		return fmt.Errorf("x %v does not match s %v (head_dim, n_head)", x.Ne, s.Ne)
	case dt.Ne != [MaxDims]int64{nHead, nTok, nSeqs, 1}:
		return fmt.Errorf("dt %v, want [%d %d %d 1]", dt.Ne, nHead, nTok, nSeqs)
	case A.Ne[0] != dState && A.Ne[0] != 1 || A.Ne[1] != nHead || A.Ne[2] != 1 || A.Ne[3] != 1:
		return fmt.Errorf("operand A %v, want [%d or 1, %d]", A.Ne, dState, nHead)
	}
	for i, bc := range []*Tensor{B, C} {
		if bc.Ne[0] != dState || bc.Ne[1] <= 0 || nHead%bc.Ne[1] != 0 || bc.Ne[2] != nTok || bc.Ne[3] != nSeqs {
			return fmt.Errorf("operand %s %v, want [%d, n_group | %d, %d, %d]", [2]string{"B", "C"}[i], bc.Ne, dState, nHead, nTok, nSeqs)
		}
	}
	switch {
	case B.Ne[1] != C.Ne[1]:
		return fmt.Errorf("operands B and C have %d and %d groups", B.Ne[1], C.Ne[1])
	case ids.Ne[0] != nSeqs || ids.NumElements() != nSeqs:
		return fmt.Errorf("ids %v, want [%d]", ids.Ne, nSeqs)
	case s.Ne[3] < nSeqs:
		return fmt.Errorf("%d state slots for %d sequences", s.Ne[3], nSeqs)
	}
	return nil
}

// ssmScanLen is the element count of SSM_SCAN's result: y, then the
// final states of the sequences.
func ssmScanLen(s, x *Tensor) int64 {
	return x.NumElements() + s.Ne[0]*s.Ne[1]*s.Ne[2]*x.Ne[3]
}

// ssmScanSrcNames name SSM_SCAN's sources in order (ScanState .. ScanIDs).
var ssmScanSrcNames = [...]string{"s", "x", "dt", "A", "B", "C", "ids"}

// CheckSSMScan checks an SSM_SCAN node as SSMScan built it: seven
// sources of the types and shapes SSMScan takes and an f32 result of
// their length. Backends call it from Supports, so a node assembled by
// hand gets the builder's rules; it allocates only when it fails.
func CheckSSMScan(t *Tensor) error {
	if len(t.Src) != len(ssmScanSrcNames) {
		return fmt.Errorf("%d sources, want %d", len(t.Src), len(ssmScanSrcNames))
	}
	for i, x := range t.Src {
		want := quant.F32
		if i == ScanIDs {
			want = quant.I32
		}
		if x == nil {
			return fmt.Errorf("%s is missing", ssmScanSrcNames[i])
		}
		if x.Type != want {
			return fmt.Errorf("%s has type %v, want %v", ssmScanSrcNames[i], x.Type, want)
		}
	}
	sr := t.Src
	if err := ssmScanShapes(sr[ScanState], sr[ScanX], sr[ScanDt], sr[ScanA], sr[ScanB], sr[ScanC], sr[ScanIDs]); err != nil {
		return err
	}
	if t.Type != quant.F32 {
		return fmt.Errorf("result type %v, want f32", t.Type)
	}
	if want := [MaxDims]int64{ssmScanLen(sr[ScanState], sr[ScanX]), 1, 1, 1}; t.Ne != want {
		return fmt.Errorf("result shape %v, want %v", t.Ne, want)
	}
	return nil
}

// Rope rotates pairs of a's dimensions by position-dependent angles
// (ggml_rope_ext). a is f32 [head_dim, n_head, n_tokens, 1], pos is i32
// [n_tokens], freqFactors (optional) is f32 [>= NDims/2]. See RopeParams.
func Rope(a, pos, freqFactors *Tensor, p RopeParams) (*Tensor, error) {
	const op = OpRope
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := need(op, pos, "pos"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32); err != nil {
		return nil, err
	}
	if err := wantType(op, pos, "pos", quant.I32); err != nil {
		return nil, err
	}
	if p.Mode != RopeNormal && p.Mode != RopeNeoX {
		return nil, shapeErr(op, "mode %d is not supported (normal 0, NeoX 2)", p.Mode)
	}
	if p.NDims <= 0 || p.NDims%2 != 0 || int64(p.NDims) > a.Ne[0] {
		return nil, shapeErr(op, "n_dims %d must be even and in (0, %d]", p.NDims, a.Ne[0])
	}
	if pos.NumElements() != a.Ne[2] || pos.Ne[0] != a.Ne[2] {
		return nil, shapeErr(op, "pos %v, want [%d] (one position per token)", pos.Ne, a.Ne[2])
	}
	if a.Ne[3] != 1 {
		return nil, shapeErr(op, "a %v must be 3-D", a.Ne)
	}
	if freqFactors != nil {
		if err := wantType(op, freqFactors, "freq_factors", quant.F32); err != nil {
			return nil, err
		}
		if freqFactors.Ne[0] < int64(p.NDims/2) {
			return nil, shapeErr(op, "freq_factors %v shorter than n_dims/2 = %d", freqFactors.Ne, p.NDims/2)
		}
	}
	if p.FreqBase <= 0 || p.FreqScale <= 0 || isBad(p.FreqBase) || isBad(p.FreqScale) || isBad(p.ExtFactor) || isBad(p.AttnFactor) || isBad(p.BetaFast) || isBad(p.BetaSlow) {
		return nil, shapeErr(op, "bad parameters %+v", p)
	}
	return newNode(op, quant.F32, a.Ne, p, a, pos, freqFactors), nil
}

// RMSNorm normalizes each row of a (f32): y = x / sqrt(mean(x²) + eps).
func RMSNorm(a *Tensor, eps float32) (*Tensor, error) {
	const op = OpRMSNorm
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32); err != nil {
		return nil, err
	}
	if eps < 0 || isBad(eps) {
		return nil, shapeErr(op, "eps %v must be finite and >= 0", eps)
	}
	return newNode(op, quant.F32, a.Ne, NormParams{Eps: eps}, a), nil
}

// GetRows gathers rows (ggml_get_rows): a is [ne0, n_rows, a2, a3] of any
// type, ids is i32 [n, a2, a3], and the result is f32 (i32 when a is i32)
// [ne0, n, a2, a3] with dst[:, i, j, k] = a[:, ids[i, j, k], j, k]. An id
// outside [0, n_rows) is an error at compute time.
func GetRows(a, ids *Tensor) (*Tensor, error) {
	const op = OpGetRows
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := need(op, ids, "ids"); err != nil {
		return nil, err
	}
	if !(matmulWeightType(a.Type) || a.Type == quant.I32) {
		return nil, shapeErr(op, "a has type %v", a.Type)
	}
	if err := wantType(op, ids, "ids", quant.I32); err != nil {
		return nil, err
	}
	if !a.HasContiguousRows() {
		return nil, shapeErr(op, "a rows are not packed")
	}
	if ids.Ne[1] != a.Ne[2] || ids.Ne[2] != a.Ne[3] || ids.Ne[3] != 1 {
		return nil, shapeErr(op, "ids %v must be [n, %d, %d]", ids.Ne, a.Ne[2], a.Ne[3])
	}
	t := quant.F32
	if a.Type == quant.I32 {
		t = quant.I32
	}
	return newNode(op, t, [MaxDims]int64{a.Ne[0], ids.Ne[0], ids.Ne[1], ids.Ne[2]}, nil, a, ids), nil
}

func binary(op Op, a, b *Tensor) (*Tensor, error) {
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := need(op, b, "b"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32); err != nil {
		return nil, err
	}
	if err := wantType(op, b, "b", quant.F32, quant.F16); err != nil {
		return nil, err
	}
	for i := 0; i < MaxDims; i++ {
		if b.Ne[i] == 0 || a.Ne[i]%b.Ne[i] != 0 {
			return nil, shapeErr(op, "b %v cannot broadcast to a %v (dim %d)", b.Ne, a.Ne, i)
		}
	}
	return newNode(op, quant.F32, a.Ne, nil, a, b), nil
}

// Add returns a + b, b (f32 or f16) repeated to a's shape (each a.Ne[i] a
// multiple of b.Ne[i]), as ggml_add does.
func Add(a, b *Tensor) (*Tensor, error) { return binary(OpAdd, a, b) }

// Mul returns a * b elementwise, b repeated to a's shape, as ggml_mul does.
func Mul(a, b *Tensor) (*Tensor, error) { return binary(OpMul, a, b) }

func unary(op Op, a *Tensor, params any) (*Tensor, error) {
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32); err != nil {
		return nil, err
	}
	return newNode(op, quant.F32, a.Ne, params, a), nil
}

// Scale returns s*a + bias (f32).
func Scale(a *Tensor, s, bias float32) (*Tensor, error) {
	return unary(OpScale, a, ScaleParams{Scale: s, Bias: bias})
}

// Silu returns x*sigmoid(x) (f32).
func Silu(a *Tensor) (*Tensor, error) { return unary(OpSilu, a, nil) }

// Gelu returns the tanh approximation of GELU that ggml uses (f32):
// 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x³))).
func Gelu(a *Tensor) (*Tensor, error) { return unary(OpGelu, a, nil) }

// SumRows returns the sum of each row of a (f32) as [1, ne1, ne2, ne3].
func SumRows(a *Tensor) (*Tensor, error) {
	t, err := unary(OpSumRows, a, nil)
	if err != nil {
		return nil, err
	}
	t.Ne[0] = 1
	t.Nb = ContiguousStrides(t.Type, t.Ne)
	return t, nil
}

// Argsort returns, per row of a (f32), the indices (i32) that sort the row
// in the given order; ties keep their original order. NaN sorts below every
// number (as cmp.Compare orders floats), so it comes first ascending.
func Argsort(a *Tensor, order SortOrder) (*Tensor, error) {
	t, err := unary(OpArgsort, a, ArgsortParams{Order: order})
	if err != nil {
		return nil, err
	}
	if order != SortAsc && order != SortDesc {
		return nil, shapeErr(OpArgsort, "unknown order %d", order)
	}
	t.Type = quant.I32
	t.Nb = ContiguousStrides(t.Type, t.Ne)
	return t, nil
}

// SwiGLU returns silu(g)*u. With b == nil, a's rows are split in halves (g
// first unless swapped) and the result has half a's row length; otherwise g
// is a and u is b, of the same shape. All f32.
func SwiGLU(a, b *Tensor, swapped bool) (*Tensor, error) {
	const op = OpSwiGLU
	t, err := unary(op, a, GLUParams{Swapped: swapped})
	if err != nil {
		return nil, err
	}
	if b == nil {
		if a.Ne[0]%2 != 0 {
			return nil, shapeErr(op, "row length %d is odd and cannot be split in halves", a.Ne[0])
		}
		if !a.HasContiguousRows() {
			return nil, shapeErr(op, "a rows are not packed")
		}
		t.Ne[0] /= 2
		t.Nb = ContiguousStrides(t.Type, t.Ne)
		return t, nil
	}
	if err := wantType(op, b, "b", quant.F32); err != nil {
		return nil, err
	}
	if a.Ne != b.Ne {
		return nil, shapeErr(op, "a %v and b %v differ", a.Ne, b.Ne)
	}
	t.Src = append(t.Src, b)
	return t, nil
}

// SwiGLUOAI returns gpt-oss's clamped SwiGLU of g and u (same-shaped f32
// tensors), elementwise: see GLUOAIParams for the formula. Limit must be
// positive and both parameters finite.
func SwiGLUOAI(g, u *Tensor, alpha, limit float32) (*Tensor, error) {
	const op = OpSwiGLUOAI
	if err := need(op, g, "g"); err != nil {
		return nil, err
	}
	if err := need(op, u, "u"); err != nil {
		return nil, err
	}
	if err := wantType(op, g, "g", quant.F32); err != nil {
		return nil, err
	}
	if err := wantType(op, u, "u", quant.F32); err != nil {
		return nil, err
	}
	if g.Ne != u.Ne {
		return nil, shapeErr(op, "g %v and u %v differ", g.Ne, u.Ne)
	}
	if !(limit > 0) || isBad(alpha) || isBad(limit) {
		return nil, shapeErr(op, "alpha %v and limit %v must be finite, limit > 0", alpha, limit)
	}
	return newNode(op, quant.F32, g.Ne, GLUOAIParams{Alpha: alpha, Limit: limit}, g, u), nil
}

// Cont returns a contiguous copy of a, of the same type and shape.
func Cont(a *Tensor) (*Tensor, error) {
	const op = OpCont
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if a.Type.IsQuantized() && !a.HasContiguousRows() {
		return nil, shapeErr(op, "quantized rows are not packed")
	}
	return newNode(op, a.Type, a.Ne, nil, a), nil
}

// Cpy copies a's elements into b's storage, converting the type (ggml_cpy),
// and returns a node that is a view of b. Elements go in logical
// (row-major) order, so shapes may differ when element counts match. a is
// f32, f16 or bf16; b is any float type or, when contiguous, any quantized
// type (rounding as quant.QuantizeRow does).
func Cpy(a, b *Tensor) (*Tensor, error) {
	const op = OpCpy
	if err := need(op, a, "a"); err != nil {
		return nil, err
	}
	if err := need(op, b, "b"); err != nil {
		return nil, err
	}
	if err := wantType(op, a, "a", quant.F32, quant.F16, quant.BF16); err != nil {
		return nil, err
	}
	if !b.Type.IsFloat() && !b.Type.IsQuantized() {
		return nil, shapeErr(op, "destination type %v is not a float or quantized type", b.Type)
	}
	if a.NumElements() != b.NumElements() {
		return nil, shapeErr(op, "a has %d elements, b has %d", a.NumElements(), b.NumElements())
	}
	if b.Type.IsQuantized() && !b.IsContiguous() {
		return nil, shapeErr(op, "quantized destination %s must be contiguous", b.Label())
	}
	if b.Type == quant.Q8_K || b.Type == quant.Q8_1 {
		return nil, shapeErr(op, "%v is an activation format, not a copy destination", b.Type)
	}
	return &Tensor{Type: b.Type, Ne: b.Ne, Nb: b.Nb, Op: op, Src: []*Tensor{a, b}, ViewOf: b}, nil
}
