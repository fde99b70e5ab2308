package metal

import "fmt"

// Host memory as device memory. A read-only host buffer (a model file's
// mapping) is made device memory once and kept, as views: each a buffer
// of at most the device's maxBufferLength, wrapped without a copy
// (newBufferWithBytesNoCopy) where the device can, else a copy, made when
// a tensor first needs one, so that a weight file larger than
// maxBufferLength needs no buffer of its size. A tensor is always bound
// through one view that holds it whole: a view starts at the first tensor
// it is made for (or ends at the buffer's end), so views overlap where a
// tensor crosses the end of another, as ggml-metal's overlapping views
// do. A buffer that fits one view is wrapped whole.

// pageSlack is what a no-copy view may add to its bytes: it wraps the
// whole pages around them, at most two more pages (of 16 KiB on Apple
// GPUs), so a view holds at most maxBufferLength less that.
const pageSlack = 32 << 10

// A mapping is device memory holding host memory: the views made so far
// of a read-only host buffer (host), or a temporary's one buffer.
type mapping struct {
	host  []byte
	views []mappedView
}

// A mappedView is a device buffer holding host bytes [lo, hi), host byte
// lo at off in it.
type mappedView struct {
	buf     devBuffer
	lo, hi  int64
	off     int64
	wrapped bool
}

func (m *mapping) release() {
	for _, v := range m.views {
		v.buf.release()
	}
	m.views = nil
}

// hostMapping is the mapping of a read-only host buffer, with no view
// yet (viewOf makes them).
func (b *Backend) hostMapping(p []byte) (*mapping, error) { return &mapping{host: p}, nil }

// hostCopy returns a temporary mapping holding a copy of p.
func (b *Backend) hostCopy(p []byte) (*mapping, error) {
	d, err := b.dev.newBuffer(max(int64(len(p)), 1))
	if err != nil {
		return nil, err
	}
	copy(d.contents(), p)
	return &mapping{views: []mappedView{{buf: d, hi: int64(len(p))}}}, nil
}

// viewLimit is the most host bytes a view holds.
func (b *Backend) viewLimit() int64 {
	m := b.dev.maxBufferLength()
	return max(m-pageSlack, m/2)
}

// viewOf returns where host bytes [at, at+n) of mapping m are in device
// memory: in a view holding them whole, made if none does.
func (b *Backend) viewOf(m *mapping, at, n int64) (view, error) {
	for _, v := range m.views {
		if v.lo <= at && at+n <= v.hi {
			return view{v.buf, v.off + at - v.lo}, nil
		}
	}
	if m.host == nil {
		return view{}, fmt.Errorf("bytes [%d, %d) outside a copy of %d bytes", at, at+n, len(m.views[0].buf.contents()))
	}
	size, limit := int64(len(m.host)), b.viewLimit()
	lo, hi := int64(0), size
	if size > limit {
		if n > limit {
			return view{}, fmt.Errorf("%d bytes of weights are more than one buffer may hold (the device's maxBufferLength is %d)", n, b.dev.maxBufferLength())
		}
		lo = min(at, size-limit)
		hi = lo + limit
	}
	v := mappedView{lo: lo, hi: hi}
	p := m.host[lo:hi]
	if d, off, ok := b.dev.wrapHost(p); ok {
		v.buf, v.off, v.wrapped = d, off, true
	} else {
		d, err := b.dev.newBuffer(max(hi-lo, 1))
		if err != nil {
			return view{}, fmt.Errorf("copying %d bytes of weights to the device: %w", hi-lo, err)
		}
		copy(d.contents(), p)
		v.buf = d
	}
	m.views = append(m.views, v)
	b.viewsMade++
	return view{v.buf, v.off + at - lo}, nil
}
