package llamabench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/kernbench/kernbench/bench"
)

// A Run is one program's run on one model in one round: its results, or
// why there are none.
type Run struct {
	Model   string
	Round   int
	Side    string
	Results []Result
	Err     error
}

// Pair runs a and b on every model for rounds rounds, alternating: in
// even rounds a goes first, in odd ones b, and each model starts where
// the last left off, so that neither side always runs on a machine the
// other has just warmed or heated. A failed run is kept with its error
// and the rounds go on; ctx's end stops them (the runs so far are
// returned). progress, when not nil, is told of each run before it
// starts.
func Pair(ctx context.Context, models []string, a, b Side, rounds int, p Params, progress func(model string, round int, side string)) []Run {
	var runs []Run
	first := 0
	for _, model := range models {
		for round := range rounds {
			order := []Side{a, b}
			if (first+round)%2 == 1 {
				order = []Side{b, a}
			}
			for _, s := range order {
				if ctx.Err() != nil {
					return runs
				}
				if progress != nil {
					progress(model, round, s.Name())
				}
				res, err := s.Bench(ctx, model, p)
				runs = append(runs, Run{Model: model, Round: round, Side: s.Name(), Results: res, Err: err})
			}
		}
		first += rounds
	}
	return runs
}

// Records turns runs into one bench.Record per model, test and side, in
// the order first seen: op is the test's name ("pp512", "tg128"), type
// the model's description as side typeSide reports it (the two programs
// describe a model differently, and a record's type is part of the key
// that pairs the sides), shape the model's file name, backend the side.
// The samples are the seconds of every repetition of every round, in the
// order run; flops is 0, and for tg tests bytes is the bytes a decoded
// token reads times the tokens, so that gbps is the weight bytes a second
// the program streamed: decodeBytes[model] where it is known (the caller
// reads it from the file: only the used experts of a mixture, one row of
// the embeddings), else the model's size (every weight once per token,
// near enough for dense models). A side whose run failed in a round has that round's
// error in each of the model's records (beside its other rounds'
// samples); a test that a side never reported has a record with
// validation "error" saying so.
func Records(runs []Run, threads int, typeSide string, decodeBytes map[string]int64) []bench.Record {
	type key struct{ model, test, side string }
	var (
		sides  []string
		models []string
		tests  = map[string][]string{} // model -> test names, as first seen
		desc   = map[string]string{}   // model -> its description
	)
	for _, r := range runs {
		if !slices.Contains(sides, r.Side) {
			sides = append(sides, r.Side)
		}
		if !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
		for _, res := range r.Results {
			if !slices.Contains(tests[r.Model], res.Name()) {
				tests[r.Model] = append(tests[r.Model], res.Name())
			}
			if desc[r.Model] == "" || (r.Side == typeSide && res.ModelType != "") {
				desc[r.Model] = res.ModelType
			}
		}
	}
	recs := map[key]*bench.Record{}
	errs := map[key][]string{}
	var order []key
	for _, model := range models {
		names := tests[model]
		if len(names) == 0 {
			names = []string{"run"} // no side reported any test
		}
		for _, t := range names {
			for _, s := range sides {
				k := key{model, t, s}
				order = append(order, k)
				recs[k] = &bench.Record{
					Op: t, Type: desc[model], Shape: filepath.Base(model), Backend: s, Threads: threads,
					Validation: bench.ValidExternal,
					Timing:     bench.Timing{Clock: "wall clock per repetition, as the program reports it (samples_ns)", WarmupRuns: 1, RunsPerSample: 1},
				}
			}
		}
	}
	for _, r := range runs {
		if r.Err != nil {
			for _, k := range order {
				if k.model == r.Model && k.side == r.Side {
					errs[k] = append(errs[k], fmt.Sprintf("round %d: %v", r.Round+1, r.Err))
				}
			}
			continue
		}
		for _, res := range r.Results {
			rec := recs[key{r.Model, res.Name(), r.Side}]
			for _, ns := range res.SamplesNS {
				rec.Samples = append(rec.Samples, float64(ns)*1e-9)
			}
			if res.NGen > 0 && res.NPrompt == 0 {
				perToken := res.ModelSize
				if b := decodeBytes[r.Model]; b > 0 {
					perToken = b
				}
				rec.Bytes = perToken * int64(res.NGen)
			}
			rec.Dims = map[string]int64{"p": int64(res.NPrompt), "n": int64(res.NGen)}
		}
	}
	out := make([]bench.Record, 0, len(order))
	for _, k := range order {
		r := *recs[k]
		r.Stats = bench.Summarize(r.Samples)
		if r.Median > 0 && r.Bytes > 0 {
			r.GBPS = float64(r.Bytes) / r.Median / 1e9
		}
		e := errs[k]
		if len(r.Samples) == 0 && len(e) == 0 {
			e = []string{k.side + " reported no " + k.test + " test"}
		}
		if len(e) > 0 {
			r.Error = joinErrs(e)
		}
		if len(r.Samples) == 0 {
			r.Validation = bench.ValidError
		}
		out = append(out, r)
	}
	return out
}

func joinErrs(errs []string) string {
	s := errs[0]
	for _, e := range errs[1:] {
		s += "; " + e
	}
	if len(errs) > 1 {
		s = strconv.Itoa(len(errs)) + " failed runs: " + s
	}
	return s
}
