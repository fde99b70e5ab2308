package cuda

import "github.com/kernbench/kernbench/simt"

// ChecksBounds reports whether every device memory access of a kernel is
// checked against its buffer's bounds: true on cuda-emu built in Checked
// mode, whose buffers have red zones. The harness then allocates tensors
// without guard bytes of its own (harness.BoundsChecker), so that a read
// of even one byte past an input's end is a fault.
func (b *Backend) ChecksBounds() bool {
	c, ok := b.comp.(emuCompiler)
	return ok && c.mode == simt.Checked
}
