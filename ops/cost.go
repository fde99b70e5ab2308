package ops

// Cost is the work an op does: floating-point (or integer multiply-add)
// operations and bytes moved, the numerators of GFLOP/s and GB/s.
type Cost struct {
	// Flops counts a multiply-add as 2 and each exp, tanh, sqrt or
	// division as 1; FLOPs of transcendental functions are a convention,
	// so compare matmul-like ops by FLOP/s and the rest by bytes/s.
	Flops int64
	// Bytes counts every source once as packed, plus the output.
	Bytes int64
}

// An opCost is one op's cost model: its FLOPs, and how many bytes of its
// sources it does not read (0 for most ops).
type opCost struct {
	flops func(t *Tensor) int64
	// unread, when set, returns the bytes of t's sources that the op
	// does not read, subtracted from the generic count (every source
	// once, plus the output).
	unread func(t *Tensor) int64
}

// costs is the cost model of every compute op, the one place an op's
// FLOP formula is written: graphs' records, the harness's plans and
// opbench's GFLOP/s all read it through CostOf. TestCostModel requires an
// entry for every compute op. n is the number of output elements.
var costs = [numOps]opCost{
	OpMulMat: {flops: func(t *Tensor) int64 { return 2 * t.Src[0].Ne[0] * t.NumElements() }},
	OpMulMatID: {
		flops: func(t *Tensor) int64 { return 2 * t.Src[0].Ne[0] * t.NumElements() },
		// Only the experts in use are read: count n_used*n_tokens rows
		// of weights at most, never more than all of them.
		unread: func(t *Tensor) int64 {
			w := t.Src[0]
			if used := t.Ne[1] * t.Ne[2]; used < w.Ne[2] {
				return w.Bytes() - used*w.Bytes()/w.Ne[2]
			}
			return 0
		},
	},
	OpSoftMax: {flops: perOutput(5)},
	OpFlashAttnExt: {flops: func(t *Tensor) int64 {
		q, k, v := t.Src[FAQ], t.Src[FAK], t.Src[FAV]
		pairs := q.Ne[1] * q.Ne[2] * q.Ne[3] * k.Ne[1]
		return 2*pairs*q.Ne[0] + 2*pairs*v.Ne[0] + 5*pairs
	}},
	OpSSMConv: {flops: func(t *Tensor) int64 { return 2 * t.NumElements() * t.Src[1].Ne[0] }},
	OpSSMScan: {flops: func(t *Tensor) int64 {
		// per element of x and state: exp, 2 mul-adds for the update, 1 for y
		x, s := t.Src[ScanX], t.Src[ScanState]
		return x.NumElements() * s.Ne[0] * 7
	}},
	OpRope:    {flops: perOutput(6)},
	OpRMSNorm: {flops: perOutput(3)},
	OpGetRows: {flops: perOutput(0)},
	OpAdd:     {flops: perInput(1)},
	OpMul:     {flops: perInput(1)},
	OpScale:   {flops: perOutput(2)},
	OpCpy: {
		flops: perOutput(0),
		// the destination is written, not read
		unread: func(t *Tensor) int64 { return t.Src[1].Bytes() },
	},
	OpCont:   {flops: perOutput(0)},
	OpSilu:   {flops: perOutput(4)},
	OpGelu:   {flops: perOutput(8)},
	OpSwiGLU: {flops: perOutput(5)},
	// min, clamp, the sigmoid's product, exp, add and division, +1, product
	OpSwiGLUOAI: {flops: perOutput(9)},
	OpArgsort: {flops: func(t *Tensor) int64 {
		lg := int64(1)
		for x := t.Ne[0]; x > 1; x >>= 1 {
			lg++
		}
		return t.NumElements() * lg
	}},
	OpSumRows: {flops: perInput(1)},
}

// perOutput is a FLOP formula of f operations per output element.
func perOutput(f int64) func(t *Tensor) int64 {
	return func(t *Tensor) int64 { return f * t.NumElements() }
}

// perInput is a FLOP formula of f operations per element of the first
// source.
func perInput(f int64) func(t *Tensor) int64 {
	return func(t *Tensor) int64 { return f * t.Src[0].NumElements() }
}

// CostOf returns the cost of computing t: the op's FLOPs, and every source
// once as packed plus the output, less what the op does not read. Views
// and leaves cost nothing.
func CostOf(t *Tensor) Cost {
	if t.Op == OpNone || t.Op.IsView() || t.Op < 0 || t.Op >= numOps {
		return Cost{}
	}
	var c Cost
	for _, s := range t.Src {
		if s != nil {
			c.Bytes += s.Bytes()
		}
	}
	c.Bytes += t.Bytes()
	m := costs[t.Op]
	if m.unread != nil {
		c.Bytes -= m.unread(t)
	}
	if m.flops != nil {
		c.Flops = m.flops(t)
	}
	return c
}
