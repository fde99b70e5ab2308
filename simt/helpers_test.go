package simt

import (
	"encoding/binary"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/kernbench/kernbench/internal/require"
)

// device returns the emulated device, or skips the test where the
// emulator cannot run; with $KERNBENCH_STRICT=1 (CI sets it) it
// fails instead, so a machine without g++ cannot pass silently.
func device(t testing.TB) *Device {
	t.Helper()
	d, err := Open()
	if err != nil {
		require.Skip(t, "SIMT emulator unavailable: %v", err)
	}
	return d
}

var modules sync.Map // "file/mode" -> *Module

// load builds testdata/file in mode m once per test binary.
func load(t testing.TB, file string, m Mode) *Module {
	t.Helper()
	d := device(t)
	key := file + "/" + m.String()
	if v, ok := modules.Load(key); ok {
		return v.(*Module)
	}
	text, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	dialect := CUDA
	if len(file) > 6 && file[len(file)-6:] == ".metal" {
		dialect = Metal
	}
	mod, err := d.Load(Program{Dialect: dialect, Main: Source{Name: file, Text: text}}, m)
	if err != nil {
		t.Fatalf("load %s (%v): %v", file, m, err)
	}
	modules.Store(key, mod)
	return mod
}

func kernel(t testing.TB, m *Module, name string) *Kernel {
	t.Helper()
	k, err := m.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func alloc(t testing.TB, size int) *Buffer {
	t.Helper()
	b, err := device(t).Alloc(int64(size))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free() })
	return b
}

func f32Buf(t testing.TB, v []float32) *Buffer {
	b := alloc(t, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b.Bytes()[4*i:], math.Float32bits(x))
	}
	return b
}

func f32s(b *Buffer) []float32 {
	out := make([]float32, b.Size()/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b.Bytes()[4*i:]))
	}
	return out
}

func u32s(b *Buffer) []uint32 {
	out := make([]uint32, b.Size()/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b.Bytes()[4*i:])
	}
	return out
}

func i32s(b *Buffer) []int32 {
	u := u32s(b)
	out := make([]int32, len(u))
	for i, x := range u {
		out[i] = int32(x)
	}
	return out
}

func u16s(b *Buffer) []uint16 {
	out := make([]uint16, b.Size()/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b.Bytes()[2*i:])
	}
	return out
}

// modes runs f once per build mode.
func modes(t *testing.T, f func(t *testing.T, m Mode)) {
	for _, m := range []Mode{Checked, Fast} {
		t.Run(m.String(), func(t *testing.T) { f(t, m) })
	}
}

func launch(t testing.TB, k *Kernel, l Launch) Stats {
	t.Helper()
	st, err := k.Launch(l)
	if err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
	return st
}

func d1(n uint32) Dim3 { return Dim3{n, 1, 1} }
