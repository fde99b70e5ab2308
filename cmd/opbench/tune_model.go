package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernbench/kernbench/model"
	"github.com/kernbench/kernbench/ops/cpu"
	"github.com/kernbench/kernbench/ops/tuning"
	"github.com/kernbench/kernbench/quant"
)

// The decode parameters (tuneSpec.decode) are measured with -model on
// the models' token generation instead of their op points, whose single
// matrix streams differently from a model's many (one matrix larger than
// the L3 favoured prefetching 16 KiB ahead on a Zen 5, where the models
// decoded fastest at 8 KiB).

// tuneWarmTokens are decoded before the timed ones: the first builds the
// repacked weight copies and the graph.
const tuneWarmTokens = 8

// decodeTuner times token generation on one or more models for each
// candidate and checks each candidate's logits against the defaults' bit
// for bit (a decode parameter changes where work runs, never what it
// computes).
type decodeTuner struct {
	models  []*decodeModel
	tokens  int
	threads int
}

// decodeModel is one model of a decodeTuner.
type decodeModel struct {
	m    *model.Model
	name string
	want []float32 // the defaults' last logits
}

// newDecodeTuner loads the models at paths and computes their reference
// logits with every parameter at its default.
func newDecodeTuner(paths []string, tokens, threads int) (*decodeTuner, error) {
	d := &decodeTuner{tokens: tokens, threads: threads}
	for _, path := range paths {
		m, err := model.Load(path)
		if err != nil {
			d.Close()
			return nil, err
		}
		dm := &decodeModel{m: m, name: filepath.Base(path)}
		d.models = append(d.models, dm)
		if _, dm.want, err = d.decode(dm, tuning.Values{}); err != nil {
			d.Close()
			return nil, fmt.Errorf("-model %s: decoding with the defaults: %w", path, err)
		}
	}
	return d, nil
}

// Close closes the models.
func (d *decodeTuner) Close() error {
	var first error
	for _, dm := range d.models {
		if err := dm.m.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// point describes what is measured.
func (d *decodeTuner) point() string {
	names := make([]string, len(d.models))
	for i, dm := range d.models {
		names[i] = dm.name
	}
	what := "decode of " + strings.Join(names, ", ")
	if len(names) > 1 {
		what = "geomean of the time per token of " + what
	}
	return fmt.Sprintf("%s (%d tokens after %d)", what, d.tokens, tuneWarmTokens)
}

// decode opens a CPU backend with values, generates the warm-up tokens
// and then d.tokens timed ones (a fixed sequence), and returns the time
// per timed token and the last token's logits.
func (d *decodeTuner) decode(dm *decodeModel, values tuning.Values) (perToken float64, logits []float32, err error) {
	be, err := cpu.NewWithOptions(cpu.Options{Threads: d.threads, Tuned: values})
	if err != nil {
		return 0, nil, err
	}
	defer be.Close()
	n := tuneWarmTokens + d.tokens
	ctx, err := dm.m.NewContext(be, model.ContextParams{NCtx: n + 16, NBatch: 1, KVType: quant.F16, FlashAttn: true})
	if err != nil {
		return 0, nil, err
	}
	defer ctx.Close()
	nv := int32(dm.m.Hparams.NVocab)
	var b model.Batch
	one := []int32{0}
	var start time.Time
	for i := range n {
		if i == tuneWarmTokens {
			start = time.Now()
		}
		one[0] = int32((int64(i)*7919 + 1) % int64(nv))
		b.SetSimple(one, int32(i), 0)
		if err := ctx.DecodeContext(context.Background(), b); err != nil {
			return 0, nil, err
		}
	}
	perToken = time.Since(start).Seconds() / float64(d.tokens)
	return perToken, append([]float32(nil), ctx.Logits(-1)...), nil
}

// measure is tuning.Search's cost for p = v: the time per token (the
// geometric mean over the models), after checking the logits.
func (d *decodeTuner) measure(p tuning.Param, v int) (float64, error) {
	logSum := 0.0
	for _, dm := range d.models {
		t, got, err := d.decode(dm, tuning.Values{p.Name: v})
		if err != nil {
			return 0, fmt.Errorf("%s = %d on %s: %w", p.Name, v, dm.name, err)
		}
		if len(got) != len(dm.want) {
			return 0, fmt.Errorf("%s = %d on %s: %d logits, the defaults gave %d", p.Name, v, dm.name, len(got), len(dm.want))
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(dm.want[i]) {
				return 0, fmt.Errorf("%s = %d on %s: logit %d is %g, the defaults gave %g", p.Name, v, dm.name, i, got[i], dm.want[i])
			}
		}
		logSum += math.Log(t)
	}
	return math.Exp(logSum / float64(len(d.models))), nil
}
