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

// CostOf returns the cost of computing t. Views cost nothing.
func CostOf(t *Tensor) Cost {
	if t.Op == OpNone || t.Op.IsView() {
		return Cost{}
	}
	var c Cost
	for _, s := range t.Src {
		if s != nil {
			c.Bytes += s.Bytes()
		}
	}
	if t.Op == OpCpy {
		c.Bytes -= t.Src[1].Bytes() // the destination is written, not read
	}
	c.Bytes += t.Bytes()
	n := t.NumElements()
	switch t.Op {
	case OpMulMat:
		c.Flops = 2 * t.Src[0].Ne[0] * n
	case OpMulMatID:
		c.Flops = 2 * t.Src[0].Ne[0] * n
		// Only the experts in use are read: count n_used*n_tokens rows
		// of weights at most, never more than all of them.
		w := t.Src[0]
		used := t.Ne[1] * t.Ne[2]
		if used < w.Ne[2] {
			c.Bytes -= w.Bytes() - used*w.Bytes()/w.Ne[2]
		}
	case OpFlashAttnExt:
		q, k, v := t.Src[FAQ], t.Src[FAK], t.Src[FAV]
		pairs := q.Ne[1] * q.Ne[2] * q.Ne[3] * k.Ne[1]
		c.Flops = 2*pairs*q.Ne[0] + 2*pairs*v.Ne[0] + 5*pairs
	case OpSoftMax:
		c.Flops = 5 * n
	case OpSSMConv:
		c.Flops = 2 * n * t.Src[1].Ne[0]
	case OpSSMScan:
		x, s := t.Src[ScanX], t.Src[ScanState]
		// per element of x and state: exp, 2 mul-adds for the update, 1 for y
		c.Flops = x.NumElements() * s.Ne[0] * 7
	case OpRope:
		c.Flops = 6 * n
	case OpRMSNorm:
		c.Flops = 3 * n
	case OpAdd, OpMul, OpSumRows:
		c.Flops = t.Src[0].NumElements()
	case OpScale:
		c.Flops = 2 * n
	case OpSilu:
		c.Flops = 4 * n
	case OpGelu:
		c.Flops = 8 * n
	case OpSwiGLU:
		c.Flops = 5 * n
	case OpArgsort:
		r := t.Ne[0]
		lg := int64(1)
		for x := r; x > 1; x >>= 1 {
			lg++
		}
		c.Flops = n * lg
	}
	return c
}
