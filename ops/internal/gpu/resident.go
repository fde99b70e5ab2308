package gpu

import "github.com/kernbench/kernbench/ops"

// Resident is the bookkeeping of host memory a backend makes device
// memory of type B: read-only host buffers (a model's weights in its
// file's mapping) once, whole, kept by the host buffer until Close; and
// temporaries (copies of writable host tensors for queued work, memory a
// node's kernels pass data through, scratch memory replaced while work
// may still read it) released at the next synchronization.
type Resident[B any] struct {
	// Release frees device memory.
	Release func(B)
	kept    map[*ops.HostBuffer]B
	temps   []B
}

// Host returns device memory holding the extent bytes at off of host
// buffer m, and the offset of the first of them in it: for a read-only m
// the whole buffer, made once by keep and kept; for a writable one a
// temporary made by temp from those bytes.
func (r *Resident[B]) Host(m *ops.HostBuffer, off, extent int64, keep, temp func(p []byte) (B, error)) (B, int64, error) {
	if m.ReadOnly() {
		d, ok := r.kept[m]
		if !ok {
			var err error
			if d, err = keep(m.Bytes()); err != nil {
				return d, 0, err
			}
			if r.kept == nil {
				r.kept = map[*ops.HostBuffer]B{}
			}
			r.kept[m] = d
		}
		return d, off, nil
	}
	d, err := temp(m.Bytes()[off : off+extent])
	if err != nil {
		return d, 0, err
	}
	r.temps = append(r.temps, d)
	return d, 0, nil
}

// AddTemp adds device memory to release at the next synchronization.
func (r *Resident[B]) AddTemp(d B) { r.temps = append(r.temps, d) }

// ReleaseTemps releases the temporaries: the work that used them is done.
func (r *Resident[B]) ReleaseTemps() {
	for _, d := range r.temps {
		r.Release(d)
	}
	clear(r.temps)
	r.temps = r.temps[:0]
}

// ReleaseAll releases the temporaries and the kept copies.
func (r *Resident[B]) ReleaseAll() {
	r.ReleaseTemps()
	for _, d := range r.kept {
		r.Release(d)
	}
	r.kept = nil
}

// Kept returns how many host buffers have a kept copy.
func (r *Resident[B]) Kept() int { return len(r.kept) }
