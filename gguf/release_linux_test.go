package gguf_test

import (
	"bufio"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernbench/kernbench/gguf"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/quant"
)

// mappedRSS returns the resident kilobytes of the process's mappings of
// path (/proc/self/smaps).
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var kb int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: address range, perms, ..., path.
			in = fields[len(fields)-1] == path
			continue
		}
		if in && fields[0] == "Rss:" {
			v, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			kb += v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kb
}

// TestRepackReleasesMapping checks that when the CPU backend repacks a
// mapped weight for its matrix-vector kernels, the mapped original stops
// being resident (the weights are held once, not twice), that products
// on the copy leave it so, and that the result is the plain layout's,
// for each type with an x8 kernel.
func TestRepackReleasesMapping(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q6_K, quant.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) { testRepackReleases(t, typ) })
	}
}

// testRepackReleases is TestRepackReleasesMapping for weights of typ.
func testRepackReleases(t *testing.T, typ quant.Type) {
	const k, m = 2048, 1024
	rng := rand.New(rand.NewPCG(1, 2))
	rs, err := typ.RowSize(k)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, rs*m)
	vals := make([]float32, k)
	for r := range int64(m) {
		for i := range vals {
			vals[i] = 2*rng.Float32() - 1
		}
		if err := quant.QuantizeRow(typ, vals, data[r*rs:(r+1)*rs]); err != nil {
			t.Fatal(err)
		}
	}
	w := gguf.NewWriter()
	if err := w.AddTensor("w", typ, []int64{k, m}, data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wt, err := f.Tensor("w")
	if err != nil {
		t.Fatal(err)
	}

	// product computes the products of the weights with n activation
	// rows for each n of ns in turn on one backend (n = 1: the
	// matrix-vector path, reading the copy where there is one; n = 8:
	// the gemm path), three times each, and returns their outputs.
	product := func(o cpu.Options, ns ...int64) []float32 {
		b, err := cpu.NewWithOptions(o)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var got []float32
		for _, n := range ns {
			x, err := ops.NewTensor("x", quant.F32, k, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := ops.AllocTensor(b, x, 0); err != nil {
				t.Fatal(err)
			}
			xb, _ := x.HostBytes()
			for i := range k * n {
				binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(float32(i%7)-3))
			}
			node, err := ops.MulMat(wt, x)
			if err != nil {
				t.Fatal(err)
			}
			if err := ops.AllocTensor(b, node, 0); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := b.Compute(node); err != nil {
					t.Fatal(err)
				}
			}
			out, _ := node.HostBytes()
			for i := range m * n {
				got = append(got, math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
			}
		}
		return got
	}

	// The gemm path after the matrix-vector one: where it reads the
	// original in place (the K formats' panels), the backend releases
	// its pages again afterwards.
	plain := product(cpu.Options{Threads: 2, NoRepack: true}, 1, 8)
	full := mappedRSS(t, path)
	if full < int64(len(data))/1024*9/10 {
		t.Fatalf("the plain product left only %d KiB of the %d KiB mapping resident", full, len(data)/1024)
	}
	b, err := cpu.New(1)
	if err != nil {
		t.Fatal(err)
	}
	tier := b.Tier().Name
	b.Close()
	repacked := product(cpu.Options{Threads: 2}, 1, 8)
	after := mappedRSS(t, path)
	t.Logf("tier %s: mapping resident %d KiB after the plain products, %d KiB after the repacked ones (weights %d KiB)", tier, full, after, len(data)/1024)
	if tier == "avx2" && after > 64 {
		t.Errorf("the mapped original keeps %d KiB resident beside its repacked copy", after)
	}
	// The x8 kernels equal the plain layout's bit for bit.
	for i := range plain {
		if math.Float32bits(plain[i]) != math.Float32bits(repacked[i]) {
			t.Fatalf("row %d: repacked %g, plain %g", i, repacked[i], plain[i])
		}
	}
}
