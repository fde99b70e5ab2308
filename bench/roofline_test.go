package bench

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestMeasureRoofline: every ceiling is measured, positive and sane, at
// each thread count asked for. Timings are short: the machine is shared,
// so only their sign and order of magnitude are checked.
func TestMeasureRoofline(t *testing.T) {
	m := DetectMachine()
	r, err := MeasureRoofline(m, RooflineOptions{Threads: []int{1, 2}, Time: 10 * time.Millisecond, CacheBytes: 64 << 10, L3Bytes: 4 << 20, DRAMBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.MachineID != m.ID || r.Date.IsZero() || r.Note == "" {
		t.Errorf("roofline header %+v", r)
	}
	if got := r.Threads(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("threads %v", got)
	}
	for _, p := range r.Peaks {
		if !(p.Best > 0) || !(p.Median > 0) || p.Median > p.Best || p.Samples < 3 || p.Kernel == "" || p.Unit == "" || math.IsInf(p.Best, 0) {
			t.Errorf("peak %+v", p)
		}
		if p.Kind == KindRead && (p.BufferBytes <= 0 || p.Level == "") {
			t.Errorf("read peak %+v", p)
		}
	}
	for _, threads := range []int{1, 2} {
		c, ok := r.Compute(threads)
		if !ok || c.Best < 0.1 || c.Best > 1e5 {
			t.Errorf("%d threads: f32 peak %+v", threads, c)
		}
		for _, lvl := range []string{LevelCache, LevelL3, LevelDRAM} {
			if bw, ok := r.Bandwidth(threads, lvl); !ok || bw.Best < 0.1 || bw.Best > 1e5 {
				t.Errorf("%d threads: %s bandwidth %+v", threads, lvl, bw)
			}
		}
	}
	// -l3-bytes -1 skips the L3 read.
	r2, err := MeasureRoofline(m, RooflineOptions{Threads: []int{1}, Time: time.Millisecond, CacheBytes: 64 << 10, L3Bytes: -1, DRAMBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r2.Bandwidth(1, LevelL3); ok {
		t.Error("an L3 read measured with L3Bytes -1")
	}

	// A CPU with AVX512_BF16 has a bf16 ceiling, and only such a CPU.
	_, hasBF16 := r.BF16(1)
	if want := len(asmKernels()) > 0 && slices.Contains(m.Features, "AVX512BF16"); hasBF16 != want {
		t.Errorf("bf16 peak measured: %v, want %v (features %v)", hasBF16, want, m.Features)
	}
	if _, err := MeasureRoofline(m, RooflineOptions{Threads: []int{0}}); err == nil {
		t.Error("0 threads accepted")
	}
}

func TestAttainable(t *testing.T) {
	r := Roofline{Peaks: []Peak{
		{Kind: KindF32FMA, Kernel: "go", Threads: 1, Best: 10},
		{Kind: KindF32FMA, Kernel: "asm", Threads: 1, Best: 100},
		{Kind: KindRead, Level: LevelCache, Threads: 1, Best: 200},
		{Kind: KindRead, Level: LevelDRAM, Threads: 1, Best: 20},
	}}
	tests := []struct {
		intensity  float64
		bytes      int64
		wantGFLOPS float64
		wantRoof   string
	}{
		{1, 1 << 30, 20, LevelDRAM},     // memory bound from DRAM
		{1, 1 << 10, 100, "compute"},    // in cache, 1 FLOP/B x 200 GB/s above the peak
		{0.25, 1 << 10, 50, LevelCache}, // in cache, bandwidth bound
		{50, 1 << 30, 100, "compute"},
	}
	for _, tt := range tests {
		g, roof, ok := r.Attainable(1, KindF32FMA, tt.intensity, tt.bytes, 1<<20)
		if !ok || g != tt.wantGFLOPS || roof != tt.wantRoof {
			t.Errorf("Attainable(I=%v, %d bytes) = %v %s %v, want %v %s", tt.intensity, tt.bytes, g, roof, ok, tt.wantGFLOPS, tt.wantRoof)
		}
	}
	if _, _, ok := r.Attainable(2, KindF32FMA, 1, 1, 1); ok {
		t.Error("a thread count the roofline lacks")
	}
	c, _ := r.Compute(1)
	bw, _ := r.Bandwidth(1, LevelDRAM)

	// With an L3 read, a point larger than the L2s (twice the in-cache
	// buffer) and within the last-level cache is judged by it.
	r3 := Roofline{Peaks: []Peak{
		{Kind: KindF32FMA, Kernel: "asm", Threads: 1, Best: 100},
		{Kind: KindRead, Level: LevelCache, Threads: 1, Best: 200, BufferBytes: 256 << 10}, // L2s of 512 KiB
		{Kind: KindRead, Level: LevelL3, Threads: 1, Best: 50, BufferBytes: 4 << 20},
		{Kind: KindRead, Level: LevelDRAM, Threads: 1, Best: 20},
	}}
	for _, tt := range []struct {
		bytes int64
		want  string
		g     float64
	}{
		{256 << 10, LevelCache, 50}, {512 << 10, LevelCache, 50}, {(512 << 10) + 1, LevelL3, 12.5}, {8 << 20, LevelL3, 12.5}, {(8 << 20) + 1, LevelDRAM, 5},
	} {
		if g, roof, _ := r3.Attainable(1, KindF32FMA, 0.25, tt.bytes, 8<<20); roof != tt.want || g != tt.g {
			t.Errorf("%d bytes beside an L3 read: %v %s, want %v %s", tt.bytes, g, roof, tt.g, tt.want)
		}
	}
	if _, roof, _ := r.Attainable(1, KindF32FMA, 0.25, 4<<20, 8<<20); roof != LevelCache {
		t.Errorf("4 MiB without an L3 read: %s", roof)
	}
	if c.Kernel != "asm" || Ridge(c, bw) != 5 {
		t.Errorf("best kernel %q, ridge %v", c.Kernel, Ridge(c, bw))
	}
	rec := Record{Op: "MUL_MAT", Type: "f16", Flops: 100, Bytes: 100, Intensity: 1, Threads: 1}
	rec.Median = 1e-8 // 10 GFLOP/s
	Derive(&rec, &r, 1<<20)
	if rec.GFLOPS != 10 || rec.GBPS != 10 || rec.RoofGFLOPS != 100 || rec.RooflinePct != 10 || rec.Roof != "compute" {
		t.Errorf("derived %+v", rec)
	}

	// A quantized matrix product is judged against the int8 peak, once
	// the roofline has one.
	q := rec
	q.Type, q.Intensity = "q4_K", 3 // 3 OP/B x 200 GB/s in cache: above both compute peaks
	Derive(&q, &r, 1<<20)
	if q.Roof != "compute" || q.RoofGFLOPS != 100 {
		t.Errorf("q4_K without an int8 peak: %s %v", q.Roof, q.RoofGFLOPS)
	}
	r.Peaks = append(r.Peaks, Peak{Kind: KindInt8Dot, Threads: 1, Best: 400})
	Derive(&q, &r, 1<<20)
	if q.Roof != "int8" || q.RoofGFLOPS != 400 {
		t.Errorf("q4_K with an int8 peak: %s %v", q.Roof, q.RoofGFLOPS)
	}
	if g, roof, _ := r.Attainable(1, KindInt8Dot, 50, 1<<30, 1<<20); roof != "int8" || g != 400 {
		t.Errorf("int8 bound: %v %s", g, roof)
	}
	rec2 := rec
	Derive(&rec2, &r, 1<<20)
	if rec2.Roof != "compute" {
		t.Errorf("f16 judged by %s", rec2.Roof)
	}

	// A bf16 product is judged against the bf16 peak once the roofline
	// has one, and against the f32 FMA peak before.
	b := rec
	b.Type, b.Intensity = "bf16", 3
	Derive(&b, &r, 1<<20)
	if b.Roof != "compute" || b.RoofGFLOPS != 100 {
		t.Errorf("bf16 without a bf16 peak: %s %v", b.Roof, b.RoofGFLOPS)
	}
	r.Peaks = append(r.Peaks, Peak{Kind: KindBF16Dot, Threads: 1, Best: 180})
	Derive(&b, &r, 1<<20)
	if b.Roof != "bf16" || b.RoofGFLOPS != 180 || b.RooflinePct != 100*b.GFLOPS/180 {
		t.Errorf("bf16 with a bf16 peak: %s %v %v", b.Roof, b.RoofGFLOPS, b.RooflinePct)
	}
	if g, roof, _ := r.Attainable(1, KindBF16Dot, 0.5, 1<<30, 1<<20); roof != LevelDRAM || g != 10 {
		t.Errorf("bf16 product bound by DRAM: %v %s", g, roof)
	}
	Derive(&rec2, &r, 1<<20)
	if rec2.Roof != "compute" {
		t.Errorf("f16 judged by %s beside a bf16 peak", rec2.Roof)
	}
}

func TestComputeKind(t *testing.T) {
	for _, tt := range []struct{ op, typ, want string }{
		{"MUL_MAT", "q4_0", KindInt8Dot}, {"MUL_MAT", "q4_K", KindInt8Dot}, {"MUL_MAT_ID", "q6_K", KindInt8Dot},
		{"MUL_MAT", "q8_0", KindInt8Dot}, {"MUL_MAT", "q4_1", KindInt8Dot},
		{"MUL_MAT", "f32", KindF32FMA}, {"MUL_MAT", "f16", KindF32FMA}, {"MUL_MAT", "bf16", KindBF16Dot}, {"MUL_MAT_ID", "bf16", KindBF16Dot},
		{"GET_ROWS", "bf16", KindF32FMA},
		{"FLASH_ATTN_EXT", "q8_0", KindF32FMA}, {"MUL_MAT", "bogus", KindF32FMA},
	} {
		if got := ComputeKind(tt.op, tt.typ); got != tt.want {
			t.Errorf("ComputeKind(%s, %s) = %s, want %s", tt.op, tt.typ, got, tt.want)
		}
	}
}
