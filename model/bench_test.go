package model

import (
	"testing"

	"github.com/kernbench/kernbench/quant"
)

// benchDecode measures Decode of n-token batches on stories260K, as
// llama-bench's pp (n > 1, a fresh cache each time) and tg (n == 1, one
// token after a 64-token prompt) runs, reporting tokens per second. The
// tg run keeps one Batch, as a generation loop does; its allocations are
// those of the graphs rebuilt where n_kv crosses a padding boundary.
func benchDecode(b *testing.B, n int, flash bool) {
	m := loadModel(b, "stories260K.gguf")
	c := newCtx(b, m, flash, quant.F16, func(p *ContextParams) { p.NCtx, p.NBatch, p.NUBatch = 256, 128, 128 })
	toks := make([]int32, 64)
	for i := range toks {
		toks[i] = int32(3 + i*7%500)
	}
	var batch Batch
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n > 1 || c.KV().Used() >= 200 {
			b.StopTimer()
			c.KV().Clear()
			if n == 1 {
				if err := c.Decode(SimpleBatch(toks, 0, 0)); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		if n > 1 {
			batch.SetSimple(toks[:n], 0, 0)
		} else {
			batch.SetSimple(toks[i%len(toks):i%len(toks)+1], c.KV().SeqPosMax(0)+1, 0)
		}
		if err := c.Decode(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkPP64Flash(b *testing.B)  { benchDecode(b, 64, true) }
func BenchmarkPP64MatMul(b *testing.B) { benchDecode(b, 64, false) }
func BenchmarkTGFlash(b *testing.B)    { benchDecode(b, 1, true) }
func BenchmarkTGMatMul(b *testing.B)   { benchDecode(b, 1, false) }
