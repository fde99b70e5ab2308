// Package testmodel runs the shared test models for the tests of graphs
// and its subpackages: it finds ../shared/testdata above the working
// directory and decodes a prompt through package model.
package testmodel

import (
	"testing"

	"github.com/kernbench/kernbench/graphs"
	shared "github.com/kernbench/kernbench/internal/shareddata"
	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops"
	"github.com/kernbench/kernbench/tokenizer"
)

// Path returns the path of a file in shared/testdata, found by walking up
// from the working directory, or skips the test when there is none.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	return shared.Path(tb, name)
}

// A Run is a context that has decoded a prompt, with the records of every
// step of its graph.
type Run struct {
	Model   *model.Model
	Context *model.Context
	Tokens  []int32
	Records []graphs.Record
}

// Prompt loads the test model name, decodes text (with BOS) as one batch
// on b with the context parameters mod makes of the defaults (64 cells,
// the flash attention path), and returns the run. Model and context close
// when the test ends.
func Prompt(tb testing.TB, name, text string, b ops.Backend, mod func(*model.ContextParams)) *Run {
	tb.Helper()
	path := Path(tb, name)
	m, err := model.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	tok, err := tokenizer.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	ids, err := tok.Encode(text, true)
	if err != nil {
		tb.Fatal(err)
	}
	p := model.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUBatch = 64, 64, 64
	if mod != nil {
		mod(&p)
	}
	c, err := m.NewContext(b, p)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	r := &Run{Model: m, Context: c, Tokens: ids}
	c.SetRecorder(func(rec graphs.Record) { r.Records = append(r.Records, rec) })
	if err := c.Decode(model.SimpleBatch(ids, 0, 0)); err != nil {
		tb.Fatal(err)
	}
	return r
}
