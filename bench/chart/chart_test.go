package chart

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernbench/kernbench/bench"
)

// testSet returns a set of MUL_MAT points over n for two types and one
// RMS_NORM point, with a roofline.
func testSet() *bench.Set {
	s := &bench.Set{Schema: bench.Schema,
		Machine:    bench.Machine{ID: "test-2c", CPU: "Test CPU", PhysicalCores: 2},
		Provenance: bench.Provenance{Commit: "abcdef0123456789", Date: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		Roofline: &bench.Roofline{Peaks: []bench.Peak{
			{Kind: bench.KindF32FMA, Threads: 2, Best: 200}, {Kind: bench.KindInt8Dot, Threads: 2, Best: 400},
			{Kind: bench.KindRead, Level: bench.LevelCache, Threads: 2, Best: 150},
			{Kind: bench.KindRead, Level: bench.LevelDRAM, Threads: 2, Best: 15},
		}},
	}
	for _, typ := range []string{"q4_0", "q8_0"} {
		for _, n := range []int64{1, 8, 64, 512} {
			r := bench.Record{Op: "MUL_MAT", Type: typ, Dims: map[string]int64{"m": 4096, "n": n, "k": 4096}, Backend: "cpu-avx2", Threads: 2,
				Flops: 2 * 4096 * 4096 * n, Bytes: 9e6 + 32768*n}
			r.Samples = []float64{1e-3 * float64(n+4) / 5}
			r.Stats = bench.Summarize(r.Samples)
			r.Intensity = float64(r.Flops) / float64(r.Bytes)
			bench.Derive(&r, s.Roofline, 32<<20)
			s.Records = append(s.Records, r)
		}
	}
	r := bench.Record{Op: "RMS_NORM", Type: "f32", Dims: map[string]int64{"k": 4096, "n": 1}, Backend: "cpu-avx2", Threads: 2, Flops: 12288, Bytes: 32768}
	r.Samples = []float64{2e-6}
	r.Stats = bench.Summarize(r.Samples)
	r.Intensity = 12288.0 / 32768
	bench.Derive(&r, s.Roofline, 32<<20)
	s.Records = append(s.Records, r)
	return s
}

// checkPNG decodes a PNG and checks its size and that it is not blank.
func checkPNG(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bounds := img.Bounds()
	if bounds.Dx() < 600 || bounds.Dy() < 400 {
		t.Errorf("image %v too small", bounds)
	}
	dark := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r+g+b < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 500 {
		t.Errorf("image nearly blank: %d dark pixels sampled", dark)
	}
}

func TestThroughput(t *testing.T) {
	figs, err := Throughput(testSet(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Name != "mul_mat" || figs[1].Name != "rms_norm" {
		t.Fatalf("figures %v", figs)
	}
	title := figs[0].Title()
	for _, want := range []string{"MUL_MAT throughput (GFLOP/s, median) vs n", "Test CPU (2 cores)", "abcdef0123", "2026-03-04"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q lacks %q", title, want)
		}
	}
	if !strings.Contains(figs[1].Title(), "GB/s") {
		t.Errorf("rms_norm title %q: not by bandwidth", figs[1].Title())
	}
	var b bytes.Buffer
	if err := figs[0].Write(&b, "png"); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	b.Reset()
	if err := figs[0].Write(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<svg") || !strings.Contains(b.String(), "q4_0 cpu-avx2 2t") {
		t.Error("SVG lacks the legend")
	}
	if err := figs[0].Write(&b, "gif"); err == nil {
		t.Error("gif accepted")
	}

	if figs, err := Throughput(testSet(), Options{X: "k", Y: MetricGBPS}); err != nil || len(figs) != 2 || !strings.Contains(figs[0].Title(), "GB/s") {
		t.Errorf("-x k -y gbps: %v", err)
	}
	if _, err := Throughput(testSet(), Options{X: "kv"}); err == nil {
		t.Error("a size no op has")
	}
	if _, err := Throughput(testSet(), Options{Y: "furlongs"}); err == nil {
		t.Error("unknown metric")
	}
	if _, err := Throughput(&bench.Set{}, Options{}); err == nil {
		t.Error("empty set")
	}
}

func TestRooflineChart(t *testing.T) {
	f, err := Roofline(testSet(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Title(), "roofline: attained GFLOP/s vs arithmetic intensity") {
		t.Errorf("title %q", f.Title())
	}
	var b bytes.Buffer
	if err := f.Write(&b, "png"); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	b.Reset()
	if err := f.Write(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 threads: f32 FMA peak 200 GFLOP/s, DRAM read 15.0 GB/s", "int8 dot peak 400 GOP/s", "MUL_MAT q8_0 cpu-avx2 2t"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	s := testSet()
	s.Roofline = nil
	if f, err := Roofline(s, Options{}); err != nil || !strings.Contains(f.Title(), "no roofline measured") {
		t.Errorf("without roofline: %v", err)
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	figs, err := All(testSet(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := WriteFiles(figs, dir, "base")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"base-mul_mat.png", "base-mul_mat.svg", "base-rms_norm.png", "base-rms_norm.svg", "base-roofline.png", "base-roofline.svg"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %v", paths)
	}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Errorf("path %s, want %s", p, want[i])
		}
		st, err := os.Stat(p)
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v, %d bytes", p, err, st.Size())
		}
	}
	if _, err := WriteFiles(figs, filepath.Join(dir, "missing"), "x"); err == nil {
		t.Error("write into a missing directory")
	}
}

func TestEmulatedRecordsAreNotPlotted(t *testing.T) {
	s := &bench.Set{Records: []bench.Record{{Op: "MUL_MAT", Type: "q4_0", Shape: "m4096_n1_k4096", Dims: map[string]int64{"m": 4096, "n": 1, "k": 4096},
		Backend: "cuda-emu", Threads: 1, Emulated: true, Flops: 1 << 25, Bytes: 1 << 24, Intensity: 2,
		Timing: bench.Timing{Samples: []float64{1, 1.1, 0.9}, Stats: bench.Summarize([]float64{1, 1.1, 0.9})}}}}
	if _, err := Throughput(s, Options{}); err == nil || !strings.Contains(err.Error(), "emulator") {
		t.Errorf("Throughput of an emulated record: %v", err)
	}
	if _, err := Roofline(s, Options{}); err == nil {
		t.Error("Roofline of an emulated record: no error")
	}
}
