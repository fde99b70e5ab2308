package cpu

import (
	"testing"
	"unsafe"

	"github.com/kernbench/kernbench/ops"
)

// TestArena: pieces are aligned, zeroed, do not overlap, are refused
// when the arena is full, and their space is handed out again, zeroed,
// once every piece is back.
func TestArena(t *testing.T) {
	a, err := newArena(3 * hugePage / 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.free()
	if len(a.mem) != 2*hugePage {
		t.Fatalf("arena of %d bytes, want %d (whole huge pages)", len(a.mem), 2*hugePage)
	}
	sizes := []int64{1, 100, 4096, 5000, 300000, 64}
	type piece struct {
		p   []byte
		put func()
	}
	var ps []piece
	for i, n := range sizes {
		p, put, ok := a.take(n)
		if !ok {
			t.Fatalf("take(%d) refused with %d of %d bytes used", n, a.used, len(a.mem))
		}
		if int64(len(p)) != n || int64(cap(p)) != n {
			t.Fatalf("take(%d): len %d cap %d", n, len(p), cap(p))
		}
		if at := uintptr(unsafe.Pointer(&p[0])); at%arenaAlign != 0 {
			t.Errorf("take(%d) at %#x, not %d-byte aligned", n, at, arenaAlign)
		}
		for j, v := range p {
			if v != 0 {
				t.Fatalf("take(%d): byte %d is %d, want 0", n, j, v)
			}
		}
		for j := range p {
			p[j] = byte(i + 1)
		}
		ps = append(ps, piece{p, put})
	}
	for i, q := range ps {
		for j, v := range q.p {
			if v != byte(i+1) {
				t.Fatalf("piece %d byte %d is %d after the later takes, want %d: pieces overlap", i, j, v, i+1)
			}
		}
	}
	if _, _, ok := a.take(int64(len(a.mem))); ok {
		t.Fatal("take of the whole arena accepted with pieces out")
	}
	// Giving back all but one keeps the space in use.
	for _, q := range ps[1:] {
		q.put()
		q.put() // a second put is a no-op
	}
	if a.used == 0 {
		t.Fatal("the arena restarted with a piece still out")
	}
	ps[0].put()
	if a.used != 0 || a.live != 0 {
		t.Fatalf("all pieces back: used %d, live %d, want 0, 0", a.used, a.live)
	}
	p, _, ok := a.take(int64(len(a.mem)))
	if !ok {
		t.Fatal("take of the whole arena refused once every piece was back")
	}
	for j, v := range p {
		if v != 0 {
			t.Fatalf("byte %d of a reused arena is %d, want 0", j, v)
		}
	}
}

// TestX8CacheAlloc: copies of one buffer's weights come from its arena
// while it has room, then from mappings of their own; drop frees both.
func TestX8CacheAlloc(t *testing.T) {
	hb, err := ops.NewHostBuffer(3 * hugePage)
	if err != nil {
		t.Fatal(err)
	}
	var c x8Cache
	a, freeA, err := c.alloc(hb, hugePage)
	if err != nil {
		t.Fatal(err)
	}
	ar := c.arenas[hb]
	if ar == nil || ar.live != 1 {
		t.Fatalf("first copy: arena %v, want one with a piece out", ar)
	}
	b, freeB, err := c.alloc(hb, 2*hugePage)
	if err != nil {
		t.Fatal(err)
	}
	if ar.live != 2 {
		t.Fatalf("second copy: %d pieces out of the arena, want 2", ar.live)
	}
	// Past the arena (3 huge pages, all handed out): its own mapping.
	over, freeOver, err := c.alloc(hb, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if ar.live != 2 {
		t.Fatalf("copy past the arena's room taken from it (%d pieces out)", ar.live)
	}
	over[4095], a[0], b[len(b)-1] = 1, 2, 3
	freeOver()
	freeA()
	freeB()
	if ar.live != 0 || ar.used != 0 {
		t.Fatalf("every copy freed: arena used %d, live %d", ar.used, ar.live)
	}
	c.drop()
	if c.arenas != nil {
		t.Fatal("drop kept the arenas")
	}
}
