package ops

// A Backend computes tensors with one family of kernels: the CPU, CUDA,
// Metal, or the float64 reference. Every backend stands behind this
// interface so the harness, graphs and models treat them alike.
type Backend interface {
	// Name identifies the backend, such as "cpu" or "cuda:0".
	Name() string
	// Supports returns nil when the backend can compute t from its
	// sources (op, types, strides), or an error saying why not.
	Supports(t *Tensor) error
	// Alloc returns a new zeroed buffer of size bytes in memory the
	// backend computes from.
	Alloc(size int64) (Buffer, error)
	// Compute computes t into its storage. t and its sources must be
	// allocated in the backend's buffers and the sources must hold data.
	// ADD, MUL, SCALE, SILU, GELU and two-source SWIGLU must also be
	// correct when t's storage is exactly Src[0]'s (same offset and
	// strides): the graph planner runs them in place.
	Compute(t *Tensor) error
	// Close releases the backend's resources (threads, device context).
	Close() error
}

// AllocTensor gives t storage of its own in a new buffer of b, of t's
// extent plus pad bytes (pad lets callers place guard bytes past the end).
// Views and CPY nodes share their source's storage and need no call.
func AllocTensor(b Backend, t *Tensor, pad int64) error {
	if t.ViewOf != nil {
		return nil
	}
	buf, err := b.Alloc(t.Extent() + pad)
	if err != nil {
		return err
	}
	t.Buffer, t.Offset = buf, 0
	return nil
}
