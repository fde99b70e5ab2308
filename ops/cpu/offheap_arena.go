package cpu

// hugePage is the size of a transparent huge page on the targets that
// have them (2 MiB on x86-64 and on arm64 with 4 KiB pages); an arena
// is a whole number of them, aligned to one.
const hugePage = 2 << 20

// arenaAlign is the alignment of every piece of an arena: a cache line,
// and the widest vector the kernels load.
const arenaAlign = 64

// An arena hands out pieces of one off-heap reservation (reserveOffHeap)
// by bumping an offset, so that the long-lived copies of a buffer's
// weights lie side by side in huge pages rather than each in a mapping
// of its own. A piece given back is discarded (its whole pages leave
// memory) but its space is not reused until every piece is back; then
// the arena starts again from its beginning.
type arena struct {
	mem     []byte
	release func()
	used    int64 // bytes handed out, from mem's start
	live    int   // pieces not yet given back
}

// newArena reserves an arena of at least n bytes.
func newArena(n int64) (*arena, error) {
	mem, release, err := reserveOffHeap(n)
	if err != nil {
		return nil, err
	}
	return &arena{mem: mem, release: release}, nil
}

// take returns n zeroed bytes of the arena, arenaAlign-aligned, and the
// function that gives them back; ok is false when the arena has no room.
func (a *arena) take(n int64) (p []byte, put func(), ok bool) {
	span := (n + arenaAlign - 1) / arenaAlign * arenaAlign
	if n <= 0 || a.used+span > int64(len(a.mem)) {
		return nil, nil, false
	}
	p = a.mem[a.used : a.used+n : a.used+n]
	a.used += span
	a.live++
	given := false
	return p, func() {
		if given {
			return
		}
		given = true
		// Zeroed, as take promises when the space is handed out again.
		discard(p)
		a.live--
		if a.live == 0 {
			a.used = 0
		}
	}, true
}

// free releases the whole reservation; pieces still out must not be used
// after it.
func (a *arena) free() {
	if a.release != nil {
		a.release()
	}
	a.mem, a.release, a.used, a.live = nil, nil, 0, 0
}
