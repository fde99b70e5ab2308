package main

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kernbench/kernbench/imatrix"
	"github.com/kernbench/kernbench/internal/cli"
	"github.com/kernbench/kernbench/ops"
)

// imatrixRun collects an importance matrix during a perplexity run
// (-imatrix-out): the evaluator's graphs run stepwise with a node hook
// that hands each node, just computed, to an imatrix.Collector, while its
// activations are still in place; every position asks for logits, as in
// llama-imatrix, so the last layer's products see every row.
type imatrixRun struct {
	c    *config
	col  *imatrix.Collector
	mu   sync.Mutex
	fail error // the first error of the hook
}

// startImatrix sets ev up to collect an importance matrix for c.
func startImatrix(ev *evaluator, c *config) *imatrixRun {
	im := &imatrixRun{c: c, col: imatrix.NewCollector(c.nCtx)}
	im.col.Output = c.imatOut
	im.col.Datasets = []string{c.textPath}
	ev.allLogits = true
	ev.ctx.SetStepwise(true)
	ev.ctx.SetNodeHook(func(n *ops.Tensor, _, _ time.Time) {
		if err := im.col.Observe(n); err != nil {
			im.mu.Lock()
			if im.fail == nil {
				im.fail = err
			}
			im.mu.Unlock()
		}
	})
	return im
}

// err returns the first error collecting met (nil for a nil run).
func (im *imatrixRun) err() error {
	if im == nil {
		return nil
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.fail
}

// write writes the matrix to -imatrix-out in -imatrix-format, replacing
// the file only when it is whole.
func (im *imatrixRun) write(log io.Writer) error {
	if err := im.err(); err != nil {
		return err
	}
	m := im.col.Matrix()
	f, err := cli.CreateAtomic(im.c.imatrix)
	if err != nil {
		return fmt.Errorf("creating the importance matrix file: %w", err)
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	if im.c.imatFmt == "dat" {
		err = m.WriteLegacy(w)
	} else {
		err = m.WriteGGUF(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", im.c.imatrix, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(log, "perplexity: saved the importance matrix of %d tensors over %d chunks of %d to %s (%s)\n",
		len(m.Entries), m.ChunkCount, m.ChunkSize, im.c.imatrix, im.c.imatFmt)
	return nil
}
