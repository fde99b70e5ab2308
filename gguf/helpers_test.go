package gguf

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
	shared "github.com/kernbench/kernbench/internal/shareddata"
)

// testdataDir returns the shared test data folder, found by walking up
// from the working directory to a "shared/testdata" folder (it lies beside
// the repository), or skips the test when there is none.
func testdataDir(t testing.TB) string {
	t.Helper()
	return shared.Dir(t)
}

// testFile returns the path of a file in the shared test data, skipping
// the test when it is absent (failing it under KERNBENCH_STRICT=1).
func testFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(testdataDir(t), name)
	if _, err := os.Stat(p); err != nil {
		require.Skip(t, "test file %s not available: %v", name, err)
	}
	return p
}

// builder writes GGUF bytes field by field, independently of Writer, so
// tests can make files Writer refuses to, and records where each field
// starts.
type builder struct {
	b      []byte
	fields []field
}

type field struct {
	off  int
	name string // what a truncation here should name in the error
}

func (b *builder) mark(name string) { b.fields = append(b.fields, field{len(b.b), name}) }

func (b *builder) raw(name string, p []byte) *builder {
	b.mark(name)
	b.b = append(b.b, p...)
	return b
}

func (b *builder) u8(name string, v uint8) *builder { return b.raw(name, []byte{v}) }

func (b *builder) u32(name string, v uint32) *builder {
	return b.raw(name, binary.LittleEndian.AppendUint32(nil, v))
}

func (b *builder) u64(name string, v uint64) *builder {
	return b.raw(name, binary.LittleEndian.AppendUint64(nil, v))
}

func (b *builder) str(name, s string) *builder {
	b.u64(name+" length", uint64(len(s)))
	if s != "" {
		b.raw(name, []byte(s))
	}
	return b
}

// header writes magic, version and counts.
func (b *builder) header(version uint32, tensors, kvs uint64) *builder {
	return b.raw("magic", []byte("GGUF")).u32("version", version).u64("tensor count", tensors).u64("KV count", kvs)
}

// kvU32 writes a KV holding a uint32.
func (b *builder) kvU32(key string, v uint32) *builder {
	return b.str("key", key).u32("value type", uint32(TypeUint32)).u32("uint32 value", v)
}

// tensor writes a tensor info.
func (b *builder) tensor(name string, typ uint32, off uint64, ne ...uint64) *builder {
	b.str("name", name).u32("n_dims", uint32(len(ne)))
	for _, n := range ne {
		b.u64("ne", n)
	}
	return b.u32("type", typ).u64("offset", off)
}

// padTo appends zeros up to a multiple of align.
func (b *builder) padTo(align int) *builder {
	for len(b.b)%align != 0 {
		b.b = append(b.b, 0)
	}
	return b
}

// zeros appends n zero bytes.
func (b *builder) zeros(n int) *builder {
	b.b = append(b.b, make([]byte, n)...)
	return b
}

// randBytes returns n reproducible pseudo-random bytes.
func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}
