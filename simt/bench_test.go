package simt

import "testing"

// BenchmarkEmulator measures the emulator itself (not a GPU): a block
// reduction over 1 Mi floats, 256 blocks of 256 threads, each thread
// crossing 9 barriers. It reports emulated threads per second and fiber
// switches per second, in both build modes, so one can tell how large a
// validation case the emulator runs in a test's time.
func BenchmarkEmulator(b *testing.B) {
	for _, m := range []Mode{Fast, Checked} {
		b.Run(m.String(), func(b *testing.B) {
			k := kernel(b, load(b, "conformance.cu", m), "block_sum")
			const n, blocks, threads = 1 << 20, 256, 256
			x := alloc(b, 4*n)
			out := alloc(b, 4*blocks)
			var st Stats
			for b.Loop() {
				var err error
				st, err = k.Launch(Launch{Grid: d1(blocks), Block: d1(threads), Args: []any{x, out, n}})
				if err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(blocks*threads/sec/1e6, "Mthreads/s")
			b.ReportMetric(float64(st.Switches)/sec/1e6, "Mswitches/s")
			b.ReportMetric(float64(n)*4/sec/1e6, "MB/s")
		})
	}
}
